#!/bin/sh
# test-batch-scale-max.sh: functional test of the contrib kernel patch
# "mm/page_alloc: make the pcp batch scale limit a sysctl"
# (contrib/kernel/{6.1,6.12}/0002-*.patch).  Busybox sh, as root, in a
# throw-away guest (tests/vm/harness/vmrun -f, at least 2 vCPUs); it changes vm
# sysctls, tracing and CPU hotplug state and restores them on exit.
#
# Checks:
#  - vm.pcp_batch_scale_max exists and starts at CONFIG_PCP_BATCH_SCALE_MAX
#    (/proc/config.gz, else $PCP_BATCH_SCALE_MAX_DEFAULT, else 5, the Kconfig
#    default);
#  - 0..6 are accepted and read back; 7 and -1 fail with EINVAL and leave the
#    value;
#  - for each value in $SCALE_VALUES (default "5 2"): with
#    percpu_pagelist_high_fraction = 8 (a large pcp high), a process pinned
#    to one CPU faults in FILL_MB MiB of anonymous memory and exits (bulk
#    frees from that CPU's pcp list), then that CPU is taken offline, which
#    drains its pcp lists in drain_pages_zone() steps; the kmem:mm_page_pcpu_drain events, grouped
#    per free_pcppages_bulk() call with the function tracer, must never move
#    more than (batch of the page's zone) << value pages in one call (a
#    high-order last page may end past it: the kernel stops once it has
#    freed that many).
# Prints PASS/FAIL/SKIP/INFO lines; exits 0 when everything passed, 1 on a
# failure, 77 (skip) on a kernel without the sysctl, or when the tracing
# needed for the measurement is missing (the sysctl checks still run).
#
# Tunables: SCALE_VALUES ("5 2"), FILL_MB (256), TRACE_KB (8192 per CPU),
# SETTLE (2 s between the exit and the offline).

F=/proc/sys/vm/pcp_batch_scale_max
FRAC=/proc/sys/vm/percpu_pagelist_high_fraction
ZI=/proc/zoneinfo
TMP=${TMPDIR:-/tmp}/test-batch-scale-max.$$
SCALE_VALUES=${SCALE_VALUES:-5 2}
FILL_MB=${FILL_MB:-256}
TRACE_KB=${TRACE_KB:-8192}
SETTLE=${SETTLE:-2}
npass=0 nfail=0 nskip=0

pass() { npass=$((npass + 1)); echo "PASS: $*"; }
fail() { nfail=$((nfail + 1)); echo "FAIL: $*"; }
info() { echo "INFO: $*"; }
skipped() { nskip=$((nskip + 1)); echo "SKIP: $*"; }

if [ ! -e "$F" ]; then
	echo "SKIP: $F does not exist: kernel without the pcp_batch_scale_max patch"
	exit 77
fi
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }

orig=$(cat "$F")
orig_frac=$(cat "$FRAC" 2>/dev/null)
T=""
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -e "$d/trace" ] && { T=$d; break; }
done
offlined=""
mkdir -p "$TMP" || exit 1

