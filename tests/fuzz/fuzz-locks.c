/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: locks_find_holder() on arbitrary /proc/locks text, the inode from the first bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knob-lock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        unsigned maj = 0, min = 0;
        uint64_t ino = 0;
        char *buf;
        int pid;

        if (size >= 3) {
                maj = data[0];
                min = data[1];
                ino = data[2];
                data += 3;
                size -= 3;
        }
        /* Not NUL-terminated: the parser must stay within size. */
        buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        pid = locks_find_holder(buf, size, maj, min, ino, 0);
        if (pid < 0)
                abort(); /* only NULL text is refused */
        if (pid > 0) {
                /* The pid found is in the text (its digits; leading zeros may precede them). */
                char *z = malloc(size + 1), digits[16];
                if (!z)
                        abort();
                memcpy(z, buf, size);
                z[size] = 0;
                snprintf(digits, sizeof digits, "%d", pid);
                if (!strstr(z, digits) && memchr(buf, 0, size) == NULL)
                        abort();
                free(z);
        }
        free(buf);
        return 0;
}
