#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/vm/systemd/reclaim.guest.sh: runs in the systemd guest (vmrun -f).
# tests/live/live-reclaim.sh as it is, against the installed /usr/sbin/pcptuned:
#   R2  /var/tmp on ext4 on a brd RAM disk (real page cache; brd's own pages
#       are not charged to any memcg), modules from the run's overlay (or
#       built in: the contrib kernels);
# then, on that ext4, the kernel probes' observations: R3 live-reparent.sh
# (dying memcg reparenting) and R4 live-bulkfree.sh (batched bulk frees).
# (There is no R1 any more: on the image's own root, tmpfs, live-reclaim.sh
# skips, since the children's "page cache" is shmem, which no reclaim evicts
# without swap; diagnose() still prints what reclaim does there.)
# Prints the TAP of each run (as "#   " lines) and PASS/FAIL/SKIP lines.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
export PCPTUNED=/usr/sbin/pcptuned
export top_srcdir=/usr/share/pcptune-vmtest/src
OUT=${VMTEST_OUT:-/tmp/vmtest-out}
mkdir -p "$OUT"
failed=0
ev() { sed 's/^/#   /'; }

echo "# kernel $(uname -r), $(nproc) CPUs, systemd $(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')"
echo "# cgroup: $(stat -f -c %T /sys/fs/cgroup) on /sys/fs/cgroup; controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
echo "# v1 memory hierarchy: $([ -f /sys/fs/cgroup/memory/memory.usage_in_bytes ] && echo yes || echo no); memory.reclaim in the root: $([ -e /sys/fs/cgroup/memory.reclaim ] && echo yes || echo no)"
echo "# swap: $(awk '/^SwapTotal/ { print $2 " kB" }' /proc/meminfo); fraction at boot: $(cat /proc/sys/vm/percpu_pagelist_high_fraction)"

run_live() { # ID NAME
	local id=$1 name=$2 fs log rc
	fs=$(stat -f -c %T /var/tmp)
	log=$OUT/live-reclaim-$id.tap
	echo "# $id: /var/tmp is $fs ($(findmnt -n -o SOURCE,FSTYPE --target /var/tmp | tr -s ' '))"
	read -r t0 _ </proc/uptime
	bash "$top_srcdir/tests/live/live-reclaim.sh" >"$log" 2>&1
	rc=$?
	read -r t1 _ </proc/uptime
	ev <"$log"
	# Slow or stuck?  The test waits 15 s for the dying memcgs to go.
	if grep -q '^not ok.*dying' "$log"; then
		local d0 d1
		d0=$(awk '$1 == "nr_dying_descendants" { print $2 }' /sys/fs/cgroup/cgroup.stat)
		sleep 30
		d1=$(awk '$1 == "nr_dying_descendants" { print $2 }' /sys/fs/cgroup/cgroup.stat)
		echo "# $id: dying memcgs host-wide when the test ended: $d0; 30 s later: $d1"
	fi
	if [ "$rc" = 0 ] && grep -q '^1\.\.[1-9]' "$log" && ! grep -q '^not ok' "$log"; then
		echo "PASS $id $name - live-reclaim.sh: $(grep -c '^ok' "$log") ok in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s, /var/tmp $fs"
	elif [ "$rc" = 0 ] && grep -q '^1\.\.0 # SKIP' "$log"; then
		echo "SKIP $id $name - live-reclaim.sh: $(sed -n 's/^1\.\.0 # SKIP //p' "$log")"
	else
		failed=$((failed + 1))
		echo "FAIL $id $name - live-reclaim.sh exit $rc: $(grep -c '^not ok' "$log") not ok ($(grep '^not ok' "$log" | sed 's/^not ok [0-9]* - //' | paste -sd';'))"
	fi
}

