/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * anon-hold MIB: map MIB MiB of anonymous memory, write every page once
 * (distinct bytes, so zero-page and same-filled tricks do not apply), print
 * "ready", then sleep until killed: idle anonymous memory of a live
 * container, what a reclaim that may swap takes first.  Static, for the
 * churn-vm guest (tests/bench/churn-vm).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv) {
        long mib = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
        long page = sysconf(_SC_PAGESIZE);
        size_t len = (size_t) mib << 20;
        char *p;

        if (mib <= 0 || mib > 65536) {
                fprintf(stderr, "usage: anon-hold MIB\n");
                return 2;
        }
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
                perror("mmap");
                return 1;
        }
        for (size_t k = 0; k < len; k += (size_t) page)
                for (long b = 0; b < page; b += 64)
                        p[k + (size_t) b] = (char) (k / (size_t) page * 31 + (size_t) b);
        printf("ready\n");
        fflush(stdout);
        for (;;)
                pause();
}
