#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of tests/vm/memcg-ids (busybox sh, cgroup v2 on /sys/fs/cgroup):
# compare pcptunectl's memcg ID prediction with the kernel.  1. status says
# how many IDs are used; 2. create memcgs until mkdir fails: the count must be
# the limit minus that; 3. status says every ID is used and warns; 4. charge
# some of them with tmpfs pages, remove them: they stay dying (no swap here)
# and must not hold IDs, so as many new memcgs can be created again.
set -u
ctl() { pcptunectl "$@" --state-dir /tmp/state --policy-dir /pcptune/policies/empty --no-owner-check; }
field() { # KEY FILE: the first integer value of "KEY": in pretty JSON
	sed -n "s/^ *\"$1\": \([0-9]*\),*$/\1/p" "$2" | head -n 1
}
out=${VMTEST_OUT:-/tmp}
cg=/sys/fs/cgroup
p=$cg/pcptune-test-15-ids
echo +memory >$cg/cgroup.subtree_control
mkdir $p && echo +memory >$p/cgroup.subtree_control || exit 1

ctl status --json >$out/before.json 2>&1
used=$(field used $out/before.json) limit=$(field limit $out/before.json)
echo "before: pcptunectl says $used of $limit memcg IDs used; predicts $((limit - used)) more memcgs"

# Batches of 500 names per busybox mkdir (one process each): it goes on after a failure.
i=0
while :; do
	names=
	j=0
	while [ $j -lt 500 ]; do names="$names $p/c$((i + j))"; j=$((j + 1)); done
	mkdir $names 2>>$out/mkdir.err
	i=$((i + 500))
	[ -s $out/mkdir.err ] && break
	[ $i -gt 70000 ] && break
done
made=$(ls $p | grep -c '^c[0-9]')
err=$(head -n 1 $out/mkdir.err | tr -d "\"'")
echo "created $made memcgs; first failure: $err"
ctl status >$out/full.txt 2>&1
ctl status --json >$out/full.json 2>&1
grep -E '^memcg|^warning' $out/full.txt

# Dying memcgs pinned by page cache (tmpfs pages, no swap) give their IDs back at rmdir.
n=0
for k in $(seq 0 99); do
	echo $$ >$p/c$k/cgroup.procs && echo data >/tmp/pin-$k && echo $$ >$cg/cgroup.procs && n=$((n + 1))
done
for k in $(seq 0 99); do rmdir $p/c$k; done
sleep 1
ctl status --json >$out/dying.json 2>&1
dying=$(field dying $out/dying.json) used2=$(field used $out/dying.json)
again=0
for k in $(seq 0 99); do mkdir $p/d$k 2>/dev/null && again=$((again + 1)); done
echo "charged $n, removed 100: $dying dying, pcptunectl says $used2 IDs used; mkdir succeeded $again times"

cat >$out/result <<RES
used_before=$used
limit=$limit
predicted=$((limit - used))
created=$made
error="$err"
used_full=$(field used $out/full.json)
warn_full=$(grep -c '"warn": true' $out/full.json)
dying=$dying
used_dying=$used2
created_again=$again
RES
cat $out/result
