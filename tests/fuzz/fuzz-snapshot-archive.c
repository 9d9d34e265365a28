/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: snapshot_archive_unpack_buffer() (what pcptunectl status and plan
 * --root F.tar.gz do with an archive anyone may hand them) on arbitrary bytes, unpacking into
 * a scratch directory.  Whatever it accepts must leave there only directories and regular
 * files that a source reads (snapshot_path_wanted()), within the size cap: no symlink, no
 * device, nothing else.  The directory is emptied after each input.
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[] = "/tmp/fuzz-snapshot-archive.XXXXXX";
static uint64_t total;

static int check_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void) type;
        if (ftw->level == 0)
                return 0;
        if (S_ISDIR(st->st_mode))
                return 0;
        if (!S_ISREG(st->st_mode) || !snapshot_path_wanted(path + strlen(scratch)))
                abort();
        total += (uint64_t) st->st_size;
        return 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void) st;
        (void) type;
        if (ftw->level > 0)
                (void) remove(path);
        return 0;
}

static void remove_scratch(void) {
        (void) nftw(scratch, remove_entry, 16, FTW_PHYS | FTW_DEPTH);
        (void) rmdir(scratch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static bool ready;
        char err[512];

        if (!ready) {
                log_setup("fuzz-snapshot-archive", LOG_TARGET_NULL, LOG_ERR);
                if (!mkdtemp(scratch))
                        abort();
                atexit(remove_scratch);
                ready = true;
        }
        int r = snapshot_archive_unpack_buffer(data, size, scratch, err, sizeof err);
        if (r < 0 && !err[0] && r != -ENOMEM)
                abort(); /* every refusal says why */
        total = 0;
        if (nftw(scratch, check_entry, 16, FTW_PHYS) < 0)
                abort();
        if (total > SNAPSHOT_ARCHIVE_BYTES_MAX)
                abort();
        (void) nftw(scratch, remove_entry, 16, FTW_PHYS | FTW_DEPTH);
        return 0;
}
