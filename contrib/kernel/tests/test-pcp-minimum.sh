#!/bin/sh
# test-pcp-minimum.sh: functional test of the contrib kernel patch
# "mm/page_alloc: allow percpu_pagelist_high_fraction=-1 for minimum pcp
# high" (contrib/kernel/{6.1,6.12}/0001-*.patch).  Busybox sh, as root, in a
# throw-away guest (tests/vm/harness/vmrun -f); it changes vm sysctls and
# restores them on exit.
#
# Checks:
#  - writing -1 is accepted and reads back -1;
#  - every populated zone's pagesets hold the floor, 4 x batch: high on
#    kernels with a fixed high (5.14-6.6), high_min == high_max on 6.7+ when
#    /proc/zoneinfo prints them (6.13+, or 6.12 with the test-only patch
#    tests/vm/patches/6.12/0001-*.patch); without those lines (6.7-6.12) only
#    pagesets whose dynamic high was re-clamped after the write can be checked;
#  - -2, 1 and 7 fail with EINVAL and leave -1 in place;
#  - recalculations keep the floor: two min_free_kbytes writes, and taking
#    the last CPU offline and online again (when it can be);
#  - writing 0 restores the default, compared with the kernel's formula
#    (low watermark split over the node's CPUs; 6.7+: high_max from managed/8).
# Prints PASS/FAIL/SKIP/INFO lines; exits 0 when everything passed, 1 on a
# failure, 77 (skip) on a kernel without the patch (writing -1 gives EINVAL,
# as on every unpatched kernel) or without the sysctl.

F=/proc/sys/vm/percpu_pagelist_high_fraction
MFK=/proc/sys/vm/min_free_kbytes
ZI=/proc/zoneinfo
TMP=${TMPDIR:-/tmp}/test-pcp-minimum.$$
npass=0 nfail=0

pass() { npass=$((npass + 1)); echo "PASS: $*"; }
fail() { nfail=$((nfail + 1)); echo "FAIL: $*"; }
info() { echo "INFO: $*"; }
skip() { echo "SKIP: $*"; exit 77; }

[ -e "$F" ] || skip "$F does not exist (kernel before 5.14)"
[ "$(id -u)" = 0 ] || skip "needs root"
[ -w "$F" ] || skip "$F is not writable"

orig_frac=$(cat "$F")
orig_mfk=$(cat "$MFK")
offlined=""
mkdir -p "$TMP" || exit 1

cleanup() {
	[ -n "$offlined" ] && echo 1 >"/sys/devices/system/cpu/cpu$offlined/online" 2>/dev/null
	[ "$(cat "$MFK")" = "$orig_mfk" ] || echo "$orig_mfk" >"$MFK"
	[ "$(cat "$F")" = "$orig_frac" ] || echo "$orig_frac" >"$F"
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# write_sysctl FILE VALUE: prints the error text (empty on success).
write_sysctl() {
	{ echo "$2" >"$1"; } 2>&1 | sed 's/^.*: //'
}

# kernel major*1000+minor, e.g. 6012 for 6.12.117-vmtest
kver=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')

# pagesets: one line per online CPU of every populated zone:
#   node zone managed low cpu count high batch high_min high_max
# ("-" when zoneinfo does not print the field).
pagesets() {
	awk '
	function flush() {
		if (cpu != "")
			print node, zone, managed, low, cpu, cnt, high, batch, hmin, hmax
		cpu = ""
	}
	/^Node [0-9]+, zone/ { flush(); node = $2; sub(",", "", node); zone = $4;
		managed = "-"; low = "-"; inps = 0; next }
	$1 == "low" && !inps { low = $2; next }
	$1 == "managed" && !inps { managed = $2; next }
	$1 == "pagesets" { inps = 1; next }
	!inps { next }
	$1 == "cpu:" { flush(); cpu = $2; cnt = high = batch = hmin = hmax = "-"; next }
	$1 == "count:" { cnt = $2; next }
	$1 == "high:" { high = $2; next }
	$1 == "batch:" { batch = $2; next }
	$1 == "high_min:" { hmin = $2; next }
	$1 == "high_max:" { hmax = $2; next }
	$1 == "node_unreclaimable:" { flush(); inps = 0; next }
	END { flush() }' "$ZI"
}

# summary FILE: one line per zone, the values of its first online CPU.
summary() {
	awk '!seen[$1 " " $2]++ {
		s = "node " $1 " " $2 ": managed " $3 " low " $4 " batch " $8 " high " $7
		if ($9 != "-") s = s " high_min " $9 " high_max " $10
		print s }' "$1"
}

