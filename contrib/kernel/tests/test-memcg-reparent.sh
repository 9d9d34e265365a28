#!/bin/sh
# test-memcg-reparent.sh - in the vmtest guest (cgroup v2): what makes 0004
# (memory.reclaim scope=dying) unnecessary on 7.1+.  Since "eliminate the
# problem of dying memory cgroup for LRU folios" (7.1), mem_cgroup_css_offline()
# -> memcg_reparent_objcgs() moves a removed memcg's LRU folios to its parent
# (lru_gen_reparent_memcg() with the multi-gen LRU, lru_reparent_memcg()
# without) and points its objcgs at the parent, so page cache no longer keeps
# a removed memcg dying.  On a tmpfs (shmem folios are LRU folios too, and
# need neither a disk nor a module, so Debian's own kernel runs it as well):
# a parent with a live child that wrote 8 MiB and four children that wrote
# 4 MiB each and are removed.  On 7.1+ it checks that
# nr_dying_descendants returns to 0 within WAIT seconds without any write to
# memory.reclaim, that the 16 MiB of cache stay resident and are now the
# parent's own (its memory.stat "file" minus the live child's grows by at
# least 15 MiB, and its usage still covers them), and that the live child's
# file count is unchanged.  Before 7.1 it reports what it saw and exits 77 (the kernel
# does not reparent LRU folios: 0004's case).  PASS/FAIL/INFO lines; exit 1
# on a failure, 77 before 7.1.
CG=/sys/fs/cgroup
P=$CG/pcptune-test-23-reparent
MNT=/tmp/pcptune-test-23-mnt
MB=1048576
WAIT=${WAIT:-10}
fails=0 passes=0
pass() { echo "PASS: $*"; passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
skip() { echo "SKIP: $*"; exit 77; }
stat_of() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
file_of() { stat_of "$1/memory.stat" file; }
dying_of() { stat_of "$1/cgroup.stat" nr_dying_descendants; }
# charge CGROUP FILE MIB: a shell moves itself into CGROUP and writes MIB MiB to FILE
charge() { sh -c "echo \$\$ >$1/cgroup.procs && dd if=/dev/zero of=$2 bs=$MB count=$3 2>/dev/null"; }
cleanup() {
	mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"
	for d in "$P"/d* "$P/live" "$P"; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
}
trap cleanup EXIT

[ -f $CG/cgroup.controllers ] && grep -qw memory $CG/cgroup.controllers || skip "no cgroup v2 memory controller"
# kernel major*1000+minor, e.g. 7002 for 7.2.13
kver=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
mglru=$(cat /sys/kernel/mm/lru_gen/enabled 2>/dev/null || echo absent)
echo "INFO: kernel $(uname -r), multi-gen LRU $mglru"

grep -qw memory $CG/cgroup.subtree_control || echo +memory >$CG/cgroup.subtree_control
mkdir -p "$P" "$MNT" && echo +memory >"$P/cgroup.subtree_control" || { fail "setup of $P"; exit 1; }
mount -t tmpfs -o size=64m pcptune-test "$MNT" || { fail "tmpfs on $MNT"; exit 1; }
mkdir "$P/live" && charge "$P/live" "$MNT/live" 8
for i in 1 2 3 4; do mkdir "$P/d$i" && charge "$P/d$i" "$MNT/d$i" 4; done
live0=$(file_of "$P/live") pfile0=$(file_of "$P") cur0=$(cat "$P/memory.current")
own0=$((pfile0 - live0))
echo "INFO: before rmdir: parent file $pfile0 B (the live child $live0 B), memory.current $cur0 B"
[ "$own0" -ge $((16 * MB)) ] || { fail "setup: the four children hold $own0 B, want >= 16 MiB"; exit 1; }
for i in 1 2 3 4; do rmdir "$P/d$i"; done
n=0
while [ "$(dying_of "$P")" != 0 ] && [ $n -lt $((WAIT * 10)) ]; do sleep 0.1; n=$((n + 1)); done
dying=$(dying_of "$P") waited=$((n / 10)).$((n % 10))
live1=$(file_of "$P/live") pfile1=$(file_of "$P") cur1=$(cat "$P/memory.current")
own1=$((pfile1 - live1))
echo "INFO: ${waited} s after rmdir: nr_dying_descendants $dying; parent file $pfile1 B, own (not a live child's) $own1 B; memory.current $cur1 B"
if [ "$kver" -lt 7001 ]; then
	echo "INFO: before 7.1 LRU folios are not reparented: $dying of 4 removed children still dying after ${waited} s"
	skip "kernel $(uname -r) predates LRU folio reparenting (7.1)"
fi
[ "$dying" = 0 ] && pass "the 4 removed children are freed within $WAIT s, no reclaim asked (${waited} s)" ||
	fail "$dying of the 4 removed children still dying after $WAIT s"
[ "$own1" -ge $((15 * MB)) ] && pass "their 16 MiB of tmpfs pages stay resident, charged to the parent ($own1 B)" ||
	fail "the parent holds $own1 B of the 16 MiB the children wrote"
[ "$live1" = "$live0" ] && pass "the live child's page cache is unchanged ($live1 B)" ||
	fail "the live child's file went $live0 -> $live1 B"
[ "$cur1" -ge "$pfile1" ] && pass "the parent's usage still covers them ($cur0 -> $cur1 B: the removed memcgs' own kernel memory is gone)" ||
	fail "the parent's usage $cur1 B is below its file pages $pfile1 B"
echo "RESULT-SUMMARY: $passes passed, $fails failed"
[ $fails = 0 ]
