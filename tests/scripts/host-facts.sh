#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One definition of the host facts (daemon/model/host-facts.h): on every captured
# tree, `pcptunectl status --json` and `pcptunectl plan --json` give the same
# most-memory-on-pcp-lists per zone and in total, and count the same nodes; the
# memory equals the kernel's formula computed here independently from the tree itself: high (high_max on
# 6.7+) from zone_highsize() of mm/page_alloc.c -- the managed pages over the
# fraction (the low watermark at 0; managed/8 for high_max at 0 on 6.7+)
# split over the CPUs of the zone's node, all online CPUs for a node without
# CPUs, at least 4 x batch -- times the pagesets zoneinfo prints for the zone
# (one per online CPU, of every node) times the page size.  On kernels before
# 6.7, after a sysctl write, it must also equal the sum of the high the kernel
# printed on each pageset.  The memory-only-node captures
# (*-numa2-memonly-smp4-4G: node 1 has 2 GiB and no CPU) are the case status
# and plan used to disagree on.  Prints TAP.
. "$(dirname "$0")/tap.sh"
tmp=$(mktemp -d /tmp/pcptune-host-facts.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
empty=$top_srcdir/tests/policies/empty
page_size=4096   # every captured tree is x86_64

# status/plan JSON (pretty) -> "node zone bytes" lines, then "total bytes".
status_max() {
	awk '/^  "zones": \[/ { z = 1; next } z && /^  \]/ { z = 0 }
	     z && /^      "node":/ { gsub(/[ ,]/, "", $2); node = $2 }
	     z && /^      "zone":/ { gsub(/[",]/, "", $2); zone = $2 }
	     z && /^      "pcp_max_bytes":/ { gsub(/,/, "", $2); print node, zone, $2 }
	     /^  "pcp_max_bytes":/ { gsub(/,/, "", $2); total = $2 }
	     END { print "total", total }' "$1"
}
plan_max() { # the first plan of each zone and the first total are the current fraction
	awk '/^  "zones": \[/ { z = 1; next } z && /^  \]/ { z = 0 }
	     z && /^      "node":/ { gsub(/[ ,]/, "", $2); node = $2; first = 1 }
	     z && /^      "zone":/ { gsub(/[",]/, "", $2); zone = $2 }
	     z && first && /"pcp_max_bytes":/ { gsub(/,/, "", $2); print node, zone, $2; first = 0 }
	     /^  "totals": \[/ { t = 1 } t && /"pcp_max_bytes":/ { gsub(/,/, "", $2); total = $2; t = 0 }
	     END { print "total", total }' "$1"
}
# The kernel's figures from the tree alone: "node zone bytes", "total bytes",
# then "printed bytes" (sum of the printed high x page size; -1 on 6.7+).
kernel_max() { # root
	local root=$1 frac release split="" f n
	frac=$(cat "$root/proc/sys/vm/percpu_pagelist_high_fraction")
	release=$(cat "$root/proc/sys/kernel/osrelease")
	for f in "$root"/sys/devices/system/node/node*/cpulist; do
		[ -f "$f" ] || continue
		n=${f%/cpulist}; n=${n##*/node}
		split="$split $n:$(awk -F, '{ for (i = 1; i <= NF; i++) { if ($i == "") continue;
			k = split($i, r, "-"); c += (k == 2 ? r[2] - r[1] + 1 : 1) } } END { print c + 0 }' "$f")"
	done
	awk -v frac="$frac" -v release="$release" -v split_cpus="$split" -v ps="$page_size" '
	function flush() {
		if (key == "" || !pagesets) return
		cpus = (node in ncpus) ? ncpus[node] : 0
		if (!cpus) cpus = pagesets             # num_online_cpus(): one pageset per online CPU
		if (frac > 0) pages = int(managed / frac)
		else pages = autotune ? int(managed / 8) : low
		high = int(pages / cpus); if (high < 4 * batch) high = 4 * batch
		b = high * pagesets * ps; print key, b; total += b
	}
	BEGIN {
		split(release, v, /[.-]/); autotune = (v[1] > 6 || (v[1] == 6 && v[2] >= 7))
		n = split(split_cpus, s, / /); for (i = 1; i <= n; i++) { split(s[i], p, ":"); ncpus[p[1]] = p[2] }
	}
	/^Node / { flush(); gsub(/,/, "", $2); node = $2; key = $2 " " $4; pagesets = 0; managed = 0; low = 0; next }
	/^ +low +[0-9]/ { low = $2 }
	/^ +managed +[0-9]/ { managed = $2 }
	/^    cpu: / { pagesets++ }
	/^ +high: / { printed += $2 }
	/^ +batch: / && pagesets == 1 { batch = $2 }
	END { flush(); print "total", total; print "printed", autotune ? -1 : printed * ps }' "$root/proc/zoneinfo"
}

n_trees=0
for t in "$FIXTURES"/*/root "$FIXTURES"/*/root-frac-*; do
	[ -f "$t/proc/zoneinfo" ] || continue
	name=${t#"$FIXTURES"/}
	n_trees=$((n_trees + 1))
	"$PCPTUNECTL" status --root "$t" --no-owner-check --policy-dir "$empty" --json >"$tmp/s" 2>"$tmp/e" &&
		"$PCPTUNECTL" plan --root "$t" --no-owner-check --policy-dir "$empty" --json >"$tmp/p" 2>>"$tmp/e" ||
		{ tap_fail "status and plan run on $name" "$(cat "$tmp/e")"; continue; }
	status_max "$tmp/s" >"$tmp/sm"
	plan_max "$tmp/p" >"$tmp/pm"
	kernel_max "$t" >"$tmp/km"
	if ! grep -q '^total [0-9]' "$tmp/sm" || [ "$(wc -l <"$tmp/sm")" -lt 2 ]; then
		tap_fail "status gives pcp_max_bytes on $name" "$(cat "$tmp/sm")"
	elif cmp -s "$tmp/sm" "$tmp/pm"; then
		tap_ok "status and plan agree on $name: $(tail -1 "$tmp/sm")"
	else
		tap_fail "status and plan agree on $name" "$(diff "$tmp/sm" "$tmp/pm")"
	fi
	# Nodes with CPUs or memory (host_count_nodes()): status and plan count them alike.
	sn=$(sed -n 's/^  "nodes": \([0-9]*\),$/\1/p' "$tmp/s") pn=$(sed -n 's/^    "nodes": \([0-9]*\),$/\1/p' "$tmp/p")
	[ -n "$sn" ] && [ "$sn" = "$pn" ] && tap_ok "status and plan count $sn node(s) on $name" ||
		tap_fail "status and plan count the nodes alike on $name" "status: $sn" "plan: $pn"
	if head -n -1 "$tmp/km" | cmp -s - "$tmp/sm"; then
		tap_ok "the kernel's formula gives the same on $name"
	else
		tap_fail "the kernel's formula gives the same on $name" "$(head -n -1 "$tmp/km" | diff - "$tmp/sm")"
	fi
	# Boot trees may hold stale pagesets (tests/vm/README); after a write the kernel recomputed them all.
	printed=$(awk '$1 == "printed" { print $2 }' "$tmp/km")
	case "$name" in */root-frac-*)
		if [ "$printed" != -1 ]; then
			if [ "$printed" = "$(awk '$1 == "total" { print $2 }' "$tmp/sm")" ]; then
				tap_ok "the sum of the printed high on every pageset gives the same on $name"
			else
				tap_fail "the sum of the printed high on every pageset gives the same on $name" \
					"printed x page size: $printed" "$(cat "$tmp/sm")"
			fi
		fi ;;
	esac
done
[ "$n_trees" -gt 0 ] || tap_fail "no captured tree under $FIXTURES"

# The memory-only node: 4 pagesets on each of its zones, although it has no CPU;
# status used to count 0 CPUs there, plan all online ones.
for set in 6.1.0-57-amd64 6.12.117+deb12-amd64; do
	t=$FIXTURES/$set-numa2-memonly-smp4-4G/root-frac-1000
	"$PCPTUNECTL" status --root "$t" --no-owner-check --policy-dir "$empty" --json >"$tmp/s" 2>&1
	if awk '/"node": 1,/ { n1 = 1 } n1 && /"cpus": 0,/ { c++ } n1 && /"pagesets": 4,/ { p++ }
	        n1 && /"pcp_max_bytes": 4128768$/ { b++ }
	        END { exit !(c == 2 && p == 2 && b == 2) }' "$tmp/s"; then
		tap_ok "$set memory-only node 1: 0 CPUs, 4 pagesets, 252 x 4 x 4 KiB on each zone at fraction 1000"
	else
		tap_fail "$set memory-only node 1 at fraction 1000" "$(grep -A 30 '"node": 1' "$tmp/s" | head -60)"
	fi
done
tap_done
