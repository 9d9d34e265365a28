#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Percpu split and the percpu_stats summary on the live kernel (root):
# with 200 memcgs created under pcptune-test-15-split-<pid>, status --json
# counts them as live, splits Percpu with the per-memcg cost, reads
# percpu_stats (debugfs mounted by the test if needed, unmounted after) with
# its read time, finds it consistent and measures fragmentation; the memcg ID
# count follows the live count.  Every cgroup it creates is removed on any
# exit.  Prints TAP.
. "$(dirname "$0")/../scripts/tap.sh"
[ "$(id -u)" = 0 ] || tap_skip_all "needs root"
live_lock
empty=$top_srcdir/tests/policies/empty
tmp=$(mktemp -d /tmp/pcptune-live-split.XXXXXX)
mounted_debugfs=0
parent=
cleanup() {
	if [ -n "$parent" ] && [ -d "$parent" ]; then
		for d in "$parent"/m*; do [ -d "$d" ] && rmdir "$d"; done
		rmdir "$parent"
	fi
	[ $mounted_debugfs = 1 ] && umount /sys/kernel/debug
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
status_json() { "$PCPTUNECTL" status --json --state-dir "$tmp/state" --no-owner-check --policy-dir "$empty" >"$1" 2>&1; }
val() { sed -n "s/^ *\"$1\": \([0-9a-z\"]*\),*$/\1/p" "$2" | head -n 1; }
pval() { sed -n "/^  \"percpu\": {/,/^  }/s/^ *\"$1\": \([0-9a-z]*\),*$/\1/p" "$2" | head -n 1; }

if [ ! -r /sys/kernel/debug/percpu_stats ] && [ -d /sys/kernel/debug ] && mount -t debugfs none /sys/kernel/debug 2>/dev/null; then
	mounted_debugfs=1
fi
status_json "$tmp/before"
mount=$(sed -n 's/^ *"mount": "\(.*\)",*$/\1/p' "$tmp/before" | head -n 1 | tr -d '\\')
[ -n "$mount" ] && [ -d "$mount" ] || tap_skip_all "no memory cgroup hierarchy"
parent=$mount/pcptune-test-15-split-$$
mkdir "$parent" || tap_skip_all "cannot create $parent"
[ -f "$mount/cgroup.subtree_control" ] && echo +memory >"$parent/cgroup.subtree_control"
# The live count is the whole host's: a cgroup that something else on the host
# removes between the two readings would look like one of ours missing.  So
# measure again (at most 3 times) until the host held still.
for attempt in 1 2 3; do
	status_json "$tmp/before"
	live0=$(val live "$tmp/before")
	for i in $(seq 1 200); do mkdir "$parent/m$i"; done
	status_json "$tmp/j"
	live=$(val live "$tmp/j")
	[ -n "$live" ] && [ -n "$live0" ] && [ "$live" -eq $((live0 + 200)) ] && break
	[ $attempt = 3 ] && break
	for i in $(seq 1 200); do rmdir "$parent/m$i"; done
	sleep 1
done
cost=$(sed -n 's/^ *"memcg_cost_bytes": \([0-9.]*\),*$/\1/p' "$tmp/j")
total=$(pval total_bytes "$tmp/j") l=$(pval live_memcgs_bytes "$tmp/j") d=$(pval dying_memcgs_bytes "$tmp/j")
o=$(pval other_bytes "$tmp/j") dying=$(val dying "$tmp/j")
if [ -n "$live" ] && [ "$live" -eq $((live0 + 200)) ] && [ -n "$cost" ] &&
	awk -v t="$total" -v l="$l" -v d="$d" -v o="$o" -v n="$live" -v c="$cost" -v y="$dying" \
		'BEGIN { exit !(l + d + o == t && (l - n * c) ^ 2 < 1 && (d - y * c * 0.98) ^ 2 < 1) }'; then
	tap_ok "split with 200 more memcgs: $total B = live $l ($live x $cost B) + dying $d + other $o"
else
	tap_fail "live split" "live0 $live0" "$(grep -A25 '"percpu"' "$tmp/j")"
fi
used=$(sed -n '/"ids": {/,/}/s/^ *"used": \([0-9]*\),*$/\1/p' "$tmp/j")
[ "$used" = "$live" ] && tap_ok "memcg IDs used = live memcgs ($used)" || tap_fail "memcg IDs" "used $used, live $live"

if [ -r /sys/kernel/debug/percpu_stats ]; then
	state=$(sed -n '/"percpu_stats": {/,/}/s/^ *"state": "\([a-z]*\)",*$/\1/p' "$tmp/j")
	usec=$(sed -n '/"percpu_stats": {/,/}/s/^ *"read_usec": \([0-9]*\),*$/\1/p' "$tmp/j")
	frag=$(pval fragmentation_bytes "$tmp/j")
	if [ "$state" = read ] && [ -n "$usec" ] && [ "$usec" -gt 0 ] && [ -n "$frag" ] && [ "$frag" != null ] &&
		[ "$frag" -le "$o" ]; then
		tap_ok "percpu_stats read in $usec us, consistent; fragmentation $frag B measured (within other $o B)"
	else
		tap_fail "percpu_stats on the live host" "$(grep -A12 '"percpu_stats"' "$tmp/j")" "$(grep fragmentation "$tmp/j")"
	fi
	"$PCPTUNECTL" status --state-dir "$tmp/state" --no-owner-check --policy-dir "$empty" >"$tmp/o" 2>&1
	grep -q "^percpu: .* = live memcgs .* + dying memcgs .* + other .* (fragmentation .*)$" "$tmp/o" &&
		grep -q "^percpu_stats: [0-9]* chunks (" "$tmp/o" && grep -q "^  read in [0-9]* us, pcpu_lock held with IRQs off$" "$tmp/o" &&
		tap_ok "status text: $(grep '^percpu' "$tmp/o" | tr '\n' ';')" || tap_fail "status text" "$(cat "$tmp/o")"
else
	tap_ok "percpu_stats # SKIP no /sys/kernel/debug/percpu_stats (CONFIG_PERCPU_STATS off)"
fi

for i in $(seq 1 200); do rmdir "$parent/m$i"; done
rmdir "$parent" && parent=
status_json "$tmp/after"
live2=$(val live "$tmp/after")
[ -n "$live2" ] && [ "$live2" -le "$live" ] && [ "$live2" -lt "$live" ] && tap_ok "after removal: $live2 live memcgs" ||
	tap_fail "after removal" "$(grep -A6 '"memcg"' "$tmp/after")"
tap_done
