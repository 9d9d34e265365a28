#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/vm/reparent.guest.sh: guest side of tests/vm/reparent-vm (busybox sh,
# cgroup v2, run by vmrun -f with contrib/kernel/make-overlay's pcptunectl).
# The observation of tests/live/live-reparent.sh, in a throw-away guest: N
# children of a test parent each charge 1 MiB of page cache (a file on
# $DATA, tmpfs: shmem folios sit on the LRU and are charged like any page
# cache) through a process that exits, and are removed with the cache still
# resident.  Then, every 0.5 s for up to 10 s, the parent's cgroup.stat
# nr_dying_descendants and memory.stat file.  Prints key=value lines:
#   before= after= (dying descendants), parent_file_kb= (cache charged to the
#   parent after the removals), resident_kb= (the files' size, still there),
#   freed_after_s=, observed=yes|no|unclear, probe= (pcptunectl status answer),
#   kernel=
N=${1:-10}
FS=${2:-tmpfs}
DATA=/tmp/reparent-data
if [ "$FS" = ext4 ]; then
	# Real page cache on a disk filesystem: brd + ext4 from the overlay's /kmods (load-order).
	while read -r m; do
		case "$m" in brd.ko) insmod "/kmods/$m" rd_nr=1 rd_size=131072 ;; *) insmod "/kmods/$m" ;; esac
	done </kmods/load-order
	mkdir -p "$DATA"
	mke2fs -q /dev/ram0 >/dev/null 2>&1 && mount -t ext4 /dev/ram0 "$DATA" || { echo "error=no ext4 on /dev/ram0"; exit 1; }
fi
echo "fs=$(awk -v d="$DATA" '$2 == d { print $3 }' /proc/mounts)"
CG=/sys/fs/cgroup
T=$CG/pcptune-test-reparent
mkdir -p "$DATA"
echo +memory >"$CG/cgroup.subtree_control" || { echo "error=cannot enable memory in the root"; exit 1; }
mkdir "$T" && echo +memory >"$T/cgroup.subtree_control" || { echo "error=cannot create $T"; exit 1; }
dying() { awk '$1 == "nr_dying_descendants" { print $2 }' "$T/cgroup.stat"; }
file_kb() { awk '$1 == "file" { print int($2 / 1024) }' "$T/memory.stat"; }
before=$(dying)
i=1
while [ "$i" -le "$N" ]; do
	mkdir "$T/c$i"
	sh -c "echo \$\$ >$T/c$i/cgroup.procs && head -c 1048576 /dev/urandom >$DATA/f$i"
	rmdir "$T/c$i"
	i=$((i + 1))
done
echo "kernel=$(uname -r)"
echo "before=$before"
echo "right_after=$(dying)"
t=0 freed=""
while [ "$t" -lt 20 ]; do
	if [ "$(($(dying) - before))" -le 0 ]; then freed=$t; break; fi
	sleep 0.5
	t=$((t + 1))
done
after=$(dying)
echo "after=$after"
echo "freed_after_s=${freed:+$(awk -v t="$freed" 'BEGIN { printf "%.1f", t / 2 }')}"
echo "parent_file_kb=$(file_kb)"
echo "resident_kb=$(du -k -s "$DATA" | cut -f1)"
if [ "$FS" = ext4 ]; then
	# What else keeps them: dirty pages (cgroup writeback ties each inode to its memcg's wb)?
	sync
	sleep 5
	echo "after_sync_5s=$(dying)"
	sleep 40
	echo "after_sync_45s=$(dying)"
fi
if [ $((after - before)) -le 0 ]; then obs=yes
elif [ $((after - before)) -ge "$N" ]; then obs=no
else obs=unclear; fi
echo "observed=$obs"
ans=$(pcptunectl status --json --no-owner-check --policy-dir /tmp 2>/dev/null |
	awk '/"label": "dying memcg reparenting"/ { f = 1 } f && /"answer"/ { gsub(/[",]/, "", $2); print $2; exit }')
echo "probe=$ans"
pcptunectl status --no-owner-check --policy-dir /tmp 2>/dev/null | grep -i -A2 'reparenting' | head -n 4 | sed 's/^/status: /'
rm -rf "$DATA"
