/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include "model-percpu.h"

/*
 * Measure what one memory cgroup costs in percpu memory on this host
 * (pcptunectl plan --measure): create `count` empty memcgs in a parent named
 * pcptune-measure.<pid> at the top of the memory hierarchy, read the percpu
 * allocator's state before and after, remove them.  Empty memcgs are freed at
 * once on removal (nothing pins them), so this leaves nothing behind.
 * With percpu_stats readable the result is exact (allocated bytes per unit:
 * chunks x unit_size minus the chunks' free bytes); otherwise it comes from
 * meminfo Percpu, which moves in whole pages per unit (about +-4 KiB x units /
 * count).  Bytes per memcg in *ret_bytes, how in *ret_how (malloc'd).
 * Root only; root must be "/".  0 or -errno.
 */
int percpu_measure_memcg_cost(unsigned count, double *ret_bytes, char **ret_how);

/*
 * The result of `plan --measure`, kept for status, plan and pcptuned in
 * <state_dir>/memcg-cost.json (under /run by default: a reboot, maybe into
 * another kernel, forgets it).  The file is input: the parser checks every
 * field (kernel release of printable characters, 1..8192 CPUs, 1..1024 nodes,
 * 1 B..64 KiB per CPU, a printable `how`) and percpu_memcg_cost() uses it only
 * for the same kernel release, CPU and node count.
 */
#define MEMCG_COST_FILE "memcg-cost.json"

/* Pure parser.  0, -EINVAL (not JSON, a field missing, mistyped or out of range). */
int memcg_cost_measurement_parse(const char *buf, size_t len, MemcgCostMeasurement *ret);

/* Load <state_dir>/memcg-cost.json: a regular file, not a symlink.  0, -ENOENT, -EINVAL, -errno. */
int memcg_cost_measurement_load(const char *state_dir, MemcgCostMeasurement *ret);

/* Write it atomically (mode 0644), creating state_dir.  0 or -errno. */
int memcg_cost_measurement_save(const char *state_dir, const MemcgCostMeasurement *m);
