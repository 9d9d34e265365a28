#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# In the churn-vm guest (systemd image, cgroup v2): ext4 on /dev/ram0 for the
# data files (the initramfs root is tmpfs: its pages are shmem), swap on
# /dev/ram1, then tests/bench/churn with a live sibling that holds anonymous
# memory, and an A/B of memory.reclaim on a live sibling's parent with and
# without swappiness=0.  Arguments: PARENTS CHILDREN RUNS OBSERVE CACHE [LRUGEN: y, n or - (as booted)]
# [DIRTY: vm.dirty_expire_centisecs and vm.dirty_writeback_centisecs, or - (as booted)].
set -u
P=${1:-100} C=${2:-10} RUNS=${3:-2} OBS=${4:-60} CACHE=${5:-64KiB} LRUGEN=${6:--} DIRTY=${7:--}
K=/usr/share/pcptune-churn
BB=/usr/local/bin/busybox
echo "guest: kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print $2 }' /proc/meminfo) kB"
# Debian kernels: brd and ext4 are modules; the contrib kernels have them built in (brd.* on the command line).
[ -s "$K/kmods/load-order" ] && while read -r m; do
	case "$m" in
	brd.ko) $BB insmod "$K/kmods/$m" rd_nr=2 rd_size=524288 ;;
	*) $BB insmod "$K/kmods/$m" ;;
	esac
done <"$K/kmods/load-order"
mkfs.ext4 -q -F /dev/ram0 && mount -t ext4 /dev/ram0 /var/tmp || { echo "FAIL: ext4 on /dev/ram0"; exit 1; }
mkswap /dev/ram1 >/dev/null && swapon /dev/ram1 || { echo "FAIL: swap on /dev/ram1"; exit 1; }
# The multi-gen LRU evicts at least MIN_LRU_BATCH (64) folios from a live memcg its walk scans at all
# (evict_folios(), mm/vmscan.c 6.12); the classic lists scan lru_size >> priority pages (get_scan_count()).
[ "$LRUGEN" != - ] && [ -w /sys/kernel/mm/lru_gen/enabled ] && echo "$LRUGEN" >/sys/kernel/mm/lru_gen/enabled
echo "guest: lru_gen enabled: $(cat /sys/kernel/mm/lru_gen/enabled 2>/dev/null || echo 'no /sys/kernel/mm/lru_gen')"
[ "$DIRTY" != - ] && echo "$DIRTY" >/proc/sys/vm/dirty_expire_centisecs && echo "$DIRTY" >/proc/sys/vm/dirty_writeback_centisecs
echo "guest: vm.dirty_expire_centisecs $(cat /proc/sys/vm/dirty_expire_centisecs), vm.dirty_writeback_centisecs $(cat /proc/sys/vm/dirty_writeback_centisecs)"
echo "guest: /var/tmp $(stat -f -c %T /var/tmp), swap: $(tail -n +2 /proc/swaps | awk '{ print $1, $3 " kB" }')"
echo "guest: root cgroup.controllers: $(cat /sys/fs/cgroup/cgroup.controllers); subtree_control: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
echo "guest: '0 swappiness=0' > memory.reclaim: $( { echo '0 swappiness=0' >/sys/fs/cgroup/memory.reclaim; } 2>&1 && echo accepted)"
echo "guest: '0 scope=dying' > memory.reclaim: $( { echo '0 scope=dying' >/sys/fs/cgroup/memory.reclaim; } 2>&1 && echo accepted)"

# 0. What pcptuned's probe answers here (it writes "0 swappiness=0" to the root's memory.reclaim).
mkdir -p /tmp/probe-pol && cp "$K/60-dying-memcg.yaml" /tmp/probe-pol/
/usr/local/bin/pcptuned --once --policy-dir /tmp/probe-pol --state-dir /tmp/probe-state --no-metrics 2>&1 |
	grep -A4 "memory.reclaim arguments" | sed 's/^/probe: /'

# 1. churn: without and with pcptuned, the sibling with 64 MiB of idle anonymous memory.
cd /tmp
/usr/local/bin/churn --parents "$P" --children "$C" --observe "$OBS" --runs "$RUNS" --cache "$CACHE" --sibling-file 16MiB \
	--sibling-anon 64MiB --prefix pcptune-test-14-churn --pcptuned /usr/local/bin/pcptuned \
	--policy "$K/60-dying-memcg.yaml" --keep-files-dir /var/tmp
echo "guest: churn exit $?"

# 2. A/B: what memory.reclaim takes from a live sibling (64 MiB anonymous, 16 MiB of file cache) when its
# parent is asked for 48 MiB, with and without swappiness=0 (pcptuned writes the first where accepted).
G=/sys/fs/cgroup/pcptune-test-14-ab
pswpout() { awk '$1 == "pswpout" { print $2 }' /proc/vmstat; }
mkdir -p "$G" && echo +memory >"$G/cgroup.subtree_control" && mkdir -p "$G/p" && echo +memory >"$G/p/cgroup.subtree_control"
for arg in "swappiness=0" "" "swappiness=0" ""; do
	mkdir -p "$G/p/s"
	head -c 16M /dev/urandom >/var/tmp/ab-file
	sync
	sh -c "echo \$\$ >$G/p/s/cgroup.procs; cat /var/tmp/ab-file >/dev/null; exec /usr/local/bin/anon-hold 64" >/tmp/ab-ready &
	hold=$!
	for i in $(seq 100); do grep -q ready /tmp/ab-ready && break; sleep 0.1; done
	c0=$(cat "$G/p/s/memory.current"); o0=$(pswpout)
	err=$( { echo "48M${arg:+ $arg}" >"$G/p/memory.reclaim"; } 2>&1 ) || true
	sleep 1
	c1=$(cat "$G/p/s/memory.current"); o1=$(pswpout)
	echo "ab: memory.reclaim '48M${arg:+ $arg}' on the live sibling's parent: ${err:-ok}; sibling memory.current $c0 -> $c1," \
		"anon $(awk '$1 == "anon" { print $2 }' "$G/p/s/memory.stat"), file $(awk '$1 == "file" { print $2 }' "$G/p/s/memory.stat")," \
		"memory.swap.current $(cat "$G/p/s/memory.swap.current"); host pswpout +$((o1 - o0)) pages"
	kill -9 "$hold"; wait "$hold" 2>/dev/null
	rm -f /var/tmp/ab-file
	sleep 0.5
	rmdir "$G/p/s"
	swapoff /dev/ram1 && swapon /dev/ram1
done
rmdir "$G/p" "$G"
umount /var/tmp
swapoff /dev/ram1
echo "guest: done"