# check_floor WHAT: every pageset holds 4 x batch.  On 6.7-6.12 without the
# high_min/high_max lines, a dynamic high that is still 0 or still what it was
# before -1 was written ($TMP/before) belongs to a pageset its CPU has not
# used since, and is counted as unchecked.
check_floor() {
	what=$1 before=$TMP/before
	pagesets >"$TMP/ps"
	if [ ! -s "$TMP/ps" ]; then
		fail "$what: no pagesets in $ZI"
		return
	fi
	if grep -q 'high_min:' "$ZI"; then
		mode=minmax
	elif [ "$kver" -lt 6007 ]; then
		mode=fixed
	else
		mode=dynamic
	fi
	awk -v mode="$mode" -v before="$before" '
	BEGIN { if (before != "") while ((getline l < before) > 0) {
			split(l, f, " "); old[f[1] " " f[2] " " f[5]] = f[7] } }
	{
		floor = 4 * $8; key = $1 " " $2 " " $5; where = "node " $1 " " $2 " cpu " $5
		if (mode == "minmax") {
			if ($9 != floor || $10 != floor) {
				bad++; printf "  %s: batch %d high_min %d high_max %d, want %d\n", where, $8, $9, $10, floor }
			else ok++
		} else if (mode == "fixed") {
			if ($7 != floor) { bad++; printf "  %s: batch %d high %d, want %d\n", where, $8, $7, floor }
			else ok++
		} else if ($7 == floor) ok++
		else if ($7 == 0 || ((key in old) && old[key] == $7)) stale++
		else { bad++; printf "  %s: batch %d high %d, want %d\n", where, $8, $7, floor }
	}
	END { printf "RESULT %d %d %d\n", ok, bad, stale }' "$TMP/ps" >"$TMP/chk"
	set -- $(sed -n 's/^RESULT //p' "$TMP/chk")
	ok=$1 bad=$2 stale=$3
	sed '/^RESULT /d' "$TMP/chk"
	case $mode in
	minmax) how="high_min == high_max == 4 x batch" ;;
	fixed) how="high == 4 x batch" ;;
	dynamic) how="dynamic high == 4 x batch (zoneinfo has no high_min/high_max; $stale idle pagesets not re-clamped yet, unchecked)" ;;
	esac
	if [ "$bad" -eq 0 ] && [ "$ok" -gt 0 ]; then
		pass "$what: $how on $ok pagesets"
	else
		fail "$what: $how: $bad pagesets differ, $ok match"
	fi
}

# touch_zones: allocate and free some page cache on every online CPU, so that
# 6.7+ kernels re-clamp each CPU's dynamic high (only needed without the
# high_min/high_max lines).
touch_zones() {
	grep -q 'high_min:' "$ZI" && return
	[ "$kver" -lt 6007 ] && return
	for c in $(awk '$1 == "cpu:" { print $2 }' "$ZI" | sort -un); do
		taskset -c "$c" dd if=/dev/zero of="$TMP/touch" bs=64k count=64 2>/dev/null
		taskset -c "$c" rm -f "$TMP/touch"
	done
}

# online CPUs of node N (falls back to all online CPUs)
node_cpus() {
	l=/sys/devices/system/node/node$1/cpulist
	if [ -r "$l" ]; then
		tr ',' '\n' <"$l" | awk -F- 'NF == 1 && $1 != "" { n++ } NF == 2 { n += $2 - $1 + 1 } END { print n + 0 }'
	else
		grep -c '^processor' /proc/cpuinfo
	fi
}

# check_default: after writing 0, compare with the kernel's default formula
# (zone_highsize(): total / CPUs of the node, at least 4 x batch; total is the
# low watermark, and managed/8 for high_max on 6.7+).
check_default() {
	pagesets >"$TMP/ps"
	grep -q 'high_min:' "$ZI" && mm=1 || mm=0
	if [ "$mm" = 0 ] && [ "$kver" -ge 6007 ]; then
		info "default: zoneinfo has no high_min/high_max: not compared with the formula"
		return
	fi
	: >"$TMP/ncpu"
	for n in $(awk '{ print $1 }' "$TMP/ps" | sort -un); do
		echo "$n $(node_cpus "$n")" >>"$TMP/ncpu"
	done
	online=$(grep -c '^processor' /proc/cpuinfo)
	awk -v mm="$mm" -v online="$online" -v ncpu="$TMP/ncpu" '
	function hs(total, n, batch,  h) { if (n == 0) n = online; h = int(total / n)
		return h > 4 * batch ? h : 4 * batch }
	BEGIN { while ((getline l < ncpu) > 0) { split(l, f, " "); cpus[f[1]] = f[2] } }
	{
		where = "node " $1 " " $2 " cpu " $5
		wmin = hs($4, cpus[$1], $8); wmax = hs(int($3 / 8), cpus[$1], $8)
		if (mm) {
			if ($9 != wmin || $10 != wmax) { bad++
				printf "  %s: high_min %d high_max %d, want %d %d\n", where, $9, $10, wmin, wmax }
			else ok++
		} else if ($7 != wmin) { bad++; printf "  %s: high %d, want %d\n", where, $7, wmin }
		else ok++
	}
	END { printf "RESULT %d %d\n", ok, bad }' "$TMP/ps" >"$TMP/chk"
	set -- $(sed -n 's/^RESULT //p' "$TMP/chk")
	sed '/^RESULT /d' "$TMP/chk"
	if [ "$2" -eq 0 ] && [ "$1" -gt 0 ]; then
		pass "writing 0 restores the default (low watermark / node CPUs$( [ "$mm" = 1 ] && echo ', high_max managed/8 / node CPUs') on $1 pagesets)"
	else
		fail "writing 0 does not restore the default: $2 pagesets differ"
	fi
}

