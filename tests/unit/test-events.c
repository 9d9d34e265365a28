/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Event sources: the proc connector parser, the PSI trigger, namespace detection, the bulk-free trace parser. */
#include <fcntl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <poll.h>
#include <sys/stat.h>

#include "test-helpers.h"

#include "log.h"
#include "source-bulkfree.h"
#include "source-procexit.h"
#include "source-psi.h"

/* As on the wire: the proc_event right after the 20-byte cn_msg (no padding).
 * Bytes, not a struct of the two: cn_msg ends in a flexible array member. */
typedef struct {
        uint8_t b[sizeof(struct cn_msg) + sizeof(struct proc_event)];
} Packet;

static Packet packet(unsigned what, int pid, int tgid) {
        Packet p;
        struct proc_event ev;
        struct cn_msg msg;
        memset(&ev, 0, sizeof ev);
        memset(&msg, 0, sizeof msg);
        msg.id.idx = CN_IDX_PROC;
        msg.id.val = CN_VAL_PROC;
        msg.len = sizeof(struct proc_event);
        ev.what = what;
        ev.event_data.exit.process_pid = pid;
        ev.event_data.exit.process_tgid = tgid;
        memcpy(p.b, &msg, sizeof msg);
        memcpy(p.b + sizeof msg, &ev, sizeof ev);
        return p;
}

static void set_len(Packet *p, unsigned len) {
        struct cn_msg msg;
        memcpy(&msg, p->b, sizeof msg);
        msg.len = (uint16_t) len;
        memcpy(p->b, &msg, sizeof msg);
}

static void test_parse(void **state) {
        Packet p = packet(PROC_EVENT_EXIT, 100, 100);
        assert_int_equal(proc_exit_parse(&p, sizeof p), 1);
        p = packet(PROC_EVENT_EXIT, 101, 100);
        assert_int_equal(proc_exit_parse(&p, sizeof p), 2);
        p = packet(PROC_EVENT_FORK, 100, 100);
        assert_int_equal(proc_exit_parse(&p, sizeof p), 0);
        p = packet(PROC_EVENT_NONE, 0, 0);
        assert_int_equal(proc_exit_parse(&p, sizeof p), 3);
        /* Malformed: another connector, truncated, a length beyond the buffer. */
        p = packet(PROC_EVENT_EXIT, 1, 1);
        struct cn_msg other;
        memcpy(&other, p.b, sizeof other);
        other.id.idx = 2;
        memcpy(p.b, &other, sizeof other);
        assert_int_equal(proc_exit_parse(&p, sizeof p), -EINVAL);
        p = packet(PROC_EVENT_EXIT, 1, 1);
        assert_int_equal(proc_exit_parse(&p, sizeof(struct cn_msg) + 4), -EINVAL);
        set_len(&p, 4000);
        assert_int_equal(proc_exit_parse(&p, sizeof p), -EINVAL);
        p = packet(PROC_EVENT_EXIT, 1, 1);
        set_len(&p, 20); /* an exit event cut before its pids */
        assert_int_equal(proc_exit_parse(&p, sizeof p), -EINVAL);
        assert_int_equal(proc_exit_parse(&p, 3), -EINVAL);
}

static void test_psi_trigger_fake(void **state) {
        char dir[] = "/tmp/pcptune-test-events.XXXXXX", *path;
        int fd = -1;
        assert_non_null(mkdtemp(dir));
        assert_true(asprintf(&path, "%s/proc/pressure", dir) > 0);
        assert_int_equal(mkdir_p(path, 0755), 0);
        free(path);
        assert_true(asprintf(&path, "%s/proc/pressure/memory", dir) > 0);
        assert_int_equal(write_file_atomic(path, "", 0, 0644), 0);
        /* A regular file accepts the write: what matters is the text and its NUL. */
        assert_int_equal(psi_trigger_open(dir, false, 200000, 2000000, &fd), 0);
        close(fd);
        char *text;
        size_t len;
        assert_int_equal(read_file_at("/", path, 100, &text, &len), 0);
        assert_int_equal(len, strlen("some 200000 2000000") + 1);
        assert_string_equal(text, "some 200000 2000000");
        free(text);
        assert_int_equal(psi_trigger_open(dir, true, 3000000, 2000000, &fd), -EINVAL); /* threshold > window */
        assert_int_equal(psi_trigger_open("/nonexistent-root", false, 1, 2, &fd), -ENOENT);
        free(path);
        assert_true(asprintf(&path, "rm -rf '%s'", dir) > 0);
        assert_int_equal(system(path), 0);
        free(path);
}

