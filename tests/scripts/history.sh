#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pcptunectl history reads pcptuned's entries back with sd-journal from journal files made here
# (systemd-journal-remote converts export-format input; this machine runs no journald): every kind of
# entry with its MESSAGE_ID (daemon/lib/messages.h), in time order, --since/--until, --json, nothing for a
# journal without pcptuned's entries.  The journal catalog has an entry per ID and journalctl takes it.
# Prints TAP.
. "$(dirname "$0")/tap.sh"

remote=$(command -v systemd-journal-remote || echo /lib/systemd/systemd-journal-remote)
[ -x "$remote" ] || tap_skip_all "no systemd-journal-remote (Debian: apt-get install systemd-journal-remote)"
tmp=$(mktemp -d /tmp/pcptune-history.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# The IDs as the daemon defines them.
id() { sed -n "s/^#define PCPTUNE_MESSAGE_$1 *\"\([0-9a-f]\{32\}\)\".*/\1/p" "$top_srcdir/daemon/lib/messages.h"; }
ids="CHANGE WOULD_CHANGE RESTORE BACK_OFF RECLAIM RELOAD"
for k in $ids; do [ -n "$(id $k)" ] || tap_fail "messages.h defines $k"; done
boot=$(tr -d - </proc/sys/kernel/random/uuid)
n=0
entry() { # realtime-seconds message-id message [FIELD=value...]
	n=$((n + 1))
	printf '__REALTIME_TIMESTAMP=%s000000\n__MONOTONIC_TIMESTAMP=%s000000\n_BOOT_ID=%s\n' "$1" "$n" "$boot"
	[ -n "$2" ] && printf 'MESSAGE_ID=%s\n' "$2"
	printf 'MESSAGE=%s\nPRIORITY=5\nSYSLOG_IDENTIFIER=pcptuned\n' "$3"
	shift 3
	for f in "$@"; do printf '%s\n' "$f"; done
	printf '\n'
}
t0=1796000000 # 2026-11-30T00:53:20Z
mkdir "$tmp/j"
{
	entry $t0 "$(id RELOAD)" "Loaded 2 policies from /etc/pcptune/policies.d" POLICIES=2 POLICY_SOURCE=/etc/pcptune/policies.d
	entry $((t0 + 60)) "$(id CHANGE)" "vm.percpu_pagelist_high_fraction: 0 -> 1528 (policy p, rule floor: pcp.high minimum)" \
		KNOB=vm.percpu_pagelist_high_fraction OLD=0 NEW=1528 POLICY=p RULE=floor "REASON=pcp.high minimum"
	entry $((t0 + 61)) "" "Rule p/floor is now active"
	entry $((t0 + 3600)) "$(id RECLAIM)" "p/dying: reclaim-dying went through 3 subtrees" ACTION=reclaim-dying RULE=p/dying
	entry $((t0 + 7200)) "$(id BACK_OFF)" "vm.percpu_pagelist_high_fraction was changed to 100 by someone else" \
		KNOB=vm.percpu_pagelist_high_fraction OLD=1528 NEW=100
	entry $((t0 + 86400)) "$(id WOULD_CHANGE)" "would set vm.percpu_pagelist_high_fraction: 0 -> 1528 (policy p, rule floor: x)"
	entry $((t0 + 90000)) "$(id RESTORE)" "restored vm.percpu_pagelist_high_fraction: 1528 -> 0 (daemon stopping)" \
		KNOB=vm.percpu_pagelist_high_fraction OLD=1528 NEW=0
} | "$remote" -o "$tmp/j/x.journal" - 2>"$tmp/err"
[ -s "$tmp/j/x.journal" ] && tap_ok "journal file made by systemd-journal-remote" || tap_fail "journal file" "$(cat "$tmp/err")"

hist() { "$PCPTUNECTL" history --directory "$tmp/j" "$@"; }
out=$(hist 2>&1); rc=$?
want="2026-11-30T00:53:20Z  reload       Loaded 2 policies from /etc/pcptune/policies.d
2026-11-30T00:54:20Z  change       vm.percpu_pagelist_high_fraction: 0 -> 1528 (policy p, rule floor: pcp.high minimum)
2026-11-30T01:53:20Z  reclaim      p/dying: reclaim-dying went through 3 subtrees
2026-11-30T02:53:20Z  back-off     vm.percpu_pagelist_high_fraction was changed to 100 by someone else
2026-12-01T00:53:20Z  would-change would set vm.percpu_pagelist_high_fraction: 0 -> 1528 (policy p, rule floor: x)
2026-12-01T01:53:20Z  restore      restored vm.percpu_pagelist_high_fraction: 1528 -> 0 (daemon stopping)"
[ $rc = 0 ] && [ "$out" = "$want" ] && tap_ok "history: every kind, in time order, without entries that are not history" ||
	tap_fail "history text" "rc=$rc" "$out"
out=$(hist --since "2026-11-30 01:00" --until 2026-12-01T01:00:00Z 2>&1)
[ "$(printf '%s\n' "$out" | awk '{ print $2 }' | tr '\n' ' ')" = "reclaim back-off would-change " ] &&
	tap_ok "history --since/--until" || tap_fail "since/until" "$out"
hist --json >"$tmp/json" 2>&1
python3 - "$tmp/json" <<'PY' && tap_ok "history --json: a list with type, time, message_id, message and fields" || tap_fail "history --json" "$(cat "$tmp/json")"
import json, sys
l = json.load(open(sys.argv[1]))
assert [e["type"] for e in l] == ["reload", "change", "reclaim", "back-off", "would-change", "restore"], l
c = l[1]
assert c["schema_version"] == 1 and c["time"] == "2026-11-30T00:54:20Z" and c["time_usec"] == 1796000060000000
assert c["fields"] == {"KNOB": "vm.percpu_pagelist_high_fraction", "OLD": "0", "NEW": "1528", "POLICY": "p",
                       "RULE": "floor", "REASON": "pcp.high minimum"}, c["fields"]
assert len(c["message_id"]) == 32
PY
out=$(hist --since 2027-01-01 2>&1); rc=$?
[ $rc = 0 ] && [ -z "$out" ] && tap_ok "no entries: prints nothing, exit 0" || tap_fail "empty text" "rc=$rc" "$out"
out=$(hist --since 2027-01-01 --json 2>&1); rc=$?
[ $rc = 0 ] && [ "$out" = "[]" ] && tap_ok "no entries with --json: []" || tap_fail "empty json" "rc=$rc" "$out"
"$PCPTUNECTL" history --since yesterday-ish >/dev/null 2>&1; [ $? = 2 ] && tap_ok "a bad --since is refused (exit 2)" ||
	tap_fail "bad --since"
out=$("$PCPTUNECTL" history --until 2026-02-30 2>&1); [ $? = 2 ] && printf '%s' "$out" | grep -q "no such date or time" &&
	tap_ok "a date that does not exist is refused (exit 2): $out" || tap_fail "--until 2026-02-30" "$out"
out=$("$PCPTUNECTL" history --since 7d --until 8d 2>&1); [ $? = 2 ] && printf '%s' "$out" | grep -q "is later than --until" &&
	tap_ok "an inverted range is refused (exit 2): $out" || tap_fail "--since 7d --until 8d" "$out"
# No journal file at all: the output stays empty ([]), a warning says why; entries exist but none match: silent.
mkdir "$tmp/none"
"$PCPTUNECTL" history --directory "$tmp/none" --json >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc = 0 ] && [ "$(cat "$tmp/out")" = "[]" ] && grep -q "No journal files in $tmp/none: nothing to read" "$tmp/err" &&
	tap_ok "no journal files: [] and a warning on stderr" || tap_fail "no journal" "rc=$rc" "$(cat "$tmp/out" "$tmp/err")"
hist --since 2027-01-01 >/dev/null 2>"$tmp/err"
[ ! -s "$tmp/err" ] && tap_ok "a journal without matching entries: no warning" || tap_fail "warning with a journal" "$(cat "$tmp/err")"

# The catalog: one entry per ID, and journalctl (from a root of its own) takes the file.
cat=$top_srcdir/units/pcptune.catalog
for k in $ids; do
	grep -q "^-- $(id $k)\$" "$cat" && tap_ok "catalog explains $k" || tap_fail "catalog entry for $k"
done
if command -v journalctl >/dev/null; then
	mkdir -p "$tmp/root/usr/lib/systemd/catalog"; cp "$cat" "$tmp/root/usr/lib/systemd/catalog/"
	journalctl --root="$tmp/root" --update-catalog 2>"$tmp/err"
	[ "$(journalctl --root="$tmp/root" --list-catalog 2>/dev/null | grep -c ' pcptune: ')" = 6 ] &&
		tap_ok "journalctl --update-catalog takes the catalog: 6 entries" || tap_fail "journalctl catalog" "$(cat "$tmp/err")"
fi
tap_done