info "kernel $(uname -r), $(grep -c '^processor' /proc/cpuinfo) CPUs online, $F = $orig_frac"
[ "$orig_frac" = 0 ] || { echo 0 >"$F" || { fail "cannot reset $F to 0"; exit 1; }; }
pagesets >"$TMP/before"
summary "$TMP/before" | sed 's/^/INFO: before (fraction 0): /'

err=$(write_sysctl "$F" -1)
if [ -n "$err" ]; then
	[ "$(cat "$F")" = 0 ] || fail "a rejected -1 changed $F to $(cat "$F")"
	case $err in
	*"nvalid argument"*) skip "this kernel rejects $F = -1 ($err): no pcp-minimum patch" ;;
	*) fail "writing -1: $err"; exit 1 ;;
	esac
fi
v=$(cat "$F")
[ "$v" = -1 ] && pass "-1 accepted, reads back -1" || fail "-1 accepted but reads back $v"

touch_zones
check_floor "after writing -1"
pagesets >"$TMP/after"
summary "$TMP/after" | sed 's/^/INFO: after (fraction -1): /'

for bad in -2 1 7; do
	err=$(write_sysctl "$F" "$bad")
	v=$(cat "$F")
	case $err in
	*"nvalid argument"*)
		[ "$v" = -1 ] && pass "$bad rejected with EINVAL, value stays -1" ||
			fail "$bad rejected with EINVAL but the value is now $v" ;;
	"") fail "$bad accepted (value now $v)" ;;
	*) fail "$bad rejected with '$err' instead of EINVAL (value now $v)" ;;
	esac
done
check_floor "after the rejected writes"

# min_free_kbytes -> setup_per_zone_wmarks() -> zone_pcp_update() per zone
new_mfk=$((orig_mfk + 1024))
err=$(write_sysctl "$MFK" "$new_mfk")
if [ -z "$err" ]; then
	touch_zones
	check_floor "after min_free_kbytes $orig_mfk -> $new_mfk (recalculation)"
	err=$(write_sysctl "$MFK" "$orig_mfk")
	[ -z "$err" ] || fail "cannot restore min_free_kbytes: $err"
	touch_zones
	check_floor "after min_free_kbytes back to $orig_mfk"
else
	fail "cannot write min_free_kbytes: $err"
fi

# CPU hotplug: page_alloc_cpu_dead() and page_alloc_cpu_online() recalculate.
last=$(ls -d /sys/devices/system/cpu/cpu[0-9]* 2>/dev/null | sed 's/.*cpu//' | sort -n | tail -n 1)
if [ -n "$last" ] && [ "$last" != 0 ] && [ -w "/sys/devices/system/cpu/cpu$last/online" ] &&
	[ "$(cat "/sys/devices/system/cpu/cpu$last/online")" = 1 ]; then
	if echo 0 >"/sys/devices/system/cpu/cpu$last/online"; then
		offlined=$last
		touch_zones
		check_floor "with cpu$last offline (recalculation)"
		if echo 1 >"/sys/devices/system/cpu/cpu$last/online"; then
			offlined=""
			touch_zones
			check_floor "with cpu$last online again (recalculation)"
		else
			fail "cannot bring cpu$last back online"
		fi
	else
		info "cannot take cpu$last offline: CPU hotplug recalculation not checked"
	fi
else
	info "no hot-pluggable CPU: CPU hotplug recalculation not checked"
fi

err=$(write_sysctl "$F" 0)
v=$(cat "$F")
if [ -z "$err" ] && [ "$v" = 0 ]; then
	pass "0 accepted, reads back 0"
	check_default
else
	fail "writing 0: '$err', value $v"
fi

echo "test-pcp-minimum: $npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
