/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * /proc/meminfo.  All sizes in KiB as the kernel prints them ("kB" is 1024).
 * A field the kernel does not print is marked absent (has_* false), never 0:
 * Percpu appeared in 4.7, MemAvailable in 3.14.
 */
typedef struct Meminfo {
        uint64_t mem_total_kib;      /* required */
        uint64_t mem_free_kib;       /* required */
        uint64_t mem_available_kib;
        uint64_t cached_kib;
        uint64_t slab_kib;
        uint64_t sreclaimable_kib;
        uint64_t sunreclaim_kib;
        uint64_t percpu_kib;
        uint64_t swap_total_kib;     /* SwapTotal (CONFIG_SWAP) */
        uint64_t swap_free_kib;
        bool has_mem_available;
        bool has_cached;
        bool has_slab;
        bool has_sreclaimable;
        bool has_sunreclaim;
        bool has_percpu;
        bool has_swap;               /* SwapTotal printed */
        bool has_swap_free;
} Meminfo;

/* Pure parser of the text of /proc/meminfo.  Keys matched at line start.
 * Returns 0, or -EINVAL when MemTotal/MemFree are missing, a tracked key is
 * repeated or a tracked value is malformed (digits then "kB"). */
int meminfo_parse(const char *buf, size_t len, Meminfo *ret);

/* Read <root>/proc/meminfo and parse it.  0 or -errno (-ENOENT, -EINVAL...). */
int meminfo_read(const char *root, Meminfo *ret);
