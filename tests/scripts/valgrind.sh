#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The daemon under valgrind (memcheck): a dry-run report on fixtures and the
# live kernel, and a daemon loop on a fake root that samples, reloads and
# stops.  Any error or definite/indirect leak fails.  Prints TAP.
. "$(dirname "$0")/tap.sh"

[ -n "${VALGRIND:-}" ] && [ "$VALGRIND" != no ] || VALGRIND=$(command -v valgrind)
[ -x "$VALGRIND" ] || tap_skip_all "valgrind not installed"
tmp=$(mktemp -d /tmp/pcptune-valgrind.XXXXXX)
pid=""
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
vg() { "$VALGRIND" -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
	--show-leak-kinds=definite,indirect "$@"; }
pol=$tmp/pol; mkdir -p "$pol"; cp "$top_srcdir"/tests/policies/minimum/*.yaml "$pol"/; chmod 0644 "$pol"/*

for set in 6.1.192-vmtest-smp16-numa2-8G 6.12.117+deb12-amd64-smp8-4G 6.18.44-fc-live-smp2-24G; do
	vg "$PCPTUNED" --dry-run --once --root "$FIXTURES/$set/root" --policy-dir "$pol" >"$tmp/out" 2>&1; rc=$?
	[ $rc = 0 ] && tap_ok "valgrind: dry-run report on $set" || tap_fail "valgrind dry-run $set" "exit $rc" "$(cat "$tmp/out")"
done
vg "$PCPTUNED" --dry-run --once --json --root "$FIXTURES/6.18.44-fc-live-smp2-24G/root" --policy-dir "$pol" >"$tmp/out" 2>&1
rc=$?; [ $rc = 0 ] && tap_ok "valgrind: JSON report" || tap_fail "valgrind JSON" "$(cat "$tmp/out")"
vg "$PCPTUNED" --dry-run --once >"$tmp/out" 2>&1
rc=$?; [ $rc = 0 ] && tap_ok "valgrind: dry-run on the live kernel with the shipped policies" || tap_fail "valgrind live" "$(cat "$tmp/out")"
vg "$PCPTUNECTL" --root "$FIXTURES/6.1.0-57-amd64-smp8-4G/root" --state-dir "$tmp/none" --policy-dir "$pol" status >"$tmp/out" 2>&1
rc=$?; [ $rc = 0 ] && tap_ok "valgrind: pcptunectl status" || tap_fail "valgrind status" "$(cat "$tmp/out")"
vg "$PCPTUNECTL" validate --no-owner-check "$top_srcdir/tests/policies/good" "$top_srcdir/tests/policies/bad" >"$tmp/out" 2>&1
rc=$?; [ $rc = 1 ] && tap_ok "valgrind: pcptunectl validate over good and bad policies" || tap_fail "valgrind validate" "exit $rc" "$(cat "$tmp/out")"

vg "$PCPTUNECTL" plan --json --root "$tmp/nonexistent" >"$tmp/out" 2>&1
rc=$?; [ $rc = 1 ] && tap_ok "valgrind: plan --json on a missing root exits 1 without a leak" || tap_fail "valgrind plan missing" "exit $rc" "$(cat "$tmp/out")"

if [ "$(id -u)" = 0 ]; then
	# A Kubernetes ConfigMap volume: ..data -> ..<timestamp>, NAME -> ..data/NAME, the volume 0777.
	cm=$tmp/cm; mkdir -m 0777 "$cm"; chmod 0777 "$cm"; mkdir "$cm/..2026_12_01_00_00_00.1"
	cp "$pol"/*.yaml "$cm/..2026_12_01_00_00_00.1/"; ln -s ..2026_12_01_00_00_00.1 "$cm/..data"
	for f in "$pol"/*.yaml; do ln -s "..data/${f##*/}" "$cm/${f##*/}"; done
	vg "$PCPTUNECTL" validate "$cm" >"$tmp/out" 2>&1
	rc=$?; [ $rc = 0 ] && tap_ok "valgrind: pcptunectl validate of a ConfigMap volume" || tap_fail "valgrind validate ConfigMap" "exit $rc" "$(cat "$tmp/out")"
	mkdir -p "$tmp/pol2"; cp "$pol"/*.yaml "$tmp/pol2/"; ln -s pol "$tmp/pol-link"
	cp -r "$FIXTURES/6.18.44-fc-live-smp2-24G/root" "$tmp/root"; chmod -R u+w "$tmp/root"; mkdir "$tmp/metrics"
	# Not through vg(): $! must be valgrind itself, not a subshell.
	"$VALGRIND" -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		--show-leak-kinds=definite,indirect \
		"$PCPTUNED" --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$tmp/pol-link" --interval 200ms \
		--metrics-dir "$tmp/metrics" >"$tmp/log" 2>&1 &
	pid=$!
	wait_for 300 grep -q "Confirmed\|do not show the model" "$tmp/log"
	sleep 1; kill -HUP $pid; sleep 1.5
	# A change in the directory, then the symlinked directory retargeted: two watched reloads.
	touch "$pol"/*.yaml; sleep 1.5
	ln -sfn pol2 "$tmp/pol-link"; sleep 1.5
	vg "$PCPTUNECTL" --root "$tmp/root" --state-dir "$tmp/state" liveness >"$tmp/out" 2>&1
	rc=$?; [ $rc = 0 ] && tap_ok "valgrind: pcptunectl liveness" || tap_fail "valgrind liveness" "exit $rc" "$(cat "$tmp/out")"
	wrote_metrics=no; [ -s "$tmp/metrics/pcptune.prom" ] && wrote_metrics=yes
	kill -TERM $pid; wait $pid; rc=$?; pid=""
	if [ $rc = 0 ] && [ "$(cat "$tmp/root/proc/sys/vm/percpu_pagelist_high_fraction")" = 0 ] &&
		[ "$(grep -c '^Loaded 1 policy from' "$tmp/log")" = 4 ] && [ $wrote_metrics = yes ] &&
		[ ! -e "$tmp/metrics/pcptune.prom" ]; then
		tap_ok "valgrind: daemon loop with samples, metrics, reloads (SIGHUP, inotify, retargeted symlink) and restore is clean"
	else
		tap_fail "valgrind daemon loop" "exit $rc, metrics written: $wrote_metrics" "$(cat "$tmp/log")"
	fi
	# A stop that keeps (--on-stop=keep), a start that adopts, a stop that asks systemd (auto: restores here).
	for mode in keep auto; do
		"$VALGRIND" -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
			--show-leak-kinds=definite,indirect \
			"$PCPTUNED" --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$tmp/pol-link" --interval 200ms \
			--on-stop=$mode >"$tmp/log-$mode" 2>&1 &
		pid=$!
		wait_for 300 grep -q "Confirmed\|do not show the model\|Adopted" "$tmp/log-$mode"; sleep 1
		[ $mode = auto ] && { vg "$PCPTUNECTL" --state-dir "$tmp/state" check >"$tmp/out" 2>&1; crc=$?; }
		kill -TERM $pid; wait $pid; rc=$?; pid=""
		frac=$(cat "$tmp/root/proc/sys/vm/percpu_pagelist_high_fraction")
		if [ $mode = keep ] && [ $rc = 0 ] && [ "$frac" != 0 ] && [ -e "$tmp/state/$(root_state_name "$tmp/root" handover)" ]; then
			tap_ok "valgrind: a stop with --on-stop=keep keeps $frac and marks the journal (clean)"
		elif [ $mode = auto ] && [ $rc = 0 ] && [ "$frac" = 0 ] && grep -q Adopted "$tmp/log-$mode" && [ "$crc" = 0 ]; then
			tap_ok "valgrind: the next start adopts, pcptunectl check says '$(cat "$tmp/out")', --on-stop=auto restores (clean)"
		else
			tap_fail "valgrind --on-stop=$mode" "exit $rc, fraction $frac, check ${crc:-}" "$(cat "$tmp/log-$mode" "$tmp/out")"
		fi
	done
fi
tap_done
