/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/stat.h>

#include "log.h"
#include "source-procexit.h"

/* struct proc_input and the event filter, 6.6+ uapi (Debian 12's headers are 6.1). */
struct pcptune_proc_input {
        uint32_t mcast_op;
        uint32_t event_type;
};
#define PCPTUNE_PROC_EVENT_EXIT 0x80000000U

#define BUCKETS 10
#define BUCKET_USEC (100 * USEC_PER_MSEC)
/* A large receive buffer: a storm of thousands of exits per second must not overflow it. */
#define RCVBUF_BYTES (4 * 1024 * 1024)

struct ProcExitSource {
        struct nl_sock *sk;
        sd_event_source *io;
        void (*on_exits)(void *userdata);
        void *userdata;
        uint64_t bucket[BUCKETS];  /* exits per 100 ms, ring indexed by (t / 100 ms) % BUCKETS */
        uint64_t bucket_epoch[BUCKETS];
        usec_t last_exit;
        ProcExitCounters c;
        uint64_t batch;            /* exits in the current wake-up */
};

int proc_exit_parse(const void *buf, size_t len) {
        struct cn_msg msg;
        struct proc_event ev;

        /* The event follows the 20-byte cn_msg, so it is not 8-byte aligned: copy, never cast. */
        if (len < sizeof(struct cn_msg))
                return -EINVAL;
        memcpy(&msg, buf, sizeof msg);
        if (msg.id.idx != CN_IDX_PROC || msg.id.val != CN_VAL_PROC)
                return -EINVAL;
        if (msg.len > len - sizeof(struct cn_msg) || msg.len < offsetof(struct proc_event, event_data))
                return -EINVAL;
        memset(&ev, 0, sizeof ev);
        memcpy(&ev, (const uint8_t *) buf + sizeof(struct cn_msg), MIN((size_t) msg.len, sizeof ev));
        if (ev.what == PROC_EVENT_NONE)
                return 3; /* the connector's answer to a subscription */
        if (ev.what != PROC_EVENT_EXIT)
                return 0;
        if (msg.len < offsetof(struct proc_event, event_data) + sizeof(ev.event_data.exit))
                return -EINVAL;
        return ev.event_data.exit.process_pid == ev.event_data.exit.process_tgid ? 1 : 2;
}

static void count_exit(ProcExitSource *s, usec_t now) {
        uint64_t epoch = now / BUCKET_USEC;
        unsigned i = (unsigned) (epoch % BUCKETS);
        if (s->bucket_epoch[i] != epoch) {
                s->bucket_epoch[i] = epoch;
                s->bucket[i] = 0;
        }
        s->bucket[i]++;
        s->last_exit = now;
}

double proc_exit_rate(ProcExitSource *s, usec_t now) {
        uint64_t epoch = now / BUCKET_USEC, sum = 0;
        if (!s)
                return 0;
        for (unsigned i = 0; i < BUCKETS; i++)
                if (s->bucket_epoch[i] + BUCKETS > epoch && s->bucket_epoch[i] <= epoch)
                        sum += s->bucket[i];
        return (double) sum * (double) USEC_PER_SEC / (double) (BUCKETS * BUCKET_USEC);
}

usec_t proc_exit_last(const ProcExitSource *s) {
        return s ? s->last_exit : 0;
}

void proc_exit_counters(const ProcExitSource *s, ProcExitCounters *ret) {
        *ret = s ? s->c : (ProcExitCounters){ 0 };
}

/* Connector messages carry NLMSG_DONE as their type: libnl hands them to the FINISH callback. */
static int on_message(struct nl_msg *m, void *arg) {
        ProcExitSource *s = arg;
        struct nlmsghdr *h = nlmsg_hdr(m);
        int r = proc_exit_parse(nlmsg_data(h), (size_t) nlmsg_datalen(h));

        if (r == 1) {
                s->c.exits++;
                s->batch++;
                count_exit(s, now_usec(CLOCK_MONOTONIC));
        } else if (r == 2)
                s->c.thread_exits++;
        else if (r == 3)
                s->c.acked = true;
        else if (r == 0)
                s->c.other_events++;
        return NL_OK;
}

static int on_readable(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        ProcExitSource *s = userdata;

        s->c.wakeups++;
        s->batch = 0;
        /* Drain the socket: one datagram per event. */
        for (unsigned i = 0; i < 100000; i++) {
                int r = nl_recvmsgs_default(s->sk);
                if (r == -NLE_AGAIN)
                        break;
                if (r == -NLE_NOMEM) {
                        /* ENOBUFS: events were dropped; counted, reported, not fatal. */
                        s->c.overruns++;
                        continue;
                }
                if (r < 0) {
                        log_debug("Reading the proc connector failed: %s", nl_geterror(r));
                        break;
                }
        }
        if (s->batch > 0 && s->on_exits)
                s->on_exits(s->userdata);
        return 0;
}

