#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pcptunectl plan, snapshot and repair on fixture roots: exactness on every
# captured tree (checked by an independent awk comparator), the JSON
# contract, shapes, snapshots and fleets, and pageset mismatches.  Prints TAP.
. "$(dirname "$0")/tap.sh"
export PCPTUNECTL
tmp=$(mktemp -d /tmp/pcptune-plan.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
empty=$top_srcdir/tests/policies/empty
plan() { "$PCPTUNECTL" plan --no-owner-check --policy-dir "$empty" "$@"; }

# --- exactness on every captured tree.
for t in "$FIXTURES"/*/root "$FIXTURES"/*/root-frac-*; do
	[ -f "$t/proc/zoneinfo" ] || continue
	name=${t#"$FIXTURES"/}
	if out=$("$top_srcdir/tests/scripts/compare-plan" "$t" 2>&1); then
		tap_ok "plan is exact on $name: $(printf '%s' "$out" | tail -1)"
	else
		tap_fail "plan on $name" "$out"
	fi
done

# --- the JSON contract.
root=$FIXTURES/6.1.0-57-amd64-smp16-numa2-8G/root-frac-1000
plan --root "$root" --json -f 8 -f 1000 -f 4096 >"$tmp/j" 2>&1
check_json() { # name awk-program (reads the pretty JSON)
	if awk "$2" "$tmp/j"; then tap_ok "$1"; else tap_fail "$1" "$(head -40 "$tmp/j")"; fi
}
check_json "JSON has kernel" '/"kernel": "6.1.0-57-amd64"/ { f = 1 } END { exit !f }'
check_json "JSON fractions: the current one, then each --fraction without duplicates" \
	'/"fractions": \[/ { a = 1; next } a && /\]/ { a = 0 } a { gsub(/[ ,]/, ""); s = s $0 "," } END { exit s != "1000,8,4096," }'
check_json "JSON has 4 populated zones (DMA, DMA32, Normal on node 0; Normal on node 1)" \
	'/"zone": "/ { n++ } END { exit n != 4 }'
check_json "JSON: every zone has node, managed_pages, low_pages, cpus and 3 plans" \
	'/"managed_pages"/ { m++ } /"low_pages"/ { l++ } /"cpus": 8,/ { c++ } /"pcp_max_bytes"/ { p++ } END { exit !(m == 4 && l == 4 && c == 4 && p >= 12) }'
check_json "JSON: at fraction 1000 node 1 Normal is at the floor: 1031443/1000/8 = 128 < 4 x 63 = 252" \
	'/"node": 1/ { n1 = 1 } n1 && /"fraction": 1000/ { f = 1 } n1 && f && /"high_max": 252,/ { ok = 1 } END { exit !ok }'
check_json "JSON: pagesets checked, 128 of 128 exact, no mismatch" \
	'/"pagesets": \{/ { p = 1 } p && /"exact": 128,/ { e = 1 } p && /"mismatches": \[/ { m = 1; next } m && /^ *\]/ { ok = 1 } m { m = 0 } END { exit !(ok && e) }'

# --- shapes.
plan --shape cpus=256,memory=1TiB,nodes=2,kernel=6.12 --json >"$tmp/j" 2>&1
check_json "shape: an estimate with its assumptions" '/"estimate": true/ { e = 1 } /"assumptions"/ { a = 1 } END { exit !(e && a) }'
check_json "shape: 128 CPUs on each node's zones" '/"cpus": 128/ { n++ } END { exit n < 3 }'
plan --shape cpus=8,memory=4GiB,nodes=1,kernel=6.1 --managed 0:Normal=233875 --managed 0:DMA32=765920 --json >"$tmp/j" 2>&1
check_json "shape --managed: the given managed pages are used" \
	'/"managed_pages": 233875/ { a = 1 } /"managed_pages": 765920/ { b = 1 } END { exit !(a && b) }'
for bad in "cpus=0,memory=1GiB" "cpus=4" "cpus=4,memory=1GiB,colour=red" "cpus=4,memory=1parsec" "cpus=4,memory=1GiB,nodes=65"; do
	plan --shape "$bad" >"$tmp/o" 2>&1; rc=$?
	[ $rc = 2 ] && grep -q "Invalid --shape" "$tmp/o" && tap_ok "bad shape '$bad' is refused" || tap_fail "bad shape '$bad'" "exit $rc" "$(cat "$tmp/o")"
done
plan -f 7 >"$tmp/o" 2>&1; [ $? = 2 ] && tap_ok "--fraction 7 is refused" || tap_fail "--fraction 7"
out=$(plan --shape cpus=256,memory=1TiB,nodes=1 --containers 1000 --memcgs-per-container 3)
if printf '%s' "$out" | grep -q "^  1000 containers x 3 memcgs = 3000 memcgs: " && printf '%s' "$out" | grep -q "minimum ("; then
	tap_ok "shape report has the percpu projection and the minimum candidate"
else
	tap_fail "shape report" "$out"
fi
width=$(printf '%s\n' "$out" | awk '{ if (length > m) m = length } END { print m }')
[ "$width" -le 100 ] && tap_ok "human output fits 100 columns ($width)" || tap_fail "width $width"

# --- snapshot, .tar.gz and fleet.
src=$FIXTURES/6.12.117+deb12-amd64-smp16-numa2-8G/root
"$PCPTUNECTL" snapshot --root "$src" -o "$tmp/fleet/hostA" >"$tmp/o" 2>&1 &&
	"$PCPTUNECTL" snapshot --root "$FIXTURES/6.1.0-57-amd64-smp2-1G/root" -o "$tmp/fleet/hostB.tar.gz" >>"$tmp/o" 2>&1
rc=$?
a=$(plan --root "$src" --csv | cut -d, -f2-)
b=$(plan --root "$tmp/fleet/hostA" --csv | cut -d, -f2-)
if [ $rc = 0 ] && [ -n "$a" ] && [ "$a" = "$b" ] && [ -f "$tmp/fleet/hostA/.pcptune/page_size" ]; then
	tap_ok "a snapshot plans exactly like its source"
else
	tap_fail "snapshot" "$(cat "$tmp/o")" "$a" "$b"
fi
plan --root "$tmp/fleet" >"$tmp/csv" 2>&1
if [ "$(head -1 "$tmp/csv" | cut -d, -f1-4)" = "host,kernel,node,zone" ] && grep -q "^hostA,6.12.117" "$tmp/csv" &&
	grep -q "^hostB,6.1.0-57" "$tmp/csv" && [ "$(grep -c '^host,' "$tmp/csv")" = 1 ]; then
	tap_ok "a directory of snapshots (directory and .tar.gz) gives one CSV table"
else
	tap_fail "fleet CSV" "$(cat "$tmp/csv")"
fi
plan --root "$tmp/fleet" --json >"$tmp/j" 2>&1
check_json "fleet JSON: schema_version and a list of hosts" '/^  "schema_version": 1,/ { v = 1 } /^  "hosts": \[/ { a = 1 } /"kernel"/ { k++ } END { exit !(v && a && k == 2) }'
plan --root "$tmp/fleet/hostB.tar.gz" --csv >"$tmp/o" 2>&1 && grep -q ",6.1.0-57-amd64,0,DMA32," "$tmp/o" &&
	tap_ok "plan --root FILE.tar.gz" || tap_fail "plan tar.gz" "$(cat "$tmp/o")"

# --- pagesets that differ from the model (a captured host whose batch is 7 instead of 63).
cp -r "$FIXTURES/6.1.0-57-amd64-smp8-4G/root" "$tmp/bad"; chmod -R u+w "$tmp/bad"
awk '/^Node 0, zone    DMA32/ { z = 1 } /^Node 0, zone   Normal/ { z = 0 }
     z && /^              batch:/ && !done { sub(/63/, "7"); done = 1 } { print }' \
	"$FIXTURES/6.1.0-57-amd64-smp8-4G/root/proc/zoneinfo" >"$tmp/bad/proc/zoneinfo"
out=$(plan --root "$tmp/bad" 2>&1)
if printf '%s' "$out" | grep -q "MISMATCH node 0 DMA32 cpu 0: batch 7, model 63"; then
	tap_ok "plan reports a pageset whose batch is 7 where the model says 63"
else
	tap_fail "mismatch report" "$out"
fi
"$PCPTUNECTL" repair --root "$tmp/bad" --state-dir "$tmp/state" >"$tmp/o" 2>&1; rc=$?
# A fake root does not recompute: the repair writes its sequence and then reports the pagesets still differ.
if [ $rc = 1 ] && grep -q "node 0 DMA32 cpu 0: batch 7, model 63" "$tmp/o" &&
	grep -q "percpu_pagelist_high_fraction 0 -> 2147483647 -> 0" "$tmp/o" &&
	grep -q "still differ" "$tmp/o" && [ "$(cat "$tmp/bad/proc/sys/vm/percpu_pagelist_high_fraction")" = 0 ] &&
	no_journal "$tmp/state"; then
	tap_ok "repair writes a large fraction then the wanted one, verifies, and leaves the original"
else
	tap_fail "repair on a fixture" "exit $rc" "$(cat "$tmp/o")"
fi
# The daemon with a `repair: pagesets` rule does the same (once per cooldown).
if [ "$(id -u)" = 0 ]; then
	pol=$tmp/pol-repair; mkdir -p "$pol"; cp "$top_srcdir"/tests/policies/repair/*.yaml "$pol"/; chmod 0644 "$pol"/*
	"$PCPTUNED" --once --root "$tmp/bad" --state-dir "$tmp/state" --policy-dir "$pol" >"$tmp/o" 2>&1; rc=$?
	if [ $rc = 0 ] && grep -q "Rule test-repair/pagesets: 1 of 48 pageset values differ from the model" "$tmp/o" &&
		grep -q "0 -> 2147483647 -> 0" "$tmp/o" && grep -q "still differ after the repair" "$tmp/o" &&
		[ "$(cat "$tmp/bad/proc/sys/vm/percpu_pagelist_high_fraction")" = 0 ] && no_journal "$tmp/state"; then
		tap_ok "pcptuned with 'repair: pagesets' detects, rewrites and verifies"
	else
		tap_fail "daemon repair rule" "exit $rc" "$(cat "$tmp/o")"
	fi
	"$PCPTUNED" --once --dry-run --root "$tmp/bad" --policy-dir "$pol" >"$tmp/o" 2>&1
	grep -q "would make the kernel recompute them" "$tmp/o" && tap_ok "dry-run only says it would repair" ||
		tap_fail "dry-run repair" "$(cat "$tmp/o")"
fi
"$PCPTUNECTL" repair --root "$FIXTURES/6.1.0-57-amd64-smp8-4G/root" --state-dir "$tmp/state" >"$tmp/o" 2>&1
[ $? = 0 ] && grep -q "Nothing to repair" "$tmp/o" && tap_ok "repair with matching pagesets does nothing" || tap_fail "repair no-op" "$(cat "$tmp/o")"

# --- the Percpu split and percpu_stats on a snapshot (6.1, 16 CPUs, 2 nodes: 44032 B per memcg modelled).
set61=$FIXTURES/6.1.192-vmtest-smp16-numa2-8G
cp -r "$set61/root" "$tmp/split"
cp "$set61/memcg-2-after-remove-meminfo.txt" "$tmp/split/proc/meminfo"          # Percpu 6784 kB
cp "$set61/memcg-2-after-remove-percpu_stats.txt" "$tmp/split/sys/kernel/debug/percpu_stats"
mkdir -p "$tmp/split/.pcptune"
printf 'mode v2\nmount /sys/fs/cgroup\nlive 51\ndying 10\n' >"$tmp/split/.pcptune/memcg"
split_json() { # name file: 51 x 44032 live, 10 x 44032 x 0.98 dying, the rest other; fragmentation as given
	if awk -v frag="$3" '/"total_bytes": 6946816,/ { t = 1 } /"live_memcgs_bytes": 2245632,/ { l = 1 }
		/"dying_memcgs_bytes": 431514,/ { d = 1 } /"other_bytes": 4269670,/ { o = 1 }
		$0 ~ "\"fragmentation_bytes\": " frag { f = 1 } /"live_memcgs": "modelled"/ { b = 1 }
		END { exit !(t && l && d && o && f && b) }' "$2"; then tap_ok "$1"; else tap_fail "$1" "$(grep -A30 '"percpu"' "$2")"; fi
}
plan --root "$tmp/split" --json >"$tmp/j" 2>&1
split_json "plan --json on a snapshot: the split, fragmentation from percpu_stats and Percpu (51064 B x 16)" "$tmp/j" 817024
"$PCPTUNECTL" status --root "$tmp/split" --state-dir "$tmp/nostate" --policy-dir "$empty" --no-owner-check --json >"$tmp/j" 2>&1
split_json "status --json on a snapshot: the same split" "$tmp/j" 817024
plan --root "$tmp/split" >"$tmp/o" 2>&1
if grep -q "^  percpu: 6.6 MiB = live memcgs 2.1 MiB + dying memcgs 421.4 KiB + other 4.1 MiB (fragmentation 797.9 KiB)" "$tmp/o" &&
	grep -q "^  percpu_stats: 4 chunks (1 empty), 27 empty populated pages, 661.9 KiB free per unit$" "$tmp/o" &&
	grep -q "^    as read when the snapshot was taken$" "$tmp/o"; then
	tap_ok "plan text: the split line with its basis and the percpu_stats summary"
else
	tap_fail "plan text split" "$(sed -n '/^percpu/,/^$/p' "$tmp/o")"
fi
# A dump whose Global Stats count a chunk no section prints: reported, not used for fragmentation.
cp "$set61/constructed-inconsistent-percpu_stats.txt" "$tmp/split/sys/kernel/debug/percpu_stats"
plan --root "$tmp/split" --json >"$tmp/j" 2>&1
split_json "an inconsistent percpu_stats dump is left out of the split (fragmentation null)" "$tmp/j" null
grep -q '"inconsistency": "Global Stats nr_chunks 4, chunk sections 3; nr_cur_alloc 527, chunks'"'"' nr_alloc sum 427"' "$tmp/j" &&
	tap_ok "JSON says what disagrees in the inconsistent dump" || tap_fail "inconsistency JSON" "$(grep -A12 percpu_stats "$tmp/j")"
"$PCPTUNECTL" status --root "$tmp/split" --state-dir "$tmp/nostate" --policy-dir "$empty" --no-owner-check >"$tmp/o" 2>&1
grep -q "^percpu_stats: inconsistent dump, not used:$" "$tmp/o" && grep -q "^  Global Stats nr_chunks 4, chunk sections 3" "$tmp/o" &&
	! grep -q "fragmentation" "$tmp/o" && tap_ok "status says the dump is inconsistent and shows no fragmentation" ||
	tap_fail "status inconsistent" "$(cat "$tmp/o")"
# `plan --measure`'s result, kept in the state directory, is used for the same kernel and shape only.
mkdir -p "$tmp/state-m"
printf '{"kernel_release":"6.1.192-vmtest","possible_cpus":16,"nodes":2,"bytes":40000,"how":"measured here (test)"}\n' \
	>"$tmp/state-m/memcg-cost.json"
"$PCPTUNECTL" status --root "$tmp/split" --state-dir "$tmp/state-m" --policy-dir "$empty" --no-owner-check >"$tmp/o" 2>&1
grep -q "live memcgs 1.9 MiB" "$tmp/o" && grep -q "memcgs measured, 40000 B each" "$tmp/o" &&
	tap_ok "status takes the per-memcg cost from a kept plan --measure result" || tap_fail "kept measurement" "$(cat "$tmp/o")"
sed -i 's/"possible_cpus":16/"possible_cpus":8/' "$tmp/state-m/memcg-cost.json"
"$PCPTUNECTL" status --root "$tmp/split" --state-dir "$tmp/state-m" --policy-dir "$empty" --no-owner-check >"$tmp/o" 2>&1
grep -q "memcgs modelled, 44032 B each" "$tmp/o" && tap_ok "a kept measurement for another CPU count is not used" ||
	tap_fail "kept measurement, other shape" "$(cat "$tmp/o")"
# --- bulk-free holds per fraction, calibration and --latency (6.18 live host fixture: batch 63).
live=$FIXTURES/6.18.44-fc-live-smp2-24G/root
mkdir -p "$tmp/cal"
flat() { tr '\n' ' ' <"$tmp/o" | tr -s ' '; } # wrapped lines joined
plan --root "$live" --calibration-dir "$tmp/cal" >"$tmp/o" 2>&1; rc=$?
if [ $rc = 0 ] && flat | grep -q "no calibration: no $tmp/cal/calibration.json" &&
	grep -Eq "^  0 +default +2016 +- " "$tmp/o" && grep -Eq "^  [0-9]+ +minimum +189 +- " "$tmp/o"; then
	tap_ok "plan without a calibration says so, shows pages per bulk free (2016 default, 189 minimum), exits 0"
else
	tap_fail "plan without calibration" "exit $rc" "$(cat "$tmp/o")"
fi
plan --root "$live" --calibration-dir "$tmp/cal" --latency 200us >"$tmp/o" 2>&1; rc=$?
[ $rc = 0 ] && grep -q "latency 200 us: no calibration to predict with" "$tmp/o" &&
	tap_ok "--latency without a calibration says so and exits 0" || tap_fail "--latency uncalibrated" "exit $rc" "$(cat "$tmp/o")"
# By hand: 300 ns per page, 200 us.  Independently: the answer's pages x 300 <= 200000, and one
# fraction less gives more pages than that.
plan --root "$live" --calibration-dir "$tmp/cal" --ns-per-page 300 --latency 200us --json >"$tmp/j" 2>&1
f=$(sed -n 's/.*"latency_fraction": \([0-9]*\).*/\1/p' "$tmp/j")
pages_at() { plan --root "$live" --calibration-dir "$tmp/cal" --json -f "$1" |
	awk -v f="$1" '/"fraction": / { gsub(/[^0-9]/, "", $2); cur = $2 } /"pages": / && cur == f { gsub(/[^0-9]/, "", $2); print $2; exit }'; }
if [ -n "$f" ] && [ "$f" -gt 8 ]; then
	p=$(pages_at "$f"); q=$(pages_at $((f - 1)))
	if [ -n "$p" ] && [ -n "$q" ] && [ $((p * 300)) -le 200000 ] && [ $((q * 300)) -gt 200000 ] &&
		grep -q '"latency_met": true' "$tmp/j"; then
		tap_ok "--latency 200us at 300 ns/page: fraction $f ($p pages, $((p * 300 / 1000)) us); $((f - 1)) would move $q"
	else
		tap_fail "--latency answer" "f=$f p=$p q=$q" "$(cat "$tmp/j" | grep -A40 bulk_free)"
	fi
else
	tap_fail "--latency fraction" "$(grep -A40 '"bulk_free"' "$tmp/j")"
fi
plan --root "$live" --calibration-dir "$tmp/cal" --ns-per-page 300 --latency 20us >"$tmp/o" 2>&1
grep -q "latency 20 us: no fraction meets it; the minimum, [0-9]*, is the closest (predicted 57 us)" "$tmp/o" &&
	tap_ok "--latency below the minimum's hold names the minimum" || tap_fail "--latency unreachable" "$(cat "$tmp/o")"
# A calibration file as pcptuned writes it (20 bulk frees of 189 pages at 300 ns per page), then a tampered one.
cat >"$tmp/cal/calibration.json" <<EOC
{ "version": 1, "ns_per_page": 300, "ns_per_page_stderr": 0, "rms_residual_ns": 0, "samples": 20,
  "sum_pages2": 714420, "sum_span_pages": 214326000, "sum_span2": 64297800000, "pages_min": 189, "pages_max": 189,
  "kernel": "6.18.44-fc-v857", "updated": 1764600000 }
EOC
plan --root "$live" --calibration-dir "$tmp/cal" >"$tmp/o" 2>&1
flat | grep -q "calibration: 300.0 ns per page ($tmp/cal/calibration.json: the fit (no p99 rate yet); fit 300.0 +-0.0 ns (standard error), 20 bulk frees of 189-189 pages, kernel 6.18.44-fc-v857)" &&
	grep -Eq "^  0 +default +2016 +605 us " "$tmp/o" && tap_ok "plan uses the host's calibration.json (2016 pages: 605 us)" ||
	tap_fail "calibration file" "$(cat "$tmp/o")"
# The goal in a dry run, with that calibration: the prediction, the choice and why; the same answer as
# plan --latency; without a calibration it leaves the knob alone and says so.
mkdir -p "$tmp/goal"
printf 'version: 1\nname: latency\nrules:\n  - name: goal\n    pcp: { high: { bulk_free_p99: 200us } }\n' >"$tmp/goal/50.yaml"
"$PCPTUNED" --once --dry-run --root "$live" --policy-dir "$tmp/goal" --calibration-dir "$tmp/cal" >"$tmp/o" 2>&1
want=$(plan --root "$live" --calibration-dir "$tmp/cal" --latency 200us --json | sed -n 's/.*"latency_fraction": \([0-9]*\).*/\1/p')
if [ -n "$want" ] && grep -q "decision: would set vm.percpu_pagelist_high_fraction 0 -> $want (policy latency, rule goal: pcp.high bulk_free_p99 200us)" "$tmp/o" &&
	grep -q "why: predicted p99 bulk-free hold 200 us (666 pages x 300.0 ns per page) meets the target 200 us; the default would move 2016 pages (605 us): the largest lists that meet it" "$tmp/o"; then
	tap_ok "dry-run goal bulk_free_p99 200us: fraction $want, with the prediction and why (as plan --latency)"
else
	tap_fail "dry-run goal" "want $want" "$(cat "$tmp/o")"
fi
# One model for text and JSON: the goal's fraction in plan's candidates is the same in both (the JSON
# once solved it without the calibration and said "No data available").
plan --root "$live" --no-owner-check --policy-dir "$tmp/goal" --ns-per-page 300 >"$tmp/o" 2>&1
text_frac=$(sed -n 's/^  policy latency\/goal: bulk_free_p99 200us -> \([0-9]*\) .*/\1/p' "$tmp/o")
json_frac=$(plan --root "$live" --no-owner-check --policy-dir "$tmp/goal" --ns-per-page 300 --json |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["policies"][0].get("fraction"))')
[ -n "$text_frac" ] && [ "$text_frac" = "$json_frac" ] && [ "$text_frac" = "$want" ] &&
	tap_ok "plan: the bulk_free_p99 goal solves to $want in the text and in the JSON" ||
	tap_fail "plan: goal in text and JSON" "text $text_frac, json $json_frac, --latency $want" "$(cat "$tmp/o")"
"$PCPTUNED" --once --dry-run --root "$live" --policy-dir "$tmp/goal" --calibration-dir "$tmp/goal" >"$tmp/o" 2>&1
grep -q "no bulk-free calibration on this host yet" "$tmp/o" && grep -q "the knob is left alone until there is one" "$tmp/o" &&
	tap_ok "dry-run goal without a calibration leaves the knob alone and says why" || tap_fail "goal uncalibrated" "$(cat "$tmp/o")"
sed -i 's/"ns_per_page": 300/"ns_per_page": 3/' "$tmp/cal/calibration.json"
plan --root "$live" --calibration-dir "$tmp/cal" >"$tmp/o" 2>&1; rc=$?
[ $rc = 0 ] && flat | grep -q "calibration.json is unusable (Invalid argument), ignored" &&
	tap_ok "a calibration whose fit is not its sums' is refused" || tap_fail "tampered calibration" "exit $rc" "$(cat "$tmp/o")"
# This host's calibration (the default directory) is not a snapshot's or a shape's: plan says so and
# does not read it; --calibration-dir names one on purpose (above).
plan --root "$live" >"$tmp/o" 2>&1; rc=$?
[ $rc = 0 ] && flat | grep -q "no calibration: this host's calibration is not used for a snapshot; --ns-per-page N or --calibration-dir DIR supplies one" &&
	tap_ok "plan --root without --calibration-dir does not use this host's calibration" ||
	tap_fail "snapshot calibration" "exit $rc" "$(cat "$tmp/o")"
plan --shape cpus=4,memory=8G,nodes=1 >"$tmp/o" 2>&1; rc=$?
[ $rc = 0 ] && flat | grep -q "no calibration: this host's calibration is not used for a shape;" &&
	tap_ok "plan --shape does not use this host's calibration" || tap_fail "shape calibration" "exit $rc" "$(cat "$tmp/o")"

tap_done
