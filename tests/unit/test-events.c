/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Event sources: the proc connector parser, the PSI trigger, namespace detection. */
#include <fcntl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <poll.h>
#include <sys/stat.h>

#include "test-helpers.h"

#include "log.h"
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

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_psi_trigger_fake),
                cmocka_unit_test(test_psi_trigger_live),
                cmocka_unit_test(test_namespaces),
        };
        log_setup("test-events", LOG_TARGET_NULL, LOG_DEBUG);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