static int send_op(ProcExitSource *s, uint32_t op, bool filter) {
        uint8_t buf[sizeof(struct cn_msg) + sizeof(struct pcptune_proc_input)];
        struct pcptune_proc_input in = { .mcast_op = op, .event_type = PCPTUNE_PROC_EVENT_EXIT };
        struct cn_msg msg = { .id = { .idx = CN_IDX_PROC, .val = CN_VAL_PROC } };
        struct nl_msg *m;
        int r;

        /* Before 6.6 the kernel ignores a request whose payload is not exactly one u32. */
        msg.len = filter ? sizeof(struct pcptune_proc_input) : sizeof(uint32_t);
        memcpy(buf, &msg, sizeof msg);
        memcpy(buf + sizeof msg, &in, sizeof in);

        m = nlmsg_alloc_simple(NLMSG_DONE, 0);
        if (!m)
                return -ENOMEM;
        r = nlmsg_append(m, buf, sizeof(struct cn_msg) + msg.len, NLMSG_ALIGNTO);
        if (r >= 0)
                r = nl_send_auto(s->sk, m);
        nlmsg_free(m);
        return r < 0 ? -EIO : 0;
}

ProcExitSource *proc_exit_source_free(ProcExitSource *s) {
        if (!s)
                return NULL;
        if (s->sk) {
                (void) send_op(s, PROC_CN_MCAST_IGNORE, s->c.filtered);
                nl_socket_free(s->sk);
        }
        sd_event_source_disable_unref(s->io);
        free(s);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(ProcExitSource *, proc_exit_source_free);

/* libnl errors to errno, for our callers (log messages use nl_geterror() where they can). */
static int nl_to_errno(int e) {
        switch (-e) {
        case NLE_PERM:
                return -EPERM;
        case NLE_NOMEM:
                return -ENOMEM;
        case NLE_PROTO_MISMATCH:
        case NLE_OPNOTSUPP:
                return -EPROTONOSUPPORT;
        default:
                return -EIO;
        }
}

/* The inode numbers the kernel gives its initial namespaces (include/linux/proc_ns.h). */
#define PROC_USER_INIT_INO 0xEFFFFFFDU
#define PROC_PID_INIT_INO 0xEFFFFFFCU

bool proc_exit_in_initial_namespaces(void) {
        struct stat u, p;
        return stat("/proc/self/ns/user", &u) == 0 && stat("/proc/self/ns/pid", &p) == 0 &&
               u.st_ino == PROC_USER_INIT_INO && p.st_ino == PROC_PID_INIT_INO;
}

int proc_exit_source_new(sd_event *e, const KernelVersion *kernel, void (*on_exits)(void *userdata), void *userdata,
                         ProcExitSource **ret) {
        _cleanup_(proc_exit_source_freep) ProcExitSource *s = NULL;
        int r;

        /* Elsewhere the kernel accepts the subscription and silently sends nothing. */
        if (!proc_exit_in_initial_namespaces())
                return -EXDEV;
        s = calloc(1, sizeof(ProcExitSource));
        if (!s)
                return -ENOMEM;
        s->on_exits = on_exits;
        s->userdata = userdata;
        s->sk = nl_socket_alloc();
        if (!s->sk)
                return -ENOMEM;
        nl_socket_disable_seq_check(s->sk);
        nl_socket_disable_auto_ack(s->sk);
        /* The multicast group is joined at bind time (nl_groups), as the connector expects. */
        nl_join_groups(s->sk, CN_IDX_PROC);
        r = nl_connect(s->sk, NETLINK_CONNECTOR);
        if (r < 0) {
                log_debug("Failed to connect to the proc connector: %s", nl_geterror(r));
                nl_socket_free(TAKE_PTR(s->sk));
                return nl_to_errno(r);
        }
        r = nl_socket_set_nonblocking(s->sk);
        if (r >= 0)
                r = nl_socket_set_buffer_size(s->sk, RCVBUF_BYTES, 0);
        if (r >= 0)
                r = nl_socket_modify_cb(s->sk, NL_CB_FINISH, NL_CB_CUSTOM, on_message, s);
        if (r >= 0)
                r = nl_socket_modify_cb(s->sk, NL_CB_VALID, NL_CB_CUSTOM, on_message, s);
        if (r < 0)
                return nl_to_errno(r);
        s->c.filtered = kernel_version_cmp(kernel, &KV(6, 6)) >= 0;
        r = send_op(s, PROC_CN_MCAST_LISTEN, s->c.filtered);
        if (r < 0)
                return r;
        r = sd_event_add_io(e, &s->io, nl_socket_get_fd(s->sk), EPOLLIN, on_readable, s);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}
