#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The exit-storm rule on the live kernel (root): a few thousand short-lived
# processes forked inside a pcptune-test-* cgroup raise proc.exit_rate past
# the rule's threshold; pcp high must go to the minimum within the rule's
# window and come back once `until:` has held, and a rate hovering between
# the two thresholds must not make it flap.  The fraction is restored and
# the cgroup removed on any exit.  Prints TAP.
. "$(dirname "$0")/../scripts/tap.sh"
knob=/proc/sys/vm/percpu_pagelist_high_fraction
[ "$(id -u)" = 0 ] || tap_skip_all "needs root"
live_lock
[ -w "$knob" ] || tap_skip_all "no writable $knob"
if [ -d /sys/fs/cgroup/memory ] && [ -f /sys/fs/cgroup/memory/cgroup.procs ]; then
	cgp=/sys/fs/cgroup/memory
else
	cgp=/sys/fs/cgroup
fi
knob_save "$knob"; original=${knob_saved[$knob]}
tmp=$(mktemp -d /tmp/pcptune-live-storm.XXXXXX)
cg=$cgp/pcptune-test-exitstorm-$$
pid=""
cleanup() {
	[ -n "$pid" ] && stop_pid "$pid" # it restores what it wrote
	knob_restore "$knob" # what this test wrote (tap.sh); another writer's value is left
	[ -d "$cg" ] && { for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done; sleep 0.2; rmdir "$cg"; }
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Background exits on this host (other work, such as the other tests of a
# parallel make check) would blur the thresholds: wait up to 2 minutes for
# fewer than 50 forks/s over 2 s.
for try in $(seq 60); do
	f0=$(awk '/^processes/ { print $2 }' /proc/stat); sleep 2; f1=$(awk '/^processes/ { print $2 }' /proc/stat)
	quiet=$(( (f1 - f0) / 2 ))
	[ "$quiet" -lt 50 ] && break
done
[ "$quiet" -lt 50 ] || tap_skip_all "the host forks $quiet processes/s already: too busy for exit-rate thresholds"
echo "# background: $quiet forks/s"

mkdir "$cg"
mkdir -p "$tmp/pol"
cat >"$tmp/pol/50-storm.yaml" <<EOY
version: 1
name: test-storm
rules:
  - name: exit-storm
    when: proc.exit_rate > 400/s for 2s
    pcp: { high: minimum }
    until: proc.exit_rate < 100/s for 4s
EOY
chmod 0644 "$tmp/pol/50-storm.yaml"
"$PCPTUNED" --policy-dir "$tmp/pol" --state-dir "$tmp/state" --no-metrics >"$tmp/log" 2>&1 &
pid=$!
log_has() { grep -q -- "$1" "$tmp/log"; }
wait_for 50 log_has "Listening to process exits" || tap_skip_all "proc connector unavailable: $(cat "$tmp/log")"
changes() { grep -c "vm.percpu_pagelist_high_fraction: \|restored vm.percpu_pagelist_high_fraction" "$tmp/log"; }

# A storm: ~1000 exits/s for about 6 s, from inside the test cgroup.
storm() { # seconds per-batch-sleep
	sh -c "echo \$\$ >'$cg/cgroup.procs'; end=\$((\$(date +%s) + $1)); while [ \$(date +%s) -lt \$end ]; do /bin/true; sleep $2; done" 
}
t0=$(date +%s.%N)
storm 6 0 &
spid=$!
frac_changed() { [ "$(cat "$knob")" != "$original" ]; }
if wait_for 80 frac_changed; then
	knob_ours "$knob" "$(cat "$knob")" # the test's daemon wrote it
	t1=$(date +%s.%N)
	tap_ok "during the storm pcp high goes to the minimum: $(cat "$knob") after $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s (rule: > 400/s for 2 s)"
else
	tap_fail "storm" "fraction $(cat "$knob")" "$(cat "$tmp/log")"
fi
at_floor_val=$(cat "$knob")
wait "$spid"

# Hovering between the thresholds (100 < rate < 400) keeps it where it is: no flapping.
storm 6 0.01 &
spid=$!
sleep 6; wait "$spid"
if [ "$(cat "$knob")" = "$at_floor_val" ]; then tap_ok "a rate between the thresholds keeps the minimum (hysteresis)"; else
	tap_fail "hysteresis" "fraction $(cat "$knob")" "$(cat "$tmp/log")"; fi

# Quiet: until: holds for 4 s, then the previous value comes back.  The rate is host-wide: other
# work (a parallel make check, builds) may keep it above 100/s, and then staying is right.  So the
# test measures the host's fork rate itself, second by second: the fraction must be back once the
# host has had 9 quiet seconds in a row (below 80/s, a margin under the rule's 100/s; the rule needs
# 4); if the host never gives 9 quiet seconds in 2 minutes, the check is skipped, never passed.
forks() { awk '/^processes/ { print $2 }' /proc/stat; }
back() { [ "$(cat "$knob")" = "$original" ]; }
# wait_quiet_back: 0 back after quiet, 1 quiet but not back (a failure), 2 the host was never quiet.
wait_quiet_back() {
	local quiet_s=0 i f0 f1
	for i in $(seq 120); do
		back && return 0
		f0=$(forks); sleep 1; f1=$(forks)
		if [ $((f1 - f0)) -lt 80 ]; then quiet_s=$((quiet_s + 1)); else quiet_s=0; fi
		[ $quiet_s -ge 9 ] && { back; return $(( $? ? 1 : 0 )); }
	done
	back && return 0
	return 2
}
wait_quiet_back; rc=$?
case $rc in
0) tap_ok "after the storm the fraction returns to $original" ;;
1) tap_fail "return" "fraction $(cat "$knob") after 9 s below 80 forks/s" "$(cat "$tmp/log")" ;;
*) tap_ok "# SKIP return: the host never had 9 quiet seconds in a row in 2 minutes (fraction $(cat "$knob"))" ;;
esac
if [ $rc = 0 ]; then
	n=$(changes)
	[ "$n" -eq 2 ] && tap_ok "exactly one change and one restore (no flapping)" || tap_fail "changes: $n" "$(cat "$tmp/log")"
	# A rate below the upper threshold never triggers (judged only if the host itself stayed
	# below 150/s of other work meanwhile: storm + host must stay under 400/s).
	f0=$(forks); s0=$(date +%s.%N)
	storm 5 0.01 &
	spid=$!; sleep 5; wait "$spid"; sleep 1
	f1=$(forks); s1=$(date +%s.%N)
	total=$(awk -v n=$((f1 - f0)) -v a="$s0" -v b="$s1" 'BEGIN { printf "%d", n / (b - a) }')
	if [ "$(changes)" -eq 2 ] && back; then tap_ok "a moderate rate (below 400/s) does not trigger ($total forks/s in all)"
	elif [ "$total" -ge 300 ]; then tap_ok "# SKIP moderate: the host forked $total/s in all during it, too close to 400/s to judge"
	else tap_fail "moderate ($total forks/s in all)" "$(cat "$tmp/log")"; fi
else
	tap_ok "# SKIP changes: the return could not be judged"
	tap_ok "# SKIP moderate: the return could not be judged"
fi
kill -TERM "$pid"; wait "$pid"; pid=""
back && tap_ok "stop leaves the original value" || tap_fail "stop" "fraction $(cat "$knob")"
tap_done