cleanup() {
	if [ -n "$T" ]; then
		echo 0 >"$T/tracing_on" 2>/dev/null
		echo 0 >"$T/events/kmem/mm_page_pcpu_drain/enable" 2>/dev/null
		echo nop >"$T/current_tracer" 2>/dev/null
		: >"$T/set_ftrace_filter" 2>/dev/null
		: >"$T/trace" 2>/dev/null
	fi
	[ -n "$offlined" ] && echo 1 >"/sys/devices/system/cpu/cpu$offlined/online" 2>/dev/null
	[ -n "$orig_frac" ] && [ "$(cat "$FRAC")" != "$orig_frac" ] && echo "$orig_frac" >"$FRAC"
	[ "$(cat "$F")" = "$orig" ] || echo "$orig" >"$F"
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# write_sysctl FILE VALUE: prints the error text (empty on success).
write_sysctl() {
	{ echo "$2" >"$1"; } 2>&1 | sed 's/^.*: //'
}

# --- default and range -------------------------------------------------------
want=""
if [ -r /proc/config.gz ]; then
	want=$(zcat /proc/config.gz | sed -n 's/^CONFIG_PCP_BATCH_SCALE_MAX=//p')
	src="CONFIG_PCP_BATCH_SCALE_MAX in /proc/config.gz"
fi
if [ -z "$want" ]; then
	want=${PCP_BATCH_SCALE_MAX_DEFAULT:-5}
	src="expected default (no /proc/config.gz; set PCP_BATCH_SCALE_MAX_DEFAULT)"
fi
info "kernel $(uname -r), $(grep -c '^processor' /proc/cpuinfo) CPUs online, $F = $orig"
[ "$orig" = "$want" ] && pass "default $orig = $src" ||
	fail "default $orig, want $want ($src)"

ok=""
for v in 0 1 2 3 4 5 6; do
	err=$(write_sysctl "$F" "$v")
	r=$(cat "$F")
	if [ -z "$err" ] && [ "$r" = "$v" ]; then ok="$ok$v "; else
		fail "writing $v: '$err', reads back $r"; fi
done
[ "$ok" = "0 1 2 3 4 5 6 " ] && pass "0..6 accepted and read back"
echo 3 >"$F"
for v in 7 -1; do
	err=$(write_sysctl "$F" "$v")
	r=$(cat "$F")
	case $err in
	*"nvalid argument"*)
		[ "$r" = 3 ] && pass "$v rejected with EINVAL, value stays 3" ||
			fail "$v rejected with EINVAL but the value is now $r" ;;
	"") fail "$v accepted (value now $r)" ;;
	*) fail "$v rejected with '$err' instead of EINVAL (value now $r)" ;;
	esac
done
echo "$orig" >"$F"

# --- measurement ---------------------------------------------------------------
measure_ok=1
if [ -z "$T" ] || [ ! -e "$T/events/kmem/mm_page_pcpu_drain/enable" ]; then
	skipped "measurement: no tracefs with kmem:mm_page_pcpu_drain (needs CONFIG_FTRACE, e.g. contrib/kernel/tests/vmtest-tracing.config)"
	measure_ok=0
elif ! grep -qw function "$T/available_tracers" ||
	! grep -q '^free_pcppages_bulk\( \|$\)' "$T/available_filter_functions"; then
	skipped "measurement: no function tracer for free_pcppages_bulk (needs CONFIG_FUNCTION_TRACER and CONFIG_DYNAMIC_FTRACE)"
	measure_ok=0
elif [ ! -w "$FRAC" ]; then
	skipped "measurement: no $FRAC"
	measure_ok=0
fi

