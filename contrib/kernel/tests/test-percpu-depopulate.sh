#!/bin/sh
# test-percpu-depopulate.sh - functional test of /sys/kernel/mm/percpu
# (contrib/kernel patch 0003, "mm/percpu: ... sysfs counters and depopulate").
#
# Runs as root under busybox sh (vmtest guest) or any POSIX sh.  Prints one
# PASS/FAIL/SKIP/INFO line per check; exits 0 if nothing failed, 1 if
# something did, 77 (and says why) when the kernel lacks the patch or the
# test cannot run at all.
#
# What it checks:
#   - the files, their modes, and that the counters are consistent with each
#     other, with /proc/meminfo "Percpu:" (kB = nr_populated_pages x nr_units
#     x page size / 1024) and, when readable, with debugfs percpu_stats;
#   - depopulate: write-only, root-only, accepts only "1";
#   - the effect: create N memory cgroups (default 2000), remove 9 of every
#     10 so that survivors are spread over the chunks, wait for the lazy
#     balance work, write 1, and check that the empty populated pages fall to
#     the pool the allocator keeps for atomic allocations and that "Percpu:"
#     falls by exactly the pages released.
#
# Environment: N (memcgs to create, default 2000), KEEP_EVERY (default 10),
# SETTLE_MAX (seconds to wait for dying memcgs and the balance work, 120).

D=/sys/kernel/mm/percpu
STATS=/sys/kernel/debug/percpu_stats
N=${N:-2000}
KEEP_EVERY=${KEEP_EVERY:-10}
SETTLE_MAX=${SETTLE_MAX:-120}

fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
skip() { echo "SKIP: $*"; }
info() { echo "INFO: $*"; }

if [ ! -d "$D" ]; then
	echo "SKIP: $D does not exist: this kernel does not carry the percpu sysfs patch (0003)"
	exit 77
fi
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: must run as root (the test writes $D/depopulate and creates memory cgroups)"
	exit 77
fi

COUNTERS="nr_chunks nr_empty_chunks nr_to_depopulate nr_sidelined nr_populated_pages nr_empty_pop_pages nr_used_pop_pages frag_free_bytes"
CONSTS="nr_units unit_pages empty_pop_pages_high"

# ---------------------------------------------------------------- helpers
rd() { cat "$D/$1" 2>/dev/null; }
is_uint() { case "$1" in ''|*[!0-9]*) return 1 ;; *) return 0 ;; esac; }
meminfo_percpu() { awk '$1 == "Percpu:" { print $2 }' /proc/meminfo; }
uptime_cs() { awk '{ split($1, a, "."); print a[1] * 100 + a[2] }' /proc/uptime; }

page_size() {
	# AT_PAGESZ (6) from the auxiliary vector; 4096 if od cannot tell
	ps_=$(od -A n -t u8 /proc/self/auxv 2>/dev/null |
		awk '{ for (i = 1; i < NF; i += 2) if ($i == 6) { print $(i + 1); exit } }')
	is_uint "$ps_" && [ "$ps_" -gt 0 ] && { echo "$ps_"; return; }
	echo 4096
}

# snap VAR_PREFIX: read every counter into ${prefix}_<name> and Percpu into
# ${prefix}_percpu; retried until Percpu and nr_populated_pages agree with a
# second read (the system may be allocating meanwhile)
snap() {
	tries=0
	while :; do
		p1=$(rd nr_populated_pages)
		for c in $COUNTERS; do eval "${1}_$c=\$(rd $c)"; done
		eval "${1}_percpu=\$(meminfo_percpu)"
		p2=$(rd nr_populated_pages)
		eval "pp=\${${1}_nr_populated_pages}"
		[ "$p1" = "$p2" ] && [ "$p1" = "$pp" ] && break
		tries=$((tries + 1))
		[ $tries -ge 20 ] && break
		sleep 0.2
	done
}