/* On the live kernel, as root with PSI: the kernel takes a 2 s-window trigger. */
static void test_psi_trigger_live(void **state) {
        int fd = -1, r;
        if (geteuid() != 0 || access("/proc/pressure/memory", W_OK) < 0)
                skip();
        r = psi_trigger_open("/", false, 150000, 2000000, &fd);
        if (r == -EOPNOTSUPP)
                skip();
        assert_int_equal(r, 0);
        struct pollfd p = { fd, POLLPRI, 0 };
        assert_true(poll(&p, 1, 0) >= 0);
        close(fd);
        /* 6.12+: window 0 or above 10 s is refused. */
        assert_true(psi_trigger_open("/", false, 1000, 20000000, &fd) < 0);
}

static void test_namespaces(void **state) {
        /* This is run on the host (the CI VM) in its initial namespaces. */
        struct stat st;
        if (stat("/proc/self/ns/user", &st) < 0)
                skip();
        assert_true(proc_exit_in_initial_namespaces() == (st.st_ino == 0xEFFFFFFDU));
}

/* ---- bulk frees from trace text (source-bulkfree.h) ---- */

static int parse(const char *line, BulkFreeEvent *ev) {
        return bulk_free_parse_line(line, strlen(line), ev);
}

static void test_bulk_free_parse_line(void **state) {
        BulkFreeEvent ev;

        assert_int_equal(parse("         python3-7127    [001] d..3.   431.109913: mm_page_pcpu_drain: "
                               "page=00000000a84b26db pfn=0x1a4755 order=0 migratetype=1", &ev),
                         BULK_FREE_EVENT_DRAIN);
        assert_int_equal(ev.cpu, 1);
        assert_int_equal(ev.pid, 7127);
        assert_int_equal(ev.order, 0);
        assert_true(ev.ts_ns == 431109913000ULL);

        assert_int_equal(parse("  python3-7127 [000] .....   431.109877: mm_page_free: page=0000 pfn=0x1 order=9", &ev),
                         BULK_FREE_EVENT_FREE);
        assert_int_equal(ev.cpu, 0);
        assert_int_equal(ev.order, 9);
        /* Older kernels print 4 flag characters; irq-info off prints none; comms hold blanks, dashes, brackets. */
        assert_int_equal(parse("  kworker/u8:1-ev-42 [003] d..2  12.000001: mm_page_pcpu_drain: page=0 pfn=0x1 order=3 "
                               "migratetype=0", &ev),
                         BULK_FREE_EVENT_DRAIN);
        assert_int_equal(ev.pid, 42);
        assert_int_equal(ev.cpu, 3);
        assert_int_equal(ev.order, 3);
        assert_int_equal(parse("  my [odd] comm-9 [002]   7.5: mm_page_pcpu_drain: page=0 pfn=0x1 order=1 migratetype=0",
                               &ev),
                         BULK_FREE_EVENT_DRAIN);
        assert_int_equal(ev.pid, 9);
        assert_true(ev.ts_ns == 7500000000ULL);

        assert_int_equal(parse("CPU:1 [LOST 1234 EVENTS]", &ev), BULK_FREE_EVENT_LOST);
        assert_int_equal(ev.cpu, 1);
        assert_true(ev.lost == 1234);

        /* Not ours: headers, other events, blank lines. */
        ev.cpu = 77;
        assert_int_equal(parse("# tracer: nop", &ev), BULK_FREE_EVENT_NONE);
        assert_int_equal(parse("", &ev), BULK_FREE_EVENT_NONE);
        assert_int_equal(parse("  bash-1 [000] d..1. 1.000001: mm_page_alloc: page=0 pfn=0x1 order=0", &ev),
                         BULK_FREE_EVENT_NONE);
        assert_int_equal(ev.cpu, 77);

        /* Ours, malformed. */
        assert_int_equal(parse("  p-1 [000] d..3. 1.000001: mm_page_pcpu_drain: page=0 pfn=0x1 migratetype=0", &ev), -EINVAL);
        assert_int_equal(parse("  p-1 [000] d..3. 1.000001: mm_page_pcpu_drain: page=0 order=21 x", &ev), -EINVAL);
        assert_int_equal(parse("  p-1 [9999] d..3. 1.000001: mm_page_pcpu_drain: order=0", &ev), -EINVAL);
        assert_int_equal(parse("  p1 [000] d..3. 1.000001: mm_page_pcpu_drain: order=0", &ev), -EINVAL);
        assert_int_equal(parse("  p-1 [000] d..3. 1000001: mm_page_pcpu_drain: order=0", &ev), -EINVAL);
        assert_int_equal(parse(": mm_page_free: order=0", &ev), -EINVAL);
        assert_int_equal(parse("CPU:1 [LOST 12 EVENTS", &ev), -EINVAL);
        /* The length bounds the parse: the same line cut before its order is malformed. */
        const char *l = "  p-1 [000] d..3. 1.000001: mm_page_pcpu_drain: page=0 pfn=0x1 order=2 migratetype=0";
        assert_int_equal(bulk_free_parse_line(l, strstr(l, " order=") - l + 3, &ev), -EINVAL);
}

