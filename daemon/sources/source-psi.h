/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/*
 * /proc/pressure/memory (CONFIG_PSI; absent or EOPNOTSUPP when disabled):
 *   some avg10=0.00 avg60=0.00 avg300=0.00 total=0
 *   full avg10=0.00 avg60=0.00 avg300=0.00 total=0
 * avg* are percentages of wall time, total is in microseconds.
 */
typedef struct PsiLine {
        double avg10, avg60, avg300;   /* percent */
        uint64_t total_usec;
} PsiLine;

typedef struct Psi {
        PsiLine some;
        PsiLine full;
        bool has_full;                 /* "full" is absent for cpu before 5.13; memory always has it */
} Psi;

/* Pure parser.  "some" is required, "full" optional; each line needs avg10, avg60,
 * avg300 (decimal percentages) and total (µs), once each.  0 or -EINVAL (missing,
 * repeated or malformed field, unknown line). */
int psi_parse(const char *buf, size_t len, Psi *ret);

/* Read <root>/proc/pressure/memory.  0, -ENOENT (no PSI), -EOPNOTSUPP (psi=0) or -errno. */
int psi_read(const char *root, Psi *ret);

/*
 * A PSI trigger on <root>/proc/pressure/memory (Documentation/accounting/psi.rst, kernel/sched/psi.c psi_trigger_create()): write
 * "some|full <threshold_us> <window_us>" (NUL included) and poll the fd for
 * POLLPRI; the kernel signals at most once per window when the stall time in
 * the window exceeds the threshold.  Rules per version: 6.1 needs
 * CAP_SYS_RESOURCE and 500 ms <= window <= 10 s; 6.5+ lets anyone create a
 * trigger whose window is a multiple of 2 s.  Returns the fd (O_NONBLOCK,
 * O_CLOEXEC) in *ret_fd, or -errno: -ENOENT (no PSI), -EOPNOTSUPP (psi=0),
 * -EPERM, -EINVAL (window/threshold refused).
 */
int psi_trigger_open(const char *root, bool full, usec_t threshold_usec, usec_t window_usec, int *ret_fd);
