/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The knob table's sysctls below a root, and among them the pcp sysctl of
 * the running kernel (mm/page_alloc.c): 5.14 replaced
 * vm.percpu_pagelist_fraction with vm.percpu_pagelist_high_fraction
 * ("mm/page_alloc: limit the number of pages on PCP lists when reclaim is
 * active" series); a kernel has at most one of them.
 */
#include "source-sysctl.h"
#include "util.h"

void sysctl_read_knobs(const char *root, KnobValue values[static _KNOB_ID_MAX]) {
        for (KnobId id = 0; id < _KNOB_ID_MAX; id++) {
                int64_t v;
                int r = read_int64_at(root, knob_desc(id)->path, &v);
                values[id] = r >= 0 ? (KnobValue){ .present = true, .value = v } : (KnobValue){ .error = r };
        }
}

int pcp_knob_from_values(const KnobValue values[static _KNOB_ID_MAX], KnobId *ret) {
        /* The pre-5.14 knob has another meaning (high = managed / fraction, batch
         * derived from it); pcptune reports it but never writes it (not writable in the allowlist). */
        static const KnobId knobs[] = { KNOB_PCP_HIGH_FRACTION, KNOB_PCP_FRACTION };

        if (!ret)
                return -EINVAL;

        for (size_t i = 0; i < ELEMENTSOF(knobs); i++) {
                const KnobDesc *d = knob_desc(knobs[i]);
                const KnobValue *kv = &values[knobs[i]];

                if (kv->error == -ENOENT)
                        continue;
                if (!kv->present)
                        return kv->error < 0 ? kv->error : -EIO;
                /* What the handler accepts (knob.h; -1 only with the contrib patch). */
                if (!knob_value_valid(d, kv->value))
                        return -EINVAL;
                *ret = knobs[i];
                return 0;
        }
        return -ENOENT;
}

int sysctl_name_to_path(const char *name, char **ret) {
        static const char prefix[] = "/proc/sys/";
        size_t len, plen = sizeof(prefix) - 1;
        _cleanup_(freep) char *path = NULL;

        if (!name || !ret)
                return -EINVAL;
        len = strlen(name);
        if (len == 0 || len > 4096)
                return -EINVAL;

        path = malloc(plen + len + 1);
        if (!path)
                return -ENOMEM;
        memcpy(path, prefix, plen);
        /* sysctl(8) convention: '.' separates components, and a '/' in a name stands
         * for a '.' inside a component (net.ipv4.conf.eth0/100.rp_filter -> eth0.100). */
        for (size_t i = 0; i < len; i++) {
                char c = name[i];
                path[plen + i] = c == '.' ? '/' : c == '/' ? '.' : c;
        }
        path[plen + len] = 0;

        /* Every component non-empty, not "." or "..": the path must stay below /proc/sys. */
        for (const char *c = path + plen; *c;) {
                size_t n = strcspn(c, "/");
                if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.') ||
                    strcspn(c, " \t\n") < n)
                        return -EINVAL;
                c += n;
                if (*c == '/') {
                        c++;
                        if (!*c)
                                return -EINVAL;     /* trailing separator */
                }
        }
        *ret = TAKE_PTR(path);
        return 0;
}
