/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "util.h"

/*
 * Process exits from the proc connector (NETLINK_CONNECTOR, CN_IDX_PROC;
 * drivers/connector/cn_proc.c), through libnl-3, on the event loop.  Every exit on the host
 * wakes the daemon, so the socket is open only while a rule uses
 * proc.exit_rate.  The connector serves only the initial network, user and
 * pid namespaces, and on 6.1 needs CAP_NET_ADMIN; elsewhere opening fails
 * (or the kernel silently ignores us: no event ever arrives).
 *
 * Kernels 6.6+ take a filter (struct proc_input): only exit events are sent.
 * Before, every fork/exec/exit... arrives and non-exits are dropped here.
 */

typedef struct ProcExitSource ProcExitSource;

/*
 * Open, subscribe and put the socket on the loop.  kernel selects the
 * subscription message (filter on 6.6+).  on_exits (may be NULL) runs on the
 * loop after each batch of received exits.  0 or -errno (-EXDEV outside the
 * initial user and pid namespaces, -EPERM without CAP_NET_ADMIN on 6.1,
 * -EPROTONOSUPPORT without CONFIG_PROC_EVENTS...).
 */
int proc_exit_source_new(sd_event *e, const KernelVersion *kernel, void (*on_exits)(void *userdata), void *userdata,
                         ProcExitSource **ret);

/* Are we in the initial user and pid namespaces (the only ones the connector serves)? */
bool proc_exit_in_initial_namespaces(void);

/* Unsubscribe, close.  Accepts NULL. */
ProcExitSource *proc_exit_source_free(ProcExitSource *s);

/*
 * Exits of thread-group leaders (pid == tgid) per second over the last
 * second (ten 100 ms buckets), at time now (CLOCK_MONOTONIC µs).
 */
double proc_exit_rate(ProcExitSource *s, usec_t now);

/* Monotonic microseconds of the last counted exit (0 if none). */
usec_t proc_exit_last(const ProcExitSource *s);

typedef struct ProcExitCounters {
        uint64_t exits;          /* thread-group exits counted */
        uint64_t thread_exits;   /* exits of other threads (ignored for the rate) */
        uint64_t other_events;   /* fork/exec/... (kernels without the filter) */
        uint64_t overruns;       /* ENOBUFS: the socket buffer overflowed, events were lost */
        uint64_t wakeups;        /* times the socket woke the loop */
        bool filtered;           /* the kernel filters to exit events */
        bool acked;              /* the kernel answered our subscription (not sent on 6.6+ with the filter) */
} ProcExitCounters;

void proc_exit_counters(const ProcExitSource *s, ProcExitCounters *ret);

/* Pure parser of one connector datagram payload (cn_msg + proc_event), for tests and the fuzzer.
 * Returns 1 for a thread-group exit, 2 for a thread exit, 3 for the answer to a subscription (ack),
 * 0 for another event, -EINVAL if malformed. */
int proc_exit_parse(const void *buf, size_t len);