static BulkFreeEvent ev_at(BulkFreeEventKind kind, unsigned cpu, int pid, uint64_t us, unsigned order) {
        return (BulkFreeEvent){ .kind = kind, .cpu = cpu, .pid = pid, .ts_ns = us * 1000, .order = order };
}

/* bulk_free_grouper_feed() of ev_at(kind, cpu, pid, us, order). */
static int feed(BulkFreeGrouper *g, BulkFreeEventKind kind, unsigned cpu, int pid, uint64_t us, unsigned order,
                BulkFreeSpan *sp) {
        BulkFreeEvent e = ev_at(kind, cpu, pid, us, order);
        return bulk_free_grouper_feed(g, &e, sp);
}

static void test_bulk_free_grouper(void **state) {
        BulkFreeGrouper g = { 0 };
        BulkFreeSpan sp;
        BulkFreeEvent e;

        /* CPU 0: three drains (orders 0, 0, 1) then a free: 4 pages over 7 us. */
        assert_int_equal(feed(&g, BULK_FREE_EVENT_DRAIN, 0, 10, 100, 0, &sp), 0);
        assert_int_equal(feed(&g, BULK_FREE_EVENT_DRAIN, 0, 10, 103, 0, &sp), 0);
        /* CPU 1 interleaved: its own run, not ended by CPU 0's events. */
        assert_int_equal(feed(&g, BULK_FREE_EVENT_DRAIN, 1, 11, 104, 0, &sp), 0);
        assert_int_equal(feed(&g, BULK_FREE_EVENT_DRAIN, 0, 10, 107, 1, &sp), 0);
        assert_int_equal(feed(&g, BULK_FREE_EVENT_FREE, 0, 10, 110, 0, &sp), 1);
        assert_int_equal(sp.cpu, 0);
        assert_true(sp.pages == 4);
        assert_true(sp.last_ns - sp.first_ns == 7000);
        /* A free with no run open completes nothing. */
        assert_int_equal(feed(&g, BULK_FREE_EVENT_FREE, 0, 10, 110, 0, &sp), 0);
        /* CPU 1: another pid's drain ends the run (another call). */
        assert_int_equal(feed(&g, BULK_FREE_EVENT_DRAIN, 1, 12, 120, 0, &sp), 1);
        assert_int_equal(sp.cpu, 1);
        assert_true(sp.pages == 1 && sp.first_ns == sp.last_ns);
        /* A LOST mark discards the open run of its CPU. */
        e = (BulkFreeEvent){ .kind = BULK_FREE_EVENT_LOST, .cpu = 1, .lost = 5 };
        assert_int_equal(bulk_free_grouper_feed(&g, &e, &sp), 0);
        assert_int_equal(feed(&g, BULK_FREE_EVENT_FREE, 1, 12, 130, 0, &sp), 0);
        assert_true(g.discarded == 1 && g.lost == 5);
        /* A break with skip: the open run is dropped, so is the next one; the one after counts. */
        assert_int_equal(feed(&g, BULK_FREE_EVENT_DRAIN, 0, 10, 200, 0, &sp), 0);
        bulk_free_grouper_break(&g, true);
        assert_true(g.discarded == 2);
        assert_int_equal(feed(&g, BULK_FREE_EVENT_DRAIN, 0, 10, 300, 0, &sp), 0);
        assert_int_equal(feed(&g, BULK_FREE_EVENT_FREE, 0, 10, 301, 0, &sp), 0);
        assert_true(g.discarded == 3);
        assert_int_equal(feed(&g, BULK_FREE_EVENT_DRAIN, 0, 10, 400, 0, &sp), 0);
        assert_int_equal(feed(&g, BULK_FREE_EVENT_FREE, 0, 10, 401, 0, &sp), 1);
        /* A drain stamped before the open run's last event is another call. */
        assert_int_equal(feed(&g, BULK_FREE_EVENT_DRAIN, 0, 10, 500, 0, &sp), 0);
        assert_int_equal(feed(&g, BULK_FREE_EVENT_DRAIN, 0, 10, 499, 0, &sp), 1);
        assert_true(g.events == 10);
        bulk_free_grouper_done(&g);
}

static void collect(const BulkFreeSpan *span, void *userdata) {
        bulk_free_window_add(userdata, span);
}

/*
 * A capture of this repository's live host (6.18.44, 2 CPUs, fraction at the
 * minimum: high 252, batch 63): one process exiting after 300 MiB.  The
 * expected runs were counted with awk over the same file (per CPU and pid,
 * ended by mm_page_free): one of 98 pages over 25 us (it began before tracing
 * did), then 189 pages over 54, 55, 55 and 55 us.
 */
