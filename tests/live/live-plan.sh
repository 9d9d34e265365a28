#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Live exactness of pcptunectl plan on this kernel (root): for fractions 0, 8,
# 100, 1000, 4096 and the computed minimum, write the fraction, then compare
# the plan with every CPU of /proc/zoneinfo (tests/scripts/compare-plan);
# repair --force recomputes and verifies; a snapshot of this host plans like
# the host; --measure creates and removes empty memcgs.  The fraction is
# restored on any exit.  Prints TAP.
. "$(dirname "$0")/../scripts/tap.sh"
export PCPTUNECTL
knob=/proc/sys/vm/percpu_pagelist_high_fraction
[ "$(id -u)" = 0 ] || tap_skip_all "needs root"
live_lock
[ -w "$knob" ] || tap_skip_all "no writable $knob"
knob_save "$knob"; original=${knob_saved[$knob]}
tmp=$(mktemp -d /tmp/pcptune-live-plan.XXXXXX)
mounted_debugfs=0
cleanup() {
	knob_restore "$knob" # what this test wrote (tap.sh); another writer's value is left
	[ $mounted_debugfs = 1 ] && umount /sys/kernel/debug
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
empty=$top_srcdir/tests/policies/empty

# managed pages can grow between plan's read and the comparison (this VM onlines memory lazily): retry.
compare_live() {
	for attempt in 1 2 3; do
		out=$("$top_srcdir/tests/scripts/compare-plan" / 2>&1) && return 0
		sleep 0.2
	done
	return 1
}
minimum=$("$PCPTUNECTL" plan --json --no-owner-check --policy-dir "$empty" | sed -n 's/.*"minimum_fraction": \([0-9]*\).*/\1/p')
for f in 0 8 100 1000 4096 "$minimum"; do
	knob_write "$knob" "$f"
	if compare_live; then tap_ok "plan is exact on every CPU of the live kernel at fraction $f: $(printf '%s' "$out" | tail -1)"
	else tap_fail "live plan at fraction $f" "$out"; fi
done
knob_write "$knob" "$original"

"$PCPTUNECTL" repair --force --state-dir "$tmp/state" >"$tmp/o" 2>&1; rc=$?
if [ $rc = 0 ] && grep -q "after the repair: \([0-9]*\) of \1 values exact" "$tmp/o" && [ "$(cat "$knob")" = "$original" ] &&
	[ ! -e "$tmp/state/restore.json" ]; then
	tap_ok "repair --force: the write sequence recomputes every pageset and the fraction is back ($(grep after "$tmp/o"))"
else
	tap_fail "live repair" "exit $rc" "$(cat "$tmp/o")"
fi

"$PCPTUNECTL" snapshot -o "$tmp/snap" >/dev/null 2>&1
if "$top_srcdir/tests/scripts/compare-plan" "$tmp/snap" >"$tmp/o" 2>&1 && [ -s "$tmp/snap/.pcptune/memcg" ]; then
	tap_ok "a snapshot of this host plans exactly: $(tail -1 "$tmp/o")"
else
	tap_fail "live snapshot" "$(cat "$tmp/o")"
fi

if [ ! -r /sys/kernel/debug/percpu_stats ] && [ -d /sys/kernel/debug ] && mount -t debugfs none /sys/kernel/debug 2>/dev/null; then
	mounted_debugfs=1
fi
"$PCPTUNECTL" plan --measure=300 --state-dir "$tmp/state" --no-owner-check --policy-dir "$empty" >"$tmp/o" 2>&1; rc=$?
left=$(find /sys/fs/cgroup -maxdepth 2 -name 'pcptune-measure.*' 2>/dev/null | head -1)
line=$(grep "per memcg:" "$tmp/o")
kib=$(printf '%s' "$line" | sed -n 's/.*per memcg: \([0-9.]*\) KiB.*/\1/p')
if [ $rc = 0 ] && [ -z "$left" ] && printf '%s' "$line" | grep -q measured && [ -n "$kib" ] &&
	awk -v k="$kib" 'BEGIN { exit !(k >= 0.5 && k <= 256) }'; then
	tap_ok "plan --measure: $line; $(grep 'basis:' -A1 "$tmp/o" | tr -s ' ' | tr '\n' ' ')"
else
	tap_fail "plan --measure" "exit $rc, left: $left" "$(cat "$tmp/o")"
fi
# The measurement is kept in the state directory: status and plan use it for this kernel.
"$PCPTUNECTL" status --state-dir "$tmp/state" --no-owner-check --policy-dir "$empty" >"$tmp/o" 2>&1
if [ -s "$tmp/state/memcg-cost.json" ] && grep -q "^  basis: total measured (meminfo); memcgs measured, " "$tmp/o" &&
	grep -q "^  memcg cost: measured here: 300 empty memcgs created" "$tmp/o"; then
	tap_ok "status uses the kept --measure result: $(grep '^percpu:' "$tmp/o")"
else
	tap_fail "status with a kept measurement" "$(ls -l "$tmp/state")" "$(cat "$tmp/o")"
fi
tap_done
