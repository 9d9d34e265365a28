#!/bin/sh
# test-memcg-reclaim-dying.sh - in the vmtest guest (cgroup v2): contrib
# kernel patch 0004, memory.reclaim "scope=dying".  Checks the parsing of the
# key, then, on ext2 page cache on a brd RAM disk (build-kernel fragment
# vmtest-disk.config), that a write with scope=dying on a parent frees its
# dying descendants (direct children, a dying subtree of two, a dying child of
# a live child) and leaves the page cache of its live children exactly as it
# was, that it answers EAGAIN when nothing dying is left, and, for
# comparison, what a plain write takes from the live child.  PASS/FAIL
# lines; exit 1 on a failure, 77 without the patch (or without a RAM disk).
CG=/sys/fs/cgroup
P=$CG/pcptune-test-14-kreclaim
MNT=/tmp/pcptune-test-14-mnt
MB=1048576
fails=0 passes=0
pass() { echo "PASS: $*"; passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
skip() { echo "SKIP: $*"; exit 77; }
# stat_of CGROUP KEY: a memory.stat or cgroup.stat value
stat_of() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
file_of() { stat_of "$1/memory.stat" file; }
dying_of() { stat_of "$1/cgroup.stat" nr_dying_descendants; }
# charge CGROUP FILE: a shell moves itself into CGROUP and reads FILE (page cache charged there)
charge() { sh -c "echo \$\$ >$1/cgroup.procs && cat $2 >/dev/null"; }
# try VALUE: write VALUE to $P/memory.reclaim; prints ok or the error
try() { ( echo "$1" >"$P/memory.reclaim" ) 2>/dev/null && echo ok || echo err; }
cleanup() {
	for d in "$P/host/z" "$P/x/y" "$P/x" "$P/host" "$P/live" "$P"/d*; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
	[ -d "$P" ] && rmdir "$P" 2>/dev/null
	mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"
}
trap cleanup EXIT

[ -f $CG/memory.reclaim ] || skip "no cgroup v2 memory.reclaim"
( echo "0 scope=dying" >$CG/memory.reclaim ) 2>/dev/null || skip "memory.reclaim takes no scope=dying (kernel without 0004)"
echo "INFO: kernel $(uname -r), memory.reclaim takes scope=dying"

# 1. The key: exactly "all" or "dying", after an amount, with the other keys.
grep -qw memory $CG/cgroup.subtree_control || echo +memory >$CG/cgroup.subtree_control
mkdir -p "$P" && echo +memory >"$P/cgroup.subtree_control"
for v in "0 scope=all" "0 scope=dying" "0  scope=dying " "0 scope=all scope=dying"; do
	[ "$(try "$v")" = ok ] && pass "'$v' accepted" || fail "'$v' refused"
done
( echo "0 swappiness=0" >$CG/memory.reclaim ) 2>/dev/null && swp=1 || swp=0
if [ $swp = 1 ]; then
	[ "$(try "0 scope=dying swappiness=0")" = ok ] && pass "'0 scope=dying swappiness=0' accepted" || fail "with swappiness= refused"
fi
for v in "scope=dying" "0 scope=" "0 scope=DYING" "0 scope=dyingx" "0 scope" "0 scope=dying x" "0 dying"; do
	[ "$(try "$v")" = err ] && pass "'$v' rejected" || fail "'$v' accepted"
done

# 2. Page cache on a real filesystem (tmpfs pages cannot be reclaimed without swap).
[ -b /dev/ram0 ] || skip "no /dev/ram0 (build with contrib/kernel/tests/vmtest-disk.config)"
mkdir -p "$MNT"
mke2fs -q /dev/ram0 >/dev/null 2>&1 && mount -t ext2 /dev/ram0 "$MNT" || { fail "ext2 on /dev/ram0"; exit 1; }
for f in live d1 d2 d3 d4 y z d5; do dd if=/dev/zero of="$MNT/$f" bs=$MB count=4 2>/dev/null; done
dd if=/dev/zero of="$MNT/live" bs=$MB count=8 2>/dev/null
sync
echo 3 >/proc/sys/vm/drop_caches

# The parent P: a live child with 8 MiB; four dying children with 4 MiB each; a dying
# subtree x/y with 4 MiB; a live child "host" (nothing of its own) with a dying child z.
mkdir "$P/live" "$P/host" "$P/x" && echo +memory >"$P/x/cgroup.subtree_control" && echo +memory >"$P/host/cgroup.subtree_control"
mkdir "$P/x/y" "$P/host/z"
charge "$P/live" "$MNT/live"
for i in 1 2 3 4; do mkdir "$P/d$i" && charge "$P/d$i" "$MNT/d$i" && rmdir "$P/d$i"; done
charge "$P/x/y" "$MNT/y" && rmdir "$P/x/y" && rmdir "$P/x"
charge "$P/host/z" "$MNT/z" && rmdir "$P/host/z"
live0=$(file_of "$P/live") cur0=$(cat "$P/memory.current") dying0=$(dying_of "$P")
echo "INFO: before: live child file $live0 B, parent memory.current $cur0 B, nr_dying_descendants $dying0"
[ "$live0" -ge $((8 * MB)) ] && [ "$dying0" -ge 7 ] || { fail "setup: live file $live0, dying $dying0 (want >= 8 MiB, >= 7)"; exit 1; }

# 3. Ask for more than the dying hold: they are emptied, EAGAIN for the rest; the live child keeps all.
r=$(try "64M scope=dying")
live1=$(file_of "$P/live") cur1=$(cat "$P/memory.current")
echo "INFO: '64M scope=dying': $r; live child file $live1 B; parent memory.current $cur1 B (-$(((cur0 - cur1) / 1024)) KiB)"
[ "$r" = err ] && pass "more than the dying memcgs hold: EAGAIN" || fail "64M scope=dying succeeded"
[ "$live1" = "$live0" ] && pass "the live child's page cache is untouched ($live1 B)" ||
	fail "the live child lost $((live0 - live1)) B"
[ $((cur0 - cur1)) -ge $((24 * MB)) ] && pass "the parent's usage fell by at least the 24 MiB the dying held" ||
	fail "the parent's usage fell by $((cur0 - cur1)) B only"
n=0
while [ "$(dying_of "$P")" != 0 ] && [ $n -lt 100 ]; do sleep 0.2; n=$((n + 1)); done
d=$(dying_of "$P")
[ "$d" = 0 ] && pass "every dying descendant freed ($dying0 -> 0, after $((n * 2 / 10)) s)" ||
	fail "$d of $dying0 dying descendants left"

# 4. Nothing dying left: EAGAIN, nothing taken.
r=$(try "1M scope=dying")
[ "$r" = err ] && [ "$(file_of "$P/live")" = "$live0" ] && pass "nothing dying: EAGAIN, the live child untouched" ||
	fail "nothing dying: '$r', live file $(file_of "$P/live")"

# 5. For comparison: a plain write of what one dying child holds.
mkdir "$P/d5" && charge "$P/d5" "$MNT/d5" && rmdir "$P/d5"
live2=$(file_of "$P/live")
r=$(try "4M")
live3=$(file_of "$P/live")
echo "INFO: plain '4M' with one dying child of 4 MiB: $r; the live child's file $live2 -> $live3 B" \
	"($(((live2 - live3) / 4096)) pages taken), nr_dying_descendants $(dying_of "$P")"
try "64M scope=dying" >/dev/null

echo "RESULT-SUMMARY: $passes passed, $fails failed"
[ $fails = 0 ]
