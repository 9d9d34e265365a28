#!/bin/sh
# test-daemon.sh - pcptuned's two paths on a kernel with and without
# pcptune's contrib patches (run in the vmtest guest with the overlay of
# contrib/kernel/make-overlay): pcp.high minimum writes -1 where the kernel
# takes it and the computed fraction where it does not; pcp.batch_scale_max
# sets vm.pcp_batch_scale_max or says it needs the patch; percpu-depopulate
# writes the trigger or says its metric is unavailable; pcptunectl status
# and plan show what the kernel has.  PASS/FAIL lines; exit 1 on a failure.
P=/pcptune/policies
knob=/proc/sys/vm/percpu_pagelist_high_fraction
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
patched=0
[ -e /proc/sys/vm/pcp_batch_scale_max ] && [ -d /sys/kernel/mm/percpu ] && patched=1
echo "INFO: kernel $(uname -r), contrib patches: $([ $patched = 1 ] && echo present || echo absent)"

out=$(pcptuned --once --policy-dir $P/contrib --state-dir /run/pt 2>&1)
v=$(cat $knob)
if [ $patched = 1 ]; then
	[ "$v" = -1 ] && pass "minimum writes -1 (pcp high at the floor by the kernel)" || fail "minimum: fraction $v: $out"
	[ "$(cat /proc/sys/vm/pcp_batch_scale_max)" = 2 ] && pass "batch_scale_max 2 is set" || fail "scale: $out"
	echo "$out" | grep -q "Confirmed vm.percpu_pagelist_high_fraction = -1" && pass "the write is confirmed against zoneinfo" ||
		fail "not confirmed: $out"
else
	[ "$v" -ge 8 ] 2>/dev/null && echo "$out" | grep -q "rejects vm.percpu_pagelist_high_fraction = -1" &&
		pass "minimum falls back to the computed fraction $v after EINVAL" || fail "fallback: fraction $v: $out"
	echo "$out" | grep -q "pcp.batch_scale_max needs vm.pcp_batch_scale_max" && pass "batch_scale_max says it needs the patch" ||
		fail "scale warning: $out"
fi
echo 0 >$knob

# Make empty populated percpu pages: 3000 empty memcgs, removed at once.
cg=/sys/fs/cgroup
grep -qw memory $cg/cgroup.subtree_control 2>/dev/null || echo +memory >$cg/cgroup.subtree_control 2>/dev/null
i=0; while [ $i -lt 3000 ]; do mkdir $cg/pt-$i; i=$((i + 1)); done
i=0; while [ $i -lt 3000 ]; do rmdir $cg/pt-$i; i=$((i + 1)); done
sleep 3
mkdir -p /run/pt-pol
printf 'version: 1\nname: vm-depopulate\nrules:\n  - name: any\n    when: percpu.empty_populated > 0\n    action: { percpu-depopulate: {} }\n' >/run/pt-pol/50.yaml
chmod 0644 /run/pt-pol/50.yaml
out=$(pcptuned --once --policy-dir /run/pt-pol --state-dir /run/pt 2>&1)
if [ $patched = 1 ]; then
	# "empty populated pages A -> B per unit": the trigger must not add any,
	# and must release pages when more are left than the kernel's pool keeps
	# (the kernel may already have freed whole empty chunks by itself).
	ran=$(echo "$out" | grep -o 'empty populated pages [0-9]* -> [0-9]*.*')
	a=$(echo "$ran" | awk '{print $4}'); b=$(echo "$ran" | awk '{print $6}')
	if [ -z "$ran" ]; then
		fail "percpu-depopulate did not run: $out"
	elif [ "$b" -gt "$a" ] || { [ "$a" -gt 8 ] && [ "$b" -ge "$a" ]; }; then
		fail "percpu-depopulate released nothing: $ran"
	else
		pass "percpu-depopulate ran: $ran"
	fi
else
	echo "$out" | grep -q "percpu.empty_populated, which is unavailable here" && pass "without the patch the metric is unavailable" ||
		fail "depopulate without patch: $out"
	echo "$out" | grep -q "percpu-depopulate in" && fail "the trigger ran without the patch"
fi

st=$(pcptunectl status --verbose --state-dir /run/pt --no-owner-check --policy-dir $P/empty 2>&1)
if [ $patched = 1 ]; then
	echo "$st" | grep -q "contrib 0002, vm.pcp_batch_scale_max: yes - /proc/sys/vm/pcp_batch_scale_max = [0-9]" &&
		echo "$st" | grep -q "contrib 0003, /sys/kernel/mm/percpu: yes" && pass "status shows the contrib mechanisms" ||
		fail "status: $st"
else
	echo "$st" | grep -q "contrib 0002, vm.pcp_batch_scale_max: no" && echo "$st" | grep -q "contrib 0003, /sys/kernel/mm/percpu: no" &&
		pass "status shows none" || fail "status: $st"
fi
# 0004: with a reclaim-dying rule loaded the daemon probes memory.reclaim for scope=dying, and must
# find what a write of "0 scope=dying" finds (the rule itself never fires here).
if [ -f $cg/memory.reclaim ]; then
	( echo "0 scope=dying" >$cg/memory.reclaim ) 2>/dev/null && want="accepted" || want="not accepted"
	mkdir -p /run/pt-rec
	printf 'version: 1\nname: vm-reclaim\nrules:\n  - name: never\n    when: memcg.dying > 100000000\n    action: { reclaim-dying: { cgroup: auto } }\n' >/run/pt-rec/60.yaml
	chmod 0644 /run/pt-rec/60.yaml
	out=$(pcptuned --once --policy-dir /run/pt-rec --state-dir /run/pt-rec-state 2>&1)
	echo "$out" | grep -q "scope=dying (contrib/kernel 0004): $want" && pass "the daemon's scope=dying probe: $want" ||
		fail "scope=dying probe (the kernel: $want): $out"
fi
pl=$(pcptunectl plan --verbose --no-owner-check --policy-dir $P/empty 2>&1)
echo "$pl" | grep -q "contrib 0003, /sys/kernel/mm/percpu:" && pass "plan's advisories list the contrib mechanisms" || fail "plan: $pl"
echo "RESULT: $fails failed"
[ $fails = 0 ]
