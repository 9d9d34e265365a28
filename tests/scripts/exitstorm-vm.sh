#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The fast check of `make exitstorm-vm` (the latency goal's comparison in a
# 16-vCPU guest, tests/bench/exitstorm-vm; minutes under TCG, so not run
# here): its table from a guest output captured by a real run
# (tests/bench/exitstorm-vm.d/6.12-smp16.out) is the one in
# 6.12-smp16.table; runs exitstorm left out are left out of the table; an
# output with no run fails; exitstorm refuses --goal-latency auto where it
# cannot work; the scripts parse.  Prints TAP.
. "$(dirname "$0")/tap.sh"
vm=$top_srcdir/tests/bench/exitstorm-vm
d=$top_srcdir/tests/bench/exitstorm-vm.d
storm=$top_builddir/tests/bench/exitstorm
tmp=$(mktemp -d /tmp/pcptune-exitstorm-vm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

if out=$("$vm" --table "$d/6.12-smp16.out" 2>&1) && [ "$out" = "$(cat "$d/6.12-smp16.table")" ]; then
	tap_ok "the table of the captured 16-vCPU run is 6.12-smp16.table"
else
	tap_fail "table of the captured run" "$(diff <(printf '%s\n' "$out") "$d/6.12-smp16.table")"
fi

# Run 1 (fraction 0) flagged by exitstorm: the default's row has one run fewer.
n0=$(printf '%s\n' "$out" | awk -F'|' '$2 ~ /\(default\)/ { print $3 + 0 }')
awk '{ print } /^1 +0 / { print "    (run 1 left out of the summary: the fraction was changed by someone else)" }' \
	"$d/6.12-smp16.out" >"$tmp/left-out.out"
n1=$("$vm" --table "$tmp/left-out.out" | awk -F'|' '$2 ~ /\(default\)/ { print $3 + 0 }')
if [ -n "$n0" ] && [ "$n0" -gt 1 ] && [ "$n1" = $((n0 - 1)) ]; then
	tap_ok "a run exitstorm left out is left out of the table ($n0 -> $n1 runs at fraction 0)"
else
	tap_fail "left-out run" "before: '$n0' after: '$n1'"
fi

grep -v '^[0-9]' "$d/6.12-smp16.out" >"$tmp/no-runs.out"
"$vm" --table "$tmp/no-runs.out" >/dev/null 2>&1
rc=$?
[ "$rc" = 1 ] && tap_ok "an output with no run: exit 1" || tap_fail "no runs: exit $rc, expected 1"

if [ -x "$storm" ]; then
	for args in "--goal-latency auto --runs 2" "--goal-latency auto --no-trace" "--goal-latency 12ms"; do
		# shellcheck disable=SC2086 # word splitting wanted
		"$storm" $args >"$tmp/out" 2>&1
		rc=$?
		[ "$rc" = 2 ] && tap_ok "exitstorm $args: exit 2 ($(head -n 1 "$tmp/out"))" ||
			tap_fail "exitstorm $args: exit $rc, expected 2" "$(cat "$tmp/out")"
	done
else
	tap_fail "no $storm (make builds it)"
fi

if bash -n "$vm" && bash -n "$top_srcdir/tests/bench/bulkfree-cost" && sh -n "$d/kprobe-holds.sh"; then
	tap_ok "exitstorm-vm, bulkfree-cost and exitstorm-vm.d/kprobe-holds.sh parse"
else
	tap_fail "a benchmark script does not parse"
fi
tap_done