# CPU to fill and take offline: the last hot-pluggable one.
cpu=""
for d in /sys/devices/system/cpu/cpu[0-9]*; do
	n=${d##*cpu}
	[ "$n" != 0 ] && [ -w "$d/online" ] && [ "$(cat "$d/online")" = 1 ] || continue
	[ -z "$cpu" ] || [ "$n" -gt "$cpu" ] && cpu=$n
done
if [ "$measure_ok" = 1 ] && [ -z "$cpu" ]; then
	skipped "measurement: no CPU that can be taken offline (run with 2 or more vCPUs)"
	measure_ok=0
fi

# zones FILE: "start end batch name" per populated zone (pfn range, batch of
# its first online CPU), to find the zone of a drained page.
zones() {
	awk '
	/^Node [0-9]+, zone/ { name = $2 $4; sub(",", "/", name); spanned = ""; batch = ""; next }
	$1 == "spanned" { spanned = $2; next }
	$1 == "batch:" && batch == "" { batch = $2; next }
	$1 == "start_pfn:" && batch != "" { print $2, $2 + spanned, batch, name }' "$ZI" >"$1"
}

# groups TRACE ZONES: one line per free_pcppages_bulk() call:
#   cpu caller pages first_pfn zone batch usecs last
# (last: pages of the call's last page, 1 << its order)
groups() {
	awk -v zones="$2" '
	function pow2(e,  n) { n = 1; while (e-- > 0) n *= 2; return n }
	function hex(s,  i, c, n) { n = 0; s = tolower(s); sub(/^0x/, "", s)
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(s, i, 1)); n = n * 16 + c - 1 }
		return n }
	function zone_of(p,  i) { for (i = 1; i <= nz; i++) if (p >= zs[i] && p < ze[i]) return i; return 0 }
	function flush(c,  z) {
		if (!(c in caller)) return
		z = zone_of(pfn0[c])
		printf "%s %s %d %d %s %d %.0f %d\n", c, caller[c], pages[c], pfn0[c],
			z ? zn[z] : "?", z ? zb[z] : 0, (tl[c] - t0[c]) * 1e6, last[c]
		delete caller[c] }
	BEGIN { while ((getline l < zones) > 0) { nz++; split(l, f, " ")
			zs[nz] = f[1]; ze[nz] = f[2]; zb[nz] = f[3]; zn[nz] = f[4] } }
	/^#/ { next }
	{
		if (!match($0, /\[[0-9]+\]/)) next
		c = substr($0, RSTART + 1, RLENGTH - 2) + 0
		rest = substr($0, RSTART + RLENGTH)
		if (!match(rest, /[0-9]+\.[0-9]+: /)) next
		ts = substr(rest, RSTART, RLENGTH - 2); rest = substr(rest, RSTART + RLENGTH)
		if (rest ~ /^free_pcppages_bulk/) {
			flush(c); k = rest; sub(/.*<-/, "", k); sub(/[ +].*/, "", k)
			caller[c] = k; pages[c] = 0; pfn0[c] = -1; t0[c] = ts; tl[c] = ts
		} else if (rest ~ /^mm_page_pcpu_drain:/ && (c in caller)) {
			o = rest; sub(/.* order=/, "", o); o += 0
			if (pfn0[c] < 0) { p = rest; sub(/.* pfn=/, "", p); sub(/ .*/, "", p); pfn0[c] = hex(p) }
			last[c] = pow2(o); pages[c] += last[c]; tl[c] = ts
		}
	}
	END { for (c in caller) flush(c) }' "$1"
}

