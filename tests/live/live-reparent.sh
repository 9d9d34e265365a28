#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The observation behind the `dying memcg reparenting:` probe (probe-kernel.c),
# on the live kernel (root).  Ten children (v1: 40) each charge 1 MiB of page cache
# through a process that exits, and are removed while that cache is resident.
#  - Without reparenting every cached folio holds its memcg: the ten stay
#    dying for as long as the cache stays (answer `no`); reclaiming the
#    parent's page cache frees them (the pin was the cache).
#  - With LRU folios reparented at offline ("Eliminate Dying Memory Cgroup")
#    the dying count falls back within seconds while the same pages stay
#    cached, now charged to the parent (answer `yes`) -- where nothing else
#    holds them: on a cgroup-writeback file system (ext4, xfs, btrfs) Debian
#    7.2.13 keeps them dying until reclaimed (the inodes' wb, most likely),
#    which passes as long as the reclaim frees them.
# The answer observed must be the one `pcptunectl status --json` gives.
# Everything lives below one ${PCPTUNE_TEST_CGROUP_PREFIX:-pcptune-test}-reparent-PID
# cgroup and /var/tmp directory, removed on any exit.  Prints TAP.
. "$(dirname "$0")/../scripts/tap.sh"
[ "$(id -u)" = 0 ] || tap_skip_all "needs root"
command -v fincore >/dev/null || tap_skip_all "no fincore (util-linux)"
live_lock
if [ -f /sys/fs/cgroup/memory/memory.usage_in_bytes ]; then
	mode=v1 mnt=/sys/fs/cgroup/memory
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	mode=v2 mnt=/sys/fs/cgroup
else
	tap_skip_all "no memory cgroup hierarchy"
fi
fstype=$(stat -f -c %T /var/tmp 2>/dev/null)
case "$fstype" in tmpfs|ramfs) tap_skip_all "/var/tmp is $fstype: its pages cannot be reclaimed without swap" ;; esac
# v2 counts the test tree's own dying memcgs; v1 only the host's, which other work moves too: there
# 40 children, and a quarter of them as the allowance for that noise.
N=10; [ -f /sys/fs/cgroup/memory/memory.usage_in_bytes ] && N=40
name=${PCPTUNE_TEST_CGROUP_PREFIX:-pcptune-test}-reparent-$$
T=$mnt/$name
data=/var/tmp/$name
nopol=$(mktemp -d /tmp/pcptune-live-reparent.XXXXXX) # no policies: status only reports
cleanup() {
	rm -rf "$data" "$nopol"
	for d in "$T"/*/ "$T"/; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$data"

# v2: exact, inside the test tree.  v1: host-wide (num_cgroups of the memory row
# minus the hierarchy's directories), which other work moves too (see N).
dying() {
	if [ $mode = v1 ]; then
		echo $(( $(awk '$1 == "memory" { print $3 }' /proc/cgroups) - $(find "$mnt" -type d | wc -l) ))
	else
		awk '$1 == "nr_dying_subsys_memory" { d = $2; s = 1 } $1 == "nr_dying_descendants" && !s { d = $2 } END { print d + 0 }' "$T/cgroup.stat"
	fi
}
noise=0; [ $mode = v1 ] && noise=$((N / 4))
resident_pct() { # files... -> % of their pages in the page cache
	fincore -b -n -o RES,SIZE "$@" | awk '{ r += $1; s += $2 } END { printf "%d", s ? 100 * r / s : 0 }'
}

[ $mode = v1 ] && settle dying
mkdir "$T"
[ $mode = v2 ] && echo +memory >"$T/cgroup.subtree_control"
before=$(dying)
for c in $(seq 1 $N); do
	mkdir "$T/c$c"
	sh -c "echo \$\$ >'$T/c$c/cgroup.procs' && head -c 1M /dev/urandom >'$data/f$c' && cat '$data/f$c' >/dev/null"
	rmdir "$T/c$c"
done
# Offline and release are asynchronous (RCU, css work): a reparenting kernel frees them in well under 10 s.
gone() { [ $(($(dying) - before)) -le $noise ]; }
wait_for 100 gone
after=$(dying)
pct=$(resident_pct "$data"/f*)
echo "# $mode: dying $before -> $after after removing $N children; their files ${pct}% resident"
if [ "$pct" -lt 50 ]; then
	observed=unknown
	tap_fail "the children's page cache stayed resident (${pct}%): nothing to observe"
elif [ $((after - before)) -ge $((N - noise)) ]; then
	observed=no
	tap_ok "removed memcgs whose page cache is resident (${pct}%) stay dying ($before -> $after): not reparented"
elif [ $((after - before)) -le $noise ]; then
	observed=yes
	tap_ok "removed memcgs were freed while their page cache stays resident (${pct}%): reparented"
else
	observed=unknown
	tap_fail "dying $before -> $after for $N removed children: neither all pinned nor all freed"
fi

if [ $observed = no ]; then
	# The pin is the page cache: reclaim it below the parent and the memcgs go.
	# A CPU's charge stock (memcg_stock) keeps a reference to the last memcg that charged there
	# until it is drained (force_empty drains them first; memory.reclaim need not): one per CPU may
	# stay for that reason.
	if [ $mode = v1 ]; then echo 0 >"$T/memory.force_empty"; else echo 64M >"$T/memory.reclaim" 2>/dev/null; fi
	stock=0; [ $mode = v2 ] && stock=$(nproc)
	freed() { [ $(($(dying) - before)) -le $((noise + stock)) ]; }
	freed_by_reclaim=0
	if wait_for 150 freed; then freed_by_reclaim=1; tap_ok "reclaiming the parent's page cache frees them ($after -> $(dying), at most $stock left in CPUs' charge stocks)"
	else tap_fail "dying after reclaim" "$after -> $(dying), before $before"; fi
fi

json=$("$PCPTUNECTL" status --json --no-owner-check --policy-dir "$nopol" 2>/dev/null)
answer=$(printf '%s' "$json" | awk '/"label": "dying memcg reparenting"/ { f = 1 } f && /"answer"/ { gsub(/[",]/, "", $2); print $2; exit }')
if [ "$observed" != unknown ] && [ "$answer" = "$observed" ]; then
	tap_ok "pcptunectl status says dying memcg reparenting: $answer, as observed on $(uname -r)"
elif [ "$answer" = yes ] && [ "$observed" = no ] && [ "$freed_by_reclaim" = 1 ] &&
	case "$fstype" in ext2/ext3|xfs|btrfs) true ;; *) false ;; esac; then
	# 7.1+ reparents LRU folios, yet files written through cgroup writeback keep their memcg
	# (its wb) until the inodes are switched or evicted: Debian 7.2.13 on ext4 (docs/kernels.md).
	tap_ok "pcptunectl status says reparenting: yes; on $fstype (cgroup writeback) the removed memcgs still stayed dying until reclaimed, which the probe's row says reclaim-dying is still for ($(uname -r))"
else
	tap_fail "probe answer" "pcptunectl: '$answer', observed: $observed on $(uname -r)"
fi
tap_done