static void test_bulk_free_fixture(void **state) {
        BulkFreeGrouper g = { 0 };
        BulkFreeWindow w;
        BulkFreeSummary sum;
        size_t len, used;
        char *text = fixture_read("trace", "bulkfree-6.18-exit.txt", &len);

        assert_int_equal(bulk_free_window_init(&w, 16), 0);
        assert_int_equal(bulk_free_feed_text(&g, text, len, &used, collect, &w), 0);
        assert_true(used == len);
        assert_true(w.total == 5);
        assert_int_equal(bulk_free_window_summarize(&w, 0, &sum), 0);
        assert_true(sum.samples == 5 && sum.pages_p99 == 189 && sum.pages_max == 189);
        assert_true(sum.p99_seconds > 54.9e-6 && sum.p99_seconds < 55.1e-6);
        /* As the daemon starts: the first run after tracing_on is not counted. */
        bulk_free_grouper_done(&g);
        bulk_free_window_done(&w);
        assert_int_equal(bulk_free_window_init(&w, 16), 0);
        bulk_free_grouper_break(&g, true);
        assert_int_equal(bulk_free_feed_text(&g, text, len, &used, collect, &w), 0);
        assert_true(w.total == 4);
        /* Fed in pieces, the carried partial lines give the same runs. */
        bulk_free_grouper_done(&g);
        bulk_free_window_done(&w);
        assert_int_equal(bulk_free_window_init(&w, 16), 0);
        size_t off = 0;
        while (off < len) {
                size_t n = MIN(len - off, (size_t) 777);
                _cleanup_(freep) char *piece = NULL;
                static char carry[4096];
                static size_t n_carry;
                if (off == 0)
                        n_carry = 0;
                piece = malloc(n_carry + n);
                assert_non_null(piece);
                memcpy(piece, carry, n_carry);
                memcpy(piece + n_carry, text + off, n);
                assert_int_equal(bulk_free_feed_text(&g, piece, n_carry + n, &used, collect, &w), 0);
                n_carry = n_carry + n - used;
                assert_true(n_carry < sizeof carry);
                memcpy(carry, piece + used, n_carry);
                off += n;
        }
        assert_true(w.total == 5);
        bulk_free_grouper_done(&g);
        bulk_free_window_done(&w);
        free(text);
}

static void test_bulk_free_free_shift(void **state) {
        /* 2^shift <= batch / 4, at most 3: merges stay below (1 - 2^-shift)^batch. */
        assert_int_equal(bulk_free_free_shift(1), 0);
        assert_int_equal(bulk_free_free_shift(7), 0);
        assert_int_equal(bulk_free_free_shift(15), 1);
        assert_int_equal(bulk_free_free_shift(31), 2);
        assert_int_equal(bulk_free_free_shift(63), 3);
        assert_int_equal(bulk_free_free_shift(4096), 3);
}

static void test_bulk_free_window(void **state) {
        BulkFreeWindow w;
        BulkFreeSummary sum;

        assert_int_equal(bulk_free_window_init(&w, 100), 0);
        assert_int_equal(bulk_free_window_summarize(&w, 0, &sum), 0);
        assert_true(sum.samples == 0 && sum.p99_seconds == 0);
        /* 150 spans of i us and i pages, ending at i seconds: the ring keeps the last 100 (51..150). */
        for (uint64_t i = 1; i <= 150; i++)
                bulk_free_window_add(&w, &(BulkFreeSpan){ .pages = i, .first_ns = i * 1000000000ULL - i * 1000,
                                                          .last_ns = i * 1000000000ULL });
        assert_true(w.n == 100 && w.total == 150);
        assert_int_equal(bulk_free_window_summarize(&w, 0, &sum), 0);
        assert_true(sum.samples == 100 && sum.pages_p99 == 149 && sum.pages_max == 150);
        assert_true(sum.p99_seconds > 148.9e-6 && sum.p99_seconds < 149.1e-6);
        /* Only those that ended at 141 s or later: 10 of them, p99 is their max. */
        assert_int_equal(bulk_free_window_summarize(&w, 141 * USEC_PER_SEC, &sum), 0);
        assert_true(sum.samples == 10 && sum.pages_p99 == 150);
        bulk_free_window_done(&w);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_psi_trigger_fake),
                cmocka_unit_test(test_psi_trigger_live),
                cmocka_unit_test(test_namespaces),
                cmocka_unit_test(test_bulk_free_parse_line),
                cmocka_unit_test(test_bulk_free_grouper),
                cmocka_unit_test(test_bulk_free_fixture),
                cmocka_unit_test(test_bulk_free_window),
                cmocka_unit_test(test_bulk_free_free_shift),
        };
        log_setup("test-events", LOG_TARGET_NULL, LOG_DEBUG);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