if [ "$measure_ok" = 1 ]; then
	echo 8 >"$FRAC" || fail "cannot write 8 to $FRAC"
	echo nop >"$T/current_tracer"
	echo free_pcppages_bulk >"$T/set_ftrace_filter"
	echo "$TRACE_KB" >"$T/buffer_size_kb"
	echo 1 >"$T/events/kmem/mm_page_pcpu_drain/enable"
	echo 0 >"$T/tracing_on"
	echo function >"$T/current_tracer"
	zones "$TMP/zones"
	info "zones (pfn start end batch): $(awk '{ printf "%s%s %d-%d %d", sep, $4, $1, $2, $3; sep = ", " }' "$TMP/zones")"
	for v in $SCALE_VALUES; do
		echo "$v" >"$F"
		: >"$T/trace"
		echo 1 >"$T/tracing_on"
		# A process pinned to $cpu faults in FILL_MB MiB of anonymous
		# memory (dd's buffer, filled from /dev/zero) and exits: its pages
		# go to $cpu's pcp list, bulk frees move the excess over high.
		taskset -c "$cpu" dd if=/dev/zero of=/dev/null bs="${FILL_MB}M" count=1 2>/dev/null ||
			fail "dd with a $FILL_MB MiB buffer on cpu$cpu"
		# Let RCU callbacks run first: consecutive high-order frees on
		# $cpu (slab pages) flush its list in bulk before the offline can.
		sleep "$SETTLE"
		count=$(awk -v c="$cpu" '/^Node/ { z = "node" $2 $4 } $1 == "cpu:" { cur = $2 }
			$1 == "count:" && cur == c { s = s z " " $2 " " } END { print s }' "$ZI")
		if echo 0 >"/sys/devices/system/cpu/cpu$cpu/online"; then
			offlined=$cpu
			echo 0 >"$T/tracing_on"
			echo 1 >"/sys/devices/system/cpu/cpu$cpu/online" && offlined=""
		else
			echo 0 >"$T/tracing_on"
			fail "cannot take cpu$cpu offline"
		fi
		[ -z "$offlined" ] || fail "cannot bring cpu$cpu back online"
		groups "$T/trace" "$TMP/zones" >"$TMP/groups.$v"
		ent=$(sed -n 's/^# entries-in-buffer\/entries-written: \([0-9]*\/[0-9]*\).*/\1/p' "$T/trace")
		[ "${ent%/*}" = "${ent#*/}" ] || info "value $v: trace buffer overran (entries kept/written $ent): raise TRACE_KB"
		info "value $v: cpu$cpu pcp count before the drain: $count"
		# per caller: calls, pages, largest call; first to last event of
		# a call (trace clock; under emulation only good for comparisons)
		awk -v v="$v" '{ n[$2]++; p[$2] += $3; if ($3 > m[$2]) m[$2] = $3
			if ($7 > t[$2]) t[$2] = $7; s[$2] += $7 }
			END { for (k in n) printf "INFO: value %d: %-24s %5d calls %6d pages, largest %4d pages; per call %d us mean, %d us max\n",
				v, k, n[k], p[k], m[k], s[k] / n[k], t[k] }' "$TMP/groups.$v" | sort
		# free_pcppages_bulk(count) stops once it has freed count pages,
		# so only its last page, if high-order, may end past the bound.
		over=$(awk -v bound="$((1 << v))" '$6 > 0 && $3 - $8 >= $6 * bound' "$TMP/groups.$v")
		nz=$(awk '$6 == 0' "$TMP/groups.$v" | wc -l)
		[ "$nz" -eq 0 ] || info "value $v: $nz calls with a page outside the zones (not checked)"
		ncalls=$(wc -l <"$TMP/groups.$v")
		drained=$(awk '$2 ~ /drain_pages/ { s += $3 } END { print s + 0 }' "$TMP/groups.$v")
		bulk=$(awk '$2 !~ /drain_pages/ { s += $3 } END { print s + 0 }' "$TMP/groups.$v")
		if [ "$ncalls" -eq 0 ]; then
			fail "value $v: no free_pcppages_bulk calls traced"
		elif [ -n "$over" ]; then
			fail "value $v: calls moved more than batch << $v pages:"
			echo "$over" | head -n 10 | sed 's/^/  cpu caller pages pfn zone batch us last: /'
		else
			pass "value $v: all $ncalls free_pcppages_bulk calls moved at most batch << $v pages ($bulk pages freed in bulk, $drained drained)"
		fi
		if [ "$drained" -gt 0 ]; then
			dmax=$(awk '$2 ~ /drain_pages/ && $3 > m { m = $3; b = $6 } END { print m + 0, b + 0 }' "$TMP/groups.$v")
			info "value $v: largest drain step $dmax (pages, zone batch); bound $(( ${dmax#* } << v )), which a high-order last page may cross"
		else
			fail "value $v: the offline of cpu$cpu drained nothing (pcp count was: $count)"
		fi
		if [ -n "${VMTEST_OUT:-}" ]; then
			cp "$TMP/groups.$v" "$VMTEST_OUT/groups.$v"
			grep -v mm_page_pcpu_drain "$T/trace" >"$VMTEST_OUT/calls.$v"
		fi
	done
fi

echo "test-batch-scale-max: $npass passed, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ] || exit 1
[ "$nskip" -eq 0 ] || exit 77
exit 0
