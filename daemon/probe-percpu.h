/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

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
