#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The fast check of `make exitstorm-vm` (the latency goal's comparison in a
# 16-vCPU guest, tests/bench/exitstorm-vm; minutes under TCG, so not run
# here): its table from a guest output captured by a real run
# (tests/bench/exitstorm-vm.d/6.12-smp16.out) is the one in
# 6.12-smp16.table; runs exitstorm left out are left out of the table; an
# output with no run fails; exitstorm refuses --goal-latency auto where it
# cannot work; its statistics (Welch's t, the bootstrap interval) pass their
# self-test; the scripts parse.  Prints TAP.
. "$(dirname "$0")/tap.sh"
vm=$top_srcdir/tests/bench/exitstorm-vm
fx=$top_srcdir/tests/bench/exitstorm-vm.d # not d: tap_fail() sets d
storm=$top_builddir/tests/bench/exitstorm
tmp=$(mktemp -d /tmp/pcptune-exitstorm-vm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

if out=$("$vm" --table "$fx/6.12-smp16.out" 2>&1) && [ "$out" = "$(cat "$fx/6.12-smp16.table")" ]; then
	tap_ok "the table of the captured 16-vCPU run is 6.12-smp16.table"
else
	tap_fail "table of the captured run" "$(diff <(printf '%s\n' "$out") "$fx/6.12-smp16.table")"
fi

# A live run whose goal was solved again after a goal run: its table, with a row per choice.
if out2=$("$vm" --table "$fx/live-resolve.out" 2>&1) && [ "$out2" = "$(cat "$fx/live-resolve.table")" ]; then
	tap_ok "the table of the captured live run with a re-solved goal is live-resolve.table"
else
	tap_fail "table of the live run" "$(diff <(printf '%s\n' "$out2") "$fx/live-resolve.table")"
fi
choices=$(grep -c '^goal choice ' "$fx/live-resolve.out")
rows=$(printf '%s\n' "$out2" | grep -c '(goal')
resolved=$(printf '%s\n' "$out2" | grep -c 're-solved after run ')
row_runs=$(printf '%s\n' "$out2" | awk -F'|' '$2 ~ /\(goal/ { n += $3 } END { print n + 0 }')
if [ "$choices" -ge 2 ] && [ "$rows" = "$choices" ] && [ "$resolved" = $((choices - 1)) ] && [ "$row_runs" -gt 0 ]; then
	tap_ok "each of the $choices goal choices is a row ($resolved re-solved), $row_runs goal runs in them"
else
	tap_fail "goal choices as rows" "choices $choices rows $rows re-solved $resolved runs $row_runs"
fi

# The allocator's buddy traffic per chunk (exitstorm's summary line after a fraction's first line) becomes
# a column: its figures in that fraction's row, "-" in the others.
awk '{ print } /^  minimum \(fraction 6088, / { print "          the allocator'"'"'s zone->lock traffic in its 100 ms warm-ups: 453 pages freed to and 457 refilled from the buddy allocator per 2 MiB chunk (534 chunks, 6 runs)" }' \
	"$fx/live-resolve.out" >"$tmp/locks.out"
locks=$("$vm" --table "$tmp/locks.out" | awk -F'|' '$2 ~ /minimum|default/ { printf "%s;", $10 }')
if [ "$locks" = " - ; 453 / 457 ;" ]; then
	tap_ok "the allocator's buddy traffic per chunk is a column ($locks)"
else
	tap_fail "buddy traffic column" "'$locks'"
fi

# Run 1 (fraction 0) flagged by exitstorm: the default's row has one run fewer.
n0=$(printf '%s\n' "$out" | awk -F'|' '$2 ~ /\(default\)/ { print $3 + 0 }')
awk '{ print } /^1 +0 / { print "    (run 1 left out of the summary: the fraction was changed by someone else)" }' \
	"$fx/6.12-smp16.out" >"$tmp/left-out.out"
n1=$("$vm" --table "$tmp/left-out.out" | awk -F'|' '$2 ~ /\(default\)/ { print $3 + 0 }')
if [ -n "$n0" ] && [ "$n0" -gt 1 ] && [ "$n1" = $((n0 - 1)) ]; then
	tap_ok "a run exitstorm left out is left out of the table ($n0 -> $n1 runs at fraction 0)"
else
	tap_fail "left-out run" "before: '$n0' after: '$n1'"
fi

grep -v '^[0-9]' "$fx/6.12-smp16.out" >"$tmp/no-runs.out"
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
	if out=$("$storm" --self-test 2>&1); then
		tap_ok "exitstorm --self-test: $(tail -n 1 <<<"$out")"
	else
		tap_fail "exitstorm --self-test" "$out"
	fi
else
	tap_fail "no $storm (make builds it)"
fi

if bash -n "$vm" && bash -n "$top_srcdir/tests/bench/bulkfree-cost" && sh -n "$fx/kprobe-holds.sh"; then
	tap_ok "exitstorm-vm, bulkfree-cost and exitstorm-vm.d/kprobe-holds.sh parse"
else
	tap_fail "a benchmark script does not parse"
fi
tap_done