# percpu_stats summary: key=value words, see the awk program
stats_summary() {
	awk '
	/^Allocation Info:/ { sec = "ai" }
	/^Global Stats:/ { sec = "g" }
	/^Per Chunk Stats:/ { sec = "c" }
	sec == "ai" && $1 == "unit_size" { unit = $3 }
	sec == "g" && $1 == "nr_chunks" { nrc = $3 }
	sec == "g" && $1 == "empty_pop_pages" { gemp = $3 }
	sec == "c" && /^Chunk/ {
		kind = "dyn"
		if ($0 ~ /Reserved/) kind = "res"
		else if ($0 ~ /First/) kind = "first"
		else if ($0 ~ /to_depopulate/) { kind = "iso"; todep++ }
		else if ($0 ~ /sidelined/) { kind = "iso"; side++ }
		listed += (kind != "res")
	}
	sec == "c" && $1 == "empty_pop_pages" {
		sum += $3
		if (kind == "first") first = $3
		if (kind == "iso") iso += $3
		if (kind == "res") res = $3
	}
	sec == "c" && $1 == "free_bytes" && (kind == "dyn" || kind == "iso") && $3 == unit { empty++ }
	END {
		printf "st_unit=%d st_nr_chunks=%d st_listed=%d st_global_empty=%d st_sum_empty=%d st_first_empty=%d st_iso_empty=%d st_res_empty=%d st_to_depopulate=%d st_sidelined=%d st_empty_chunks=%d\n", \
			unit, nrc, listed, gemp, sum, first, iso, res, todep, side, empty
	}' "$STATS"
}

have_stats() { [ -r "$STATS" ] && head -c 1 "$STATS" >/dev/null 2>&1; }

PAGE=$(page_size)

