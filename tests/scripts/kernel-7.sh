#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pcptunectl on the Debian 7.2.13 root trees captured under QEMU
# (tests/fixtures/7.2.13+deb14-amd64-*, no .pcptune declarations): the kernel
# probes answer from the version and the tree, dying memcg reparenting and
# batched bulk frees yes, and the reparenting row says reclaim-dying still
# has work (files written through cgroup writeback keep removed memcgs dying:
# tests/vm/reparent-vm on ext4).  Debian 6.12: reparenting no.  Prints TAP.
. "$(dirname "$0")/tap.sh"
pol=$top_srcdir/tests/policies/reparent
answer() { # JSON LABEL -> the probe's answer
	printf '%s' "$1" | awk -v l="\"label\": \"$2\"" 'index($0, l) { f = 1 } f && /"answer"/ { gsub(/[",]/, "", $2); print $2; exit }'
}
n=0
for set in "$FIXTURES"/7.2.13+deb14-amd64-*/; do
	r=$set/root
	[ -f "$r/proc/zoneinfo" ] || continue
	n=$((n + 1))
	name=$(basename "$set")
	if [ -e "$r/.pcptune" ]; then tap_fail "$name: has .pcptune declarations"; continue; fi
	j=$("$PCPTUNECTL" status --root "$r" --json --no-owner-check --policy-dir "$pol" 2>&1)
	a=$(answer "$j" "dying memcg reparenting") b=$(answer "$j" "batched bulk frees")
	[ "$a" = yes ] && [ "$b" = yes ] && tap_ok "$name: dying memcg reparenting yes, batched bulk frees yes (from the version)" ||
		tap_fail "$name: probes" "reparenting '$a', batched '$b'"
done
[ "$n" = 4 ] && tap_ok "four 7.2 fixture sets" || tap_fail "7.2 fixture sets: $n, want 4"
t=$("$PCPTUNECTL" status --verbose --root "$FIXTURES/7.2.13+deb14-amd64-smp8-4G/root" --no-owner-check --policy-dir "$pol" 2>&1)
printf '%s\n' "$t" | tr -s ' \n' ' ' | grep -q 'reclaim-dying still frees those' &&
	tap_ok "7.2: the reparenting row says reclaim-dying still frees what cgroup writeback keeps" ||
	tap_fail "7.2 effect" "$(printf '%s\n' "$t" | grep -A3 'reparenting')"
j=$("$PCPTUNECTL" status --root "$FIXTURES/6.12.117+deb12-amd64-numa2-memonly-smp4-4G/root" --json --no-owner-check --policy-dir "$pol" 2>&1)
[ "$(answer "$j" "dying memcg reparenting")" = no ] && tap_ok "6.12: reparenting no" ||
	tap_fail "6.12" "$(printf '%s' "$j" | grep -A2 'reparenting' | head)"
# Where the kernel bounds each hold at batch (7.2), plan says a latency goal gains nothing; not on 6.12.
p72=$("$PCPTUNECTL" plan --root "$FIXTURES/7.2.13+deb14-amd64-smp8-4G/root" --policy-dir "$pol" 2>&1 | tr -s ' \n' ' ')
p612=$("$PCPTUNECTL" plan --root "$FIXTURES/6.12.117+deb12-amd64-smp8-4G/root" --policy-dir "$pol" 2>&1 | tr -s ' \n' ' ')
case "$p72" in *"latency goal (bulk_free_p99) gains nothing on this kernel"*) ok72=1 ;; *) ok72=0 ;; esac
case "$p612" in *"gains nothing"*) ok612=0 ;; *) ok612=1 ;; esac
[ $ok72 = 1 ] && [ $ok612 = 1 ] && tap_ok "plan: a latency goal gains nothing on 7.2 (said), 6.12 not" ||
	tap_fail "plan's latency note" "7.2: $ok72, 6.12: $ok612"
tap_done
