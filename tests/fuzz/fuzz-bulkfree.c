/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the trace text parser and the bulk-free grouping and window behind it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source-bulkfree.h"

static void on_span(const BulkFreeSpan *span, void *userdata) {
        BulkFreeWindow *w = userdata;
        if (span->last_ns < span->first_ns || span->pages == 0)
                abort();
        bulk_free_window_add(w, span);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        BulkFreeGrouper g = { 0 };
        BulkFreeWindow w;
        BulkFreeSummary sum;
        size_t used = 0;

        /* An exact-size copy: the parser must never read past len (ASan sees it). */
        char *buf = malloc(size ? size : 1);
        if (!buf || bulk_free_window_init(&w, 64) < 0) {
                free(buf);
                return 0;
        }
        memcpy(buf, data, size);
        if (bulk_free_feed_text(&g, buf, size, &used, on_span, &w) >= 0 && used > size)
                abort();
        bulk_free_grouper_break(&g, true);
        if (bulk_free_window_summarize(&w, 0, &sum) == 0 &&
            (sum.samples > w.n || sum.p99_seconds > sum.max_seconds || sum.pages_p99 > sum.pages_max))
                abort();
        bulk_free_grouper_done(&g);
        bulk_free_window_done(&w);
        free(buf);
        return 0;
}