# ---------------------------------------------------------------- 1. files
missing=""
for f in $CONSTS $COUNTERS depopulate; do
	[ -e "$D/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && pass "all files present in $D" || fail "missing in $D:$missing"

badmode=""
for f in $CONSTS $COUNTERS; do
	m=$(stat -c %a "$D/$f" 2>/dev/null)
	[ "$m" = 444 ] || badmode="$badmode $f=$m"
done
m=$(stat -c '%a %u' "$D/depopulate" 2>/dev/null)
[ "$m" = "200 0" ] || badmode="$badmode depopulate=$m(want 200, uid 0)"
[ -z "$badmode" ] && pass "modes: counters 0444, depopulate 0200 owned by root" ||
	fail "modes:$badmode"

bad=""
for f in $CONSTS $COUNTERS; do
	v=$(rd "$f")
	is_uint "$v" || bad="$bad $f='$v'"
done
[ -z "$bad" ] && pass "every counter reads as an unsigned integer" || fail "not integers:$bad"

UNITS=$(rd nr_units)
UNIT_PAGES=$(rd unit_pages)
HIGH=$(rd empty_pop_pages_high)
info "page size $PAGE, nr_units $UNITS, unit_pages $UNIT_PAGES, empty_pop_pages_high $HIGH"

# ---------------------------------------------------------------- 2. consistency
check_consistency() { # $1 = label
	snap S
	exp=$((S_nr_populated_pages * UNITS * PAGE / 1024))
	if [ "$S_percpu" = "$exp" ]; then
		pass "$1: meminfo Percpu $S_percpu kB = nr_populated_pages $S_nr_populated_pages x $UNITS units x $PAGE B"
	else
		fail "$1: meminfo Percpu $S_percpu kB, but nr_populated_pages $S_nr_populated_pages x $UNITS x $PAGE B = $exp kB"
	fi
	if [ $((S_nr_used_pop_pages + S_nr_empty_pop_pages)) -le "$S_nr_populated_pages" ] &&
	   [ "$S_nr_to_depopulate" -le "$S_nr_chunks" ] && [ "$S_nr_sidelined" -le "$S_nr_chunks" ] &&
	   [ "$S_nr_empty_chunks" -lt "$S_nr_chunks" ] &&
	   [ "$S_frag_free_bytes" -le $((S_nr_used_pop_pages * PAGE)) ]; then
		pass "$1: counters consistent (chunks $S_nr_chunks, populated $S_nr_populated_pages = used $S_nr_used_pop_pages + empty $((S_nr_populated_pages - S_nr_used_pop_pages)), pool $S_nr_empty_pop_pages, frag $S_frag_free_bytes B)"
	else
		fail "$1: inconsistent counters: chunks $S_nr_chunks empty_chunks $S_nr_empty_chunks to_depop $S_nr_to_depopulate sidelined $S_nr_sidelined populated $S_nr_populated_pages used $S_nr_used_pop_pages pool $S_nr_empty_pop_pages frag $S_frag_free_bytes"
	fi

	if ! have_stats; then
		skip "$1: $STATS not readable (no CONFIG_PERCPU_STATS or debugfs): cross-check skipped"
		return
	fi
	try=0
	while :; do
		snap S
		eval "$(stats_summary)"
		snap S2
		all_empty=$((S_nr_populated_pages - S_nr_used_pop_pages))
		got="nr_chunks $S_nr_chunks/$st_nr_chunks/$st_listed, pool $S_nr_empty_pop_pages/$st_global_empty, empty pages $all_empty/$st_sum_empty, to_depopulate $S_nr_to_depopulate/$st_to_depopulate, sidelined $S_nr_sidelined/$st_sidelined, empty chunks $S_nr_empty_chunks/$st_empty_chunks"
		if [ "$S_nr_populated_pages" = "$S2_nr_populated_pages" ] &&
		   [ "$S_nr_chunks" = "$st_nr_chunks" ] && [ "$S_nr_chunks" = "$st_listed" ] &&
		   [ "$S_nr_empty_pop_pages" = "$st_global_empty" ] && [ "$all_empty" = "$st_sum_empty" ] &&
		   [ "$S_nr_to_depopulate" = "$st_to_depopulate" ] && [ "$S_nr_sidelined" = "$st_sidelined" ] &&
		   [ "$S_nr_empty_chunks" = "$st_empty_chunks" ]; then
			pass "$1: agrees with percpu_stats (sysfs/stats: $got)"
			break
		fi
		try=$((try + 1))
		if [ $try -ge 5 ]; then
			fail "$1: differs from percpu_stats (sysfs/stats: $got)"
			break
		fi
		sleep 1
	done
}
check_consistency "boot"

# ---------------------------------------------------------------- 3. the trigger's interface
if cat "$D/depopulate" >/dev/null 2>&1; then
	fail "depopulate can be read"
else
	pass "depopulate cannot be read"
fi

rejected=""
accepted=""
for v in 0 2 10 -1 abc 1x " 1" 0x1; do
	if printf '%s\n' "$v" >"$D/depopulate" 2>/dev/null; then
		accepted="$accepted '$v'"
	else
		rejected="$rejected '$v'"
	fi
done
[ -z "$accepted" ] && pass "depopulate rejects values other than 1:$rejected" ||
	fail "depopulate accepted:$accepted"

if su -s /bin/sh nobody -c 'id -u' 2>/dev/null | grep -qx 65534; then
	if su -s /bin/sh nobody -c "echo 1 > $D/depopulate" 2>/dev/null; then
		fail "an unprivileged user (nobody) could write depopulate"
	else
		pass "an unprivileged user (nobody) cannot write depopulate"
	fi
	if su -s /bin/sh nobody -c "cat $D/nr_populated_pages" 2>/dev/null | grep -q '^[0-9]'; then
		pass "an unprivileged user can read the counters"
	else
		fail "an unprivileged user cannot read the counters"
	fi
else
	skip "cannot switch to user nobody (su): unprivileged access not tested"
fi

t0=$(uptime_cs)
if echo 1 >"$D/depopulate"; then
	t1=$(uptime_cs)
	pass "root writes 1 to depopulate ($(( (t1 - t0) * 10 )) ms, idle system)"
else
	fail "root cannot write 1 to depopulate"
fi
check_consistency "after an idle depopulate"

# ---------------------------------------------------------------- 4. the effect after memcg churn
CGV=""
if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	CGV=v2
	ROOT=/sys/fs/cgroup
elif [ -e /sys/fs/cgroup/memory/cgroup.procs ]; then
	CGV=v1
	ROOT=/sys/fs/cgroup/memory
fi
if [ -z "$CGV" ]; then
	skip "no memory cgroup hierarchy (v2 with memory, or v1 at /sys/fs/cgroup/memory): effect not tested"
	[ $fails -eq 0 ] && exit 0 || exit 1
fi

CG=$ROOT/pcptune-percpu-test.$$
cleanup() {
	[ -d "$CG" ] || return
	for d in "$CG"/c*; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
	rmdir "$CG" 2>/dev/null
}
trap cleanup EXIT INT TERM

if [ $CGV = v2 ]; then
	echo +memory >"$ROOT/cgroup.subtree_control" 2>/dev/null
	mkdir "$CG" && echo +memory >"$CG/cgroup.subtree_control" ||
		{ fail "cannot create $CG with the memory controller for its children"; exit 1; }
else
	mkdir "$CG" || { fail "cannot create $CG"; exit 1; }
fi

# memcgs that exist or are dying anywhere (v1: /proc/cgroups counts dying ones)
memcg_total() { awk '$1 == "memory" { print $3 }' /proc/cgroups; }
dying_here() {
	if [ $CGV = v2 ]; then
		f=$CG/cgroup.stat
		[ -e "$f" ] || f=$ROOT/cgroup.stat
		awk '$1 == "nr_dying_descendants" { print $2 }' "$f"
	else
		echo 0
	fi
}

# wait until no memcg of ours is dying, the memcg count is steady, nothing is
# queued for depopulation and nr_populated_pages has not moved for 3 s
settle() {
	waited=0 steady=0 last=""
	while [ $waited -lt "$SETTLE_MAX" ]; do
		cur="$(dying_here) $(memcg_total) $(rd nr_to_depopulate) $(rd nr_populated_pages)"
		if [ "$cur" = "$last" ] && [ "$(dying_here)" = 0 ] && [ "$(rd nr_to_depopulate)" = 0 ]; then
			steady=$((steady + 1))
			[ $steady -ge 3 ] && break
		else
			steady=0
		fi
		last=$cur
		sleep 1
		waited=$((waited + 1))
	done
	echo $waited
}

snap B0
t0=$(uptime_cs)
i=1
while [ $i -le "$N" ]; do
	mkdir "$CG/c$i" || break
	i=$((i + 1))
done
t1=$(uptime_cs)
created=$((i - 1))
[ $created -eq "$N" ] && pass "created $N memory cgroups ($CGV) in $(( (t1 - t0) / 100 )).$(( (t1 - t0) % 100 )) s" ||
	{ fail "created only $created of $N memory cgroups"; exit 1; }
snap B1
info "Percpu $B0_percpu -> $B1_percpu kB after creating $N memcgs ($(( (B1_percpu - B0_percpu) * 1024 / N )) B each), chunks $B0_nr_chunks -> $B1_nr_chunks"

i=1
while [ $i -le "$N" ]; do
	[ $((i % KEEP_EVERY)) -ne 0 ] && rmdir "$CG/c$i"
	i=$((i + 1))
done
w=$(settle)
snap B2
info "removed $((N - N / KEEP_EVERY)) (kept every ${KEEP_EVERY}th), waited ${w}s for release and the balance work"
info "lazy state: Percpu $B2_percpu kB, chunks $B2_nr_chunks (empty $B2_nr_empty_chunks, sidelined $B2_nr_sidelined), populated $B2_nr_populated_pages = used $B2_nr_used_pop_pages + empty $((B2_nr_populated_pages - B2_nr_used_pop_pages)) (pool $B2_nr_empty_pop_pages), frag $B2_frag_free_bytes B"
check_consistency "after churn, before depopulate"

first_empty=""
if have_stats; then
	eval "$(stats_summary)"
	first_empty=$st_first_empty
	res_empty=$st_res_empty
fi

t0=$(uptime_cs)
echo 1 >"$D/depopulate" || fail "writing 1 to depopulate failed after churn"
t1=$(uptime_cs)
snap B3
ms=$(( (t1 - t0) * 10 ))
rel=$((B2_nr_populated_pages - B3_nr_populated_pages))
info "depopulate took ${ms} ms: Percpu $B2_percpu -> $B3_percpu kB, populated $B2_nr_populated_pages -> $B3_nr_populated_pages (-$rel pages per unit), pool $B2_nr_empty_pop_pages -> $B3_nr_empty_pop_pages, chunks $B2_nr_chunks -> $B3_nr_chunks, frag $B3_frag_free_bytes B in $B3_nr_used_pop_pages used pages"

empty2=$((B2_nr_populated_pages - B2_nr_used_pop_pages))
empty3=$((B3_nr_populated_pages - B3_nr_used_pop_pages))

# (a) nothing left queued, at most one fully free chunk
[ "$B3_nr_to_depopulate" = 0 ] && [ "$B3_nr_empty_chunks" -le 1 ] &&
	pass "after depopulate: no chunk queued, $B3_nr_empty_chunks fully free chunk(s) kept" ||
	fail "after depopulate: $B3_nr_to_depopulate chunk(s) queued, $B3_nr_empty_chunks fully free chunks"

# (b) the pool of empty populated pages is down to what atomic allocations need
if [ -n "$first_empty" ]; then
	keep=$HIGH
	[ "$first_empty" -gt "$keep" ] && keep=$first_empty
	if [ "$B3_nr_empty_pop_pages" -le "$keep" ] && [ "$B3_nr_empty_pop_pages" -ge "$HIGH" ]; then
		pass "pool of empty populated pages $B2_nr_empty_pop_pages -> $B3_nr_empty_pop_pages (kept: max(high $HIGH, first chunk's $first_empty))"
	else
		fail "pool of empty populated pages is $B3_nr_empty_pop_pages, expected between $HIGH and $keep"
	fi
	# every empty page outside the pool (isolated chunks) is gone; the
	# reserved chunk's own empty pages are not the trigger's business
	[ $((empty3 - B3_nr_empty_pop_pages)) -le "${res_empty:-0}" ] &&
		pass "no empty populated page left outside the pool ($((empty3 - B3_nr_empty_pop_pages)) in the reserved chunk)" ||
		fail "$((empty3 - B3_nr_empty_pop_pages)) empty populated pages left outside the pool (reserved chunk has ${res_empty:-0})"
else
	if [ "$B3_nr_empty_pop_pages" -le "$HIGH" ]; then
		pass "pool of empty populated pages $B2_nr_empty_pop_pages -> $B3_nr_empty_pop_pages (<= high $HIGH)"
	else
		# the first chunk is never depopulated: its empty pages can exceed
		# high; then a second write must find nothing more to do
		echo 1 >"$D/depopulate"
		again=$(rd nr_empty_pop_pages)
		[ "$again" = "$B3_nr_empty_pop_pages" ] &&
			pass "pool $B3_nr_empty_pop_pages > high $HIGH but a second write releases nothing (first chunk's pages, not depopulatable)" ||
			fail "pool $B3_nr_empty_pop_pages > high $HIGH and a second write changed it to $again"
	fi
fi

# (c) exactly the empty pages went, nothing in use
d_used=$((B3_nr_used_pop_pages - B2_nr_used_pop_pages))
[ $d_used -lt 0 ] && d_used=$((-d_used))
if [ $d_used -le 2 ] && [ $((empty2 - empty3 - rel)) -ge -2 ] && [ $((empty2 - empty3 - rel)) -le 2 ]; then
	pass "released $rel empty pages per unit (empty $empty2 -> $empty3); used pages $B2_nr_used_pop_pages -> $B3_nr_used_pop_pages"
else
	fail "released $rel pages but empty pages went $empty2 -> $empty3 and used $B2_nr_used_pop_pages -> $B3_nr_used_pop_pages"
fi

# (d) Percpu fell accordingly
exp_drop=$((rel * UNITS * PAGE / 1024))
got_drop=$((B2_percpu - B3_percpu))
if [ "$got_drop" = "$exp_drop" ] && { [ $rel -gt 0 ] || [ $empty2 -le $((HIGH + ${res_empty:-0})) ]; }; then
	pass "meminfo Percpu fell by $got_drop kB = $rel pages x $UNITS units (excess over the pre-test $B0_percpu kB: $((B2_percpu - B0_percpu)) -> $((B3_percpu - B0_percpu)) kB)"
else
	fail "meminfo Percpu fell by $got_drop kB, expected $exp_drop kB ($rel pages; $empty2 empty before)"
fi
check_consistency "after depopulate"

# (e) allocations still work afterwards (they repopulate as needed)
i=1 ok=1
while [ $i -le 50 ]; do mkdir "$CG/n$i" || { ok=0; break; }; i=$((i + 1)); done
i=1
while [ $i -le 50 ]; do rmdir "$CG/n$i" 2>/dev/null; i=$((i + 1)); done
[ $ok = 1 ] && pass "50 new memcgs can be created after depopulate" || fail "creating memcgs after depopulate failed"

# (f) the whole churn undone: back to (about) the boot state
cleanup
w=$(settle)
echo 1 >"$D/depopulate"
snap B4
info "all test memcgs removed (waited ${w}s) and depopulated: Percpu $B4_percpu kB (before the test $B0_percpu kB), chunks $B4_nr_chunks"
dmesg 2>/dev/null | grep -E 'percpu|WARNING|BUG' | grep -v 'Embedded\|pcpu-alloc' | head -5 | sed 's/^/INFO: dmesg: /'
if dmesg 2>/dev/null | grep -qE 'WARNING:|BUG:|allocation failed'; then
	fail "kernel log has warnings (see dmesg)"
else
	pass "no kernel warning or percpu allocation failure logged"
fi

[ $fails -eq 0 ] && { echo "all checks passed"; exit 0; }
echo "$fails check(s) failed"
exit 1
