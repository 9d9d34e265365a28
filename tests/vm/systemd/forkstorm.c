/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * forkstorm COUNT SECONDS: COUNT short processes (fork, _exit at once), their
 * starts spread evenly over SECONDS, for the exit-storm check of
 * tests/vm/systemd/guest.sh.  Children are reaped by the kernel (SIGCHLD
 * ignored), so their exits run in parallel with the next forks.  Prints
 * "forked N in S s (R/s)"; exits 1 if a fork failed.
 * Shell loops are too slow for this under TCG (~100-400 forks/s), and their
 * rate depends on the host's load; this paces to the rate asked for.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
        long count, done = 0;
        double secs, t0, t;
        int rc = 0;

        if (argc != 3 || (count = strtol(argv[1], NULL, 10)) <= 0 || (secs = strtod(argv[2], NULL)) < 0) {
                fprintf(stderr, "usage: forkstorm COUNT SECONDS\n");
                return 2;
        }
        signal(SIGCHLD, SIG_IGN);
        t0 = now_s();
        for (long i = 0; i < count; i++) {
                double due = secs * (double) i / (double) count, late = now_s() - t0;
                if (late < due) {
                        double d = due - late;
                        struct timespec ts = { (time_t) d, (long) ((d - (double) (time_t) d) * 1e9) };
                        nanosleep(&ts, NULL);
                }
                pid_t p = fork();
                if (p == 0)
                        _exit(0);
                if (p < 0) {
                        if (errno == EAGAIN) { /* too many children alive: let them go */
                                usleep(1000);
                                i--;
                                continue;
                        }
                        fprintf(stderr, "forkstorm: fork: %s\n", strerror(errno));
                        rc = 1;
                        break;
                }
                done++;
        }
        t = now_s() - t0;
        printf("forked %ld in %.2f s (%.0f/s)\n", done, t, t > 0 ? (double) done / t : 0.0);
        return rc;
}