# What one child of live-reclaim.sh leaves behind when /var/tmp is the
# initramfs root, and what memory.reclaim and pcptuned make of it.
diagnose() { # DIR-for-the-file
	local G=/sys/fs/cgroup/pcptune-diag f=$1/pcptune-diag.$$ pol
	mkdir -p "$G" && echo +memory >"$G/cgroup.subtree_control" && mkdir -p "$G/c1" || return
	sh -c "echo \$\$ >$G/c1/cgroup.procs && head -c 1M /dev/zero >$f && cat $f >/dev/null"
	rmdir "$G/c1"
	echo "# diagnosis ($(stat -f -c %T "$1")): a removed child that wrote 1 MiB to $f; parent memory.current $(cat "$G/memory.current")," \
		"memory.stat: $(grep -E '^(anon|file|shmem|unevictable|active_file|inactive_file) ' "$G/memory.stat" | paste -sd' ')"
	pol=$(mktemp -d)
	printf 'version: 1\nname: diag\nrules:\n  - name: dying\n    when: memcg.dying > 0\n    action:\n      reclaim-dying: { cgroup: auto, roots: [ "/pcptune-diag" ], max: 16MiB, step: 4MiB, timeout: 10s }\n' >"$pol/50-diag.yaml"
	chmod 0644 "$pol/50-diag.yaml"
	/usr/sbin/pcptuned --once --policy-dir "$pol" --state-dir "$pol/state" 2>&1 | grep 'reclaim-dying went' | sed 's/^/# diagnosis: pcptuned --once: /'
	echo "# diagnosis: memory.current after pcptuned $(cat "$G/memory.current"); memory.force_empty exists: $([ -e "$G/memory.force_empty" ] && echo yes || echo no)"
	local err
	err=$( { echo 4M >"$G/memory.reclaim"; } 2>&1 ) && err="ok"
	echo "# diagnosis: then echo 4M > memory.reclaim: ${err##*: }; memory.current $(cat "$G/memory.current"); dying host-wide $(awk '$1 == "nr_dying_descendants" { print $2 }' /sys/fs/cgroup/cgroup.stat)"
	rm -f "$f"; rm -rf "$pol"
	rmdir "$G" 2>/dev/null
}

# "probes": only R3 and R4 (the contrib kernels, whose reclaim-dying check 14 of guest.sh covers).
only_probes=0; [ "${1:-}" = probes ] && only_probes=1
[ "$only_probes" = 0 ] && diagnose /var/tmp

# The kernel probes' observations (probe-kernel.c): each live test checks that
# pcptunectl answers what it observes on this kernel.
run_probe() { # ID NAME SCRIPT
	local log=$OUT/$2.tap rc
	PCPTUNECTL=/usr/bin/pcptunectl bash "$top_srcdir/tests/live/$3" >"$log" 2>&1
	rc=$?
	ev <"$log"
	if [ "$rc" = 0 ] && grep -q '^1\.\.[1-9]' "$log" && ! grep -q '^not ok' "$log"; then
		echo "PASS $1 $2 - $3: $(grep '^ok' "$log" | tail -n 1 | sed 's/^ok [0-9]* - //')"
	elif grep -q '^1\.\.0 # SKIP' "$log"; then
		echo "SKIP $1 $2 - $3: $(sed -n 's/^1\.\.0 # SKIP //p' "$log")"
	else
		failed=$((failed + 1))
		echo "FAIL $1 $2 - $3 exit $rc: $(grep '^not ok' "$log" | sed 's/^not ok [0-9]* - //' | paste -sd';')"
	fi
}

kd=/usr/share/pcptune-vmtest/kmods
if [ -b /dev/ram0 ] || { [ -s "$kd/load-order" ] && [ -x /usr/local/bin/busybox ]; }; then
	ok=1
	[ -s "$kd/load-order" ] && while read -r m; do
		case "$m" in
		brd.ko) /usr/local/bin/busybox insmod "$kd/$m" rd_nr=1 rd_size=262144 2>&1 | ev ;;
		*) /usr/local/bin/busybox insmod "$kd/$m" 2>&1 | ev ;;
		esac
	done <"$kd/load-order"
	if [ -b /dev/ram0 ] && mkfs.ext4 -q -F /dev/ram0 2>&1 | ev && mount -t ext4 /dev/ram0 /var/tmp 2>&1 | ev &&
		[ "$(stat -f -c %T /var/tmp)" = ext2/ext3 ]; then
		if [ "$only_probes" = 0 ]; then
			run_live R2 live-reclaim-ext4
			diagnose /var/tmp
		fi
		run_probe R3 probe-reparent live-reparent.sh
		run_probe R4 probe-bulkfree live-bulkfree.sh
		umount /var/tmp
	else
		ok=0
	fi
	[ "$ok" = 1 ] || { failed=$((failed + 1)); echo "FAIL R2 live-reclaim-ext4 - could not set up ext4 on /dev/ram0 (modules: $(paste -sd' ' "$kd/load-order" 2>/dev/null))"; }
else
	echo "SKIP R2 live-reclaim-ext4 - no brd/ext4 modules in the overlay"
fi
[ "$failed" = 0 ]
