#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# reclaim-dying on the live kernel (root): two parents with five children
# each, every child charged 1 MiB of page cache by a process that then exits;
# the children are removed and stay dying; a third parent has only live children.  Dry-run must change nothing; the
# real run must reclaim only the two parents (force-empty: childless on v1,
# memory.reclaim on v2), the dying memcgs must be freed, and a file cached
# outside the test tree must stay cached.  Everything is created below one
# pcptune-test-* parent and removed on any exit.  Prints TAP.
. "$(dirname "$0")/../scripts/tap.sh"
[ "$(id -u)" = 0 ] || tap_skip_all "needs root"
live_lock
if [ -f /sys/fs/cgroup/memory/memory.usage_in_bytes ]; then
	mode=v1 mnt=/sys/fs/cgroup/memory usage=memory.usage_in_bytes
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	mode=v2 mnt=/sys/fs/cgroup usage=memory.current
else
	tap_skip_all "no memory cgroup hierarchy"
fi
# Page cache on tmpfs/ramfs is shmem: without swap nothing can reclaim it, and the test would
# measure the filesystem, not the action.
fstype=$(stat -f -c %T /var/tmp 2>/dev/null)
case "$fstype" in tmpfs|ramfs) tap_skip_all "/var/tmp is $fstype: its pages cannot be reclaimed without swap" ;; esac
name=pcptune-test-reclaim-$$
T=$mnt/$name
data=/var/tmp/$name
tmp=$(mktemp -d /tmp/pcptune-live-reclaim.XXXXXX)
cleanup() {
	rm -rf "$data"
	for d in "$T"/*/*/ "$T"/*/ "$T"/; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
	# The removed cgroups (most of them never charged a page) are freed within moments: let the
	# host-wide dying count settle before the next live test reads it.
	[ $mode = v1 ] && settle dying
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$data"

# v2: exact, inside the test tree (cgroup.stat of its parent).  v1 has only a host-wide count
# (num_cgroups of the memory row minus the hierarchy's directories), which other work on the
# host moves too: its checks allow for 2 of noise.
dying() {
	if [ $mode = v1 ]; then
		echo $(( $(awk '$1 == "memory" { print $3 }' /proc/cgroups) - $(find "$mnt" -type d | wc -l) ))
	elif [ -d "$T" ]; then
		awk '$1 == "nr_dying_subsys_memory" { d = $2; s = 1 } $1 == "nr_dying_descendants" && !s { d = $2 } END { print d }' "$T/cgroup.stat"
	else
		echo 0
	fi
}
noise=0; [ $mode = v1 ] && noise=2
cached_pct() { fincore -b -n -o RES,SIZE "$1" | awk '{ printf "%d", $2 ? 100 * $1 / $2 : 0 }'; }

# The sentinel: cached by this shell, outside the test tree.
head -c 8M /dev/urandom >"$data/sentinel"; cat "$data/sentinel" >/dev/null
[ $mode = v1 ] && settle dying
mkdir "$T"
before_dying=$(dying)
[ $mode = v2 ] && echo +memory >"$T/cgroup.subtree_control"
for p in a b; do
	mkdir "$T/$p"
	[ $mode = v2 ] && echo +memory >"$T/$p/cgroup.subtree_control"
	for c in 1 2 3 4 5; do
		mkdir "$T/$p/c$c"
		sh -c "echo \$\$ >'$T/$p/c$c/cgroup.procs' && head -c 1M /dev/zero >'$data/$p-$c' && cat '$data/$p-$c' >/dev/null"
	done
done
for p in a b; do for c in 1 2 3 4 5; do rmdir "$T/$p/c$c"; done; done
# A parent of 8 live children and no removed one: the percpu of its children is charged to it
# (kernel memory in memory.usage_in_bytes, ~10 KiB per child per possible CPU), and so may be its
# per-CPU charge stock; none of it is held by a dying memcg, so it must not be a holder.
mkdir "$T/l"
[ $mode = v2 ] && echo +memory >"$T/l/cgroup.subtree_control"
for c in 1 2 3 4 5 6 7 8; do mkdir "$T/l/k$c"; done
sleep 1
made_dying=$(dying)
if [ "$made_dying" -ge $((before_dying + 10 - noise)) ]; then
	tap_ok "10 removed children stay dying ($before_dying -> $made_dying host-wide)"
else
	tap_fail "children dying" "$before_dying -> $made_dying"
fi
ua=$(cat "$T/a/$usage")

pol=$tmp/pol; mkdir -p "$pol"
cat >"$pol/50-test.yaml" <<EOY
version: 1
name: test-reclaim
rules:
  - name: dying
    when: memcg.dying > 0
    action:
      reclaim-dying:
        cgroup: auto
        roots: [ "/$name" ]
        force-empty: childless
        max: 64MiB
        step: 4MiB
        timeout: 20s
        refault-window: 2s
EOY
chmod 0644 "$pol/50-test.yaml"

"$PCPTUNED" --dry-run --once --policy-dir "$pol" >"$tmp/dry" 2>&1
ua2=$(cat "$T/a/$usage")
if grep -q "would reclaim 2 subtrees" "$tmp/dry" && [ "$ua2" -ge $((ua * 9 / 10)) ] && [ "$(dying)" -ge $((made_dying - noise)) ]; then
	tap_ok "dry-run names the 2 parents, not the parent of live children only, and reclaims nothing (usage of /a: $ua -> $ua2; /l: $(cat "$T/l/$usage") bytes in usage)"
else
	tap_fail "dry-run" "usage $ua -> $ua2, dying $(dying)" "$(cat "$tmp/dry")"
fi

"$PCPTUNED" --once --policy-dir "$pol" --state-dir "$tmp/state" >"$tmp/run" 2>&1; rc=$?
if [ $rc = 0 ] && grep -q "went through 2 subtrees" "$tmp/run" && grep -q ": 2 reclaimed, 0 with nothing reclaimable," "$tmp/run"; then
	tap_ok "reclaim-dying went through the 2 parents: $(grep -o 'in [0-9.]* s (scan.*cgroups)' "$tmp/run")"
else
	tap_fail "reclaim run" "exit $rc" "$(cat "$tmp/run")"
fi
# The collateral: the refaults of the live cgroups in the 2 reclaimed parents, read before and 2 s after.
if grep -qE "test-reclaim/dying: [0-9]+ refaults in the live cgroups of 2 reclaimed subtrees, from just before each reclaim to 2 s after the run" "$tmp/run"; then
	tap_ok "refaults reported: $(grep -oE '[0-9]+ refaults in the live cgroups of 2 reclaimed subtrees' "$tmp/run")"
else
	tap_fail "refault report" "$(cat "$tmp/run")"
fi
if [ $mode = v2 ]; then
	grep -q "memory.reclaim arguments: " "$tmp/run" && tap_ok "memory.reclaim arguments probed: $(grep -o 'memory.reclaim arguments: .*' "$tmp/run" | head -n 1)" ||
		tap_fail "memory.reclaim probe" "$(cat "$tmp/run")"
fi
wait_for 150 sh -c "[ \$(cat '$T/a/$usage') -lt 1048576 ]" && tap_ok "the parents' page cache is reclaimed ($(cat "$T/a/$usage") bytes left in /a)" ||
	tap_fail "parent usage" "$(cat "$T/a/$usage")"
# Our 10 are freed: the count falls by 10 (v2: back to 0 in the tree; v1: host-wide, where other
# cgroups may die meanwhile, by at least 10 - noise).  v2 on 7.1+: memory.reclaim need not drain the
# CPUs' charge stocks, each of which may keep the last memcg that charged there (Debian 7.2.13: 1 of
# 10 left), as live-reparent.sh allows too.
stock=0
if [ $mode = v2 ] && [ "$(uname -r | cut -d. -f1)" -ge 7 ]; then stock=$(nproc); fi
back() { [ $((made_dying - $(dying))) -ge $((10 - noise - stock)) ]; }
if wait_for 150 back; then tap_ok "the dying memcgs are freed: $made_dying -> $(dying) (before the test: $before_dying; at most $stock left in CPUs' charge stocks)"
else tap_fail "dying freed" "$made_dying -> $(dying), before $before_dying"; fi
pct=$(cached_pct "$data/sentinel")
[ "$pct" -ge 95 ] && tap_ok "a file cached outside the test tree is still cached (${pct}%)" || tap_fail "sentinel evicted (${pct}%)"

# A subtree named explicitly that does not exist (removed meanwhile) is skipped, not an error.  The
# rule must fire although every dying memcg may be gone by now (7.2: all 10 freed, none elsewhere).
sed -i "s|cgroup: auto|cgroup: /$name/gone|; s|when: memcg.dying > 0|when: memcg.dying >= 0|" "$pol/50-test.yaml"
"$PCPTUNED" --once --policy-dir "$pol" --state-dir "$tmp/state" >"$tmp/run2" 2>&1; rc=$?
[ $rc = 0 ] && grep -q "went through 0 subtrees" "$tmp/run2" && tap_ok "a named cgroup that is gone is skipped" ||
	tap_fail "gone cgroup" "exit $rc" "$(cat "$tmp/run2")"
tap_done
