#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Metrics through Debian's real prometheus-node-exporter (root): a dry-run
# pcptuned on this host writes its textfile into a private directory; a
# node_exporter on 127.0.0.1 (a free port) serves that directory with its
# textfile collector; /metrics, scraped over HTTP, has every metric of
# pcptuned(8) (--list-metrics) with a value that matches this host, and no
# other pcptune_ metric; promtool accepts the file.  Both processes are
# stopped on any exit.  Prints TAP.
. "$(dirname "$0")/../scripts/tap.sh"
[ "$(id -u)" = 0 ] || tap_skip_all "needs root"
ne=$(command -v prometheus-node-exporter || command -v node_exporter) ||
	tap_skip_all "prometheus-node-exporter not installed (build-aux/debian-packages-test)"
command -v curl >/dev/null || tap_skip_all "curl not installed"
# A dry-run writes nothing, but the values compared below must not move under another live test.
live_lock
knob=/proc/sys/vm/percpu_pagelist_high_fraction
[ -r "$knob" ] || tap_skip_all "no $knob"
tmp=$(mktemp -d /tmp/pcptune-live-ne.XXXXXX)
dpid=""
nepid=""
cleanup() {
	[ -n "$nepid" ] && kill "$nepid" 2>/dev/null && wait "$nepid" 2>/dev/null
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Every metric available: a pcp.high rule, a rule on proc.exit_rate (opens the proc connector)
# that never fires, and PSI and memcg counts from this host.
mkdir -p "$tmp/pol" "$tmp/textfile"
cat >"$tmp/pol/50-metrics.yaml" <<EOY
version: 1
name: test-metrics
rules:
  - name: floor
    pcp: { high: minimum }
  - name: never-storm
    when: proc.exit_rate > 1000000/s for 2s
    pcp: { high: minimum }
EOY
chmod 0644 "$tmp/pol/50-metrics.yaml"
"$PCPTUNED" --dry-run --policy-dir "$tmp/pol" --state-dir "$tmp/state" --interval 1s --metrics-dir "$tmp/textfile" >"$tmp/log" 2>&1 &
dpid=$!
if ! wait_for 100 test -s "$tmp/textfile/pcptune.prom"; then
	tap_fail "pcptuned --dry-run wrote no metrics file" "$(cat "$tmp/log")"
	tap_done; exit
fi

# node_exporter on a free port of 127.0.0.1 (another process may take it between the look and
# the bind: then try another).
start_ne() {
	for try in 1 2 3 4 5; do
		port=$(shuf -i 20000-60000 -n 1)
		ss -Htln "sport = :$port" | grep -q . && continue
		"$ne" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults --collector.textfile \
			--collector.textfile.directory="$tmp/textfile" >"$tmp/ne.log" 2>&1 &
		nepid=$!
		if wait_for 100 curl -sf -o /dev/null "http://127.0.0.1:$port/metrics"; then return 0; fi
		kill "$nepid" 2>/dev/null; wait "$nepid" 2>/dev/null; nepid=""
	done
	return 1
}
if ! start_ne; then
	tap_fail "node_exporter did not serve on 127.0.0.1" "$(cat "$tmp/ne.log")"
	tap_done; exit
fi
tap_ok "node_exporter $("$ne" --version 2>&1 | awk 'NR == 1 { print $3 }') serves 127.0.0.1:$port with its textfile collector on pcptuned's directory"
# A sample after node_exporter started, so the values below are this host's now.
s0=$(awk '$1 == "pcptune_samples_total" { print $2 }' "$tmp/textfile/pcptune.prom")
wait_for 50 sh -c "awk '\$1 == \"pcptune_samples_total\" && \$2 > $s0 { f = 1 } END { exit !f }' '$tmp/textfile/pcptune.prom'"
curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/scrape"; rc=$?
now=$(date +%s)
if [ $rc = 0 ] && grep -q '^node_textfile_scrape_error 0$' "$tmp/scrape"; then
	tap_ok "GET /metrics: $(grep -c '^pcptune_' "$tmp/scrape") pcptune samples, node_textfile_scrape_error 0"
else
	tap_fail "scrape" "curl exit $rc" "$(grep textfile "$tmp/scrape")" "$(cat "$tmp/ne.log")"
fi

# Every documented metric is served, and no other pcptune_ metric.
"$PCPTUNED" --list-metrics | cut -f1 | sort >"$tmp/documented"
sed -n 's/^\(pcptune_[a-z_]*\)[{ ].*/\1/p' "$tmp/scrape" | sort -u >"$tmp/served"
# The bulk-free metrics need tracefs and a completed trace window (hold and pages also a measured
# bulk free): checked apart below.
missing=$(comm -23 "$tmp/documented" "$tmp/served" | grep -v '^pcptune_pcp_bulk_free_')
extra=$(comm -13 "$tmp/documented" "$tmp/served")
if [ -z "$missing" ] && [ -z "$extra" ] && [ -s "$tmp/served" ]; then
	tap_ok "the $(wc -l <"$tmp/served") documented pcptune metrics available now are served (of $(wc -l <"$tmp/documented"); bulk-free below), and no other"
else
	tap_fail "served metrics differ from pcptuned --list-metrics" "missing: $missing" "undocumented: $extra"
fi

if grep -q "Measuring pcp bulk frees" "$tmp/log"; then
	if wait_for 50 grep -q '^pcptune_pcp_bulk_free_traced_seconds_total ' "$tmp/textfile/pcptune.prom"; then
		tap_ok "bulk-free tracing: $(grep -o '^pcptune_pcp_bulk_free_samples .*' "$tmp/textfile/pcptune.prom") served"
	else
		tap_fail "bulk-free metrics not served though pcptuned traces" "$(cat "$tmp/log")"
	fi
else
	tap_ok "bulk-free metrics absent: $(grep -o 'pcp.bulk_free.* are unavailable.*' "$tmp/log")"
fi

# promtool on the file as it is now, after the bulk-free window above, so it has every metric
# this host makes available (the fixture roots of tests/scripts/metrics.sh lack PSI, memcgs,
# the proc connector and tracing).
cp "$tmp/textfile/pcptune.prom" "$tmp/checked.prom"
if ! command -v promtool >/dev/null; then
	echo "ok $((tap_n += 1)) - promtool check metrics on this host's file # SKIP promtool not installed (Debian package prometheus)"
elif out=$(promtool check metrics <"$tmp/checked.prom" 2>&1); then
	tap_ok "promtool check metrics passes on this host's file ($(grep -c '^# TYPE' "$tmp/checked.prom") metrics)"
else
	tap_fail "promtool check metrics on this host's file" "$out"
fi

# Sane values: each compared with what this host shows.
v() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { exit !f }' "$tmp/scrape"; }
check() { # name awk-condition-on-x
	x=$(v "$1") || { tap_fail "$1: not served"; return; }
	if awk -v x="$x" "BEGIN { exit !($2) }"; then tap_ok "$1 = $x"; else tap_fail "$1 = $x, want $2"; fi
}
K='{knob="vm.percpu_pagelist_high_fraction"}'
kernel=$(uname -r)
# node_exporter sorts the labels: look at each.
info=$(grep '^pcptune_info{' "$tmp/scrape")
if printf '%s' "$info" | grep -q "kernel=\"$kernel\"" && ! printf '%s' "$info" | grep -q 'version=' &&
	printf '%s' "$info" | grep -q 'regime="\(fixed\|autotune\|legacy\)"' && printf '%s' "$info" | grep -q '} 1$'; then
	tap_ok "$info"
else
	tap_fail "pcptune_info for kernel $kernel" "$info"
fi
grep -q '^pcptune_build_info{version="[0-9.]*"} 1$' "$tmp/scrape" && tap_ok "$(grep '^pcptune_build_info' "$tmp/scrape")" ||
	tap_fail "pcptune_build_info" "$(grep build_info "$tmp/scrape")"
check pcptune_dry_run "x == 1"
check pcptune_config_last_reload_successful "x == 1"
check pcptune_config_last_reload_success_timestamp_seconds "x > $now - 60 && x <= $now + 1"
grep -q '^pcptune_config_info{policy_hash="[0-9a-f]\{16\}"} 1$' "$tmp/scrape" && tap_ok "$(grep '^pcptune_config_info' "$tmp/scrape")" ||
	tap_fail "pcptune_config_info" "$(grep config_info "$tmp/scrape")"
check pcptune_journal_held_values "x == 0"
check 'pcptune_journal_crash_restore{state="none"}' "x == 1"
check "pcptune_knob_last_write_errno$K" "x == 0"
check "pcptune_knob_last_change_timestamp_seconds$K" "x == 0"
check "pcptune_knob_value$K" "x == $(cat "$knob")"
check "pcptune_knob_target_value$K" "x >= 8"
check "pcptune_knob_original_value$K" "x == $(cat "$knob")"
check "pcptune_knob_state{knob=\"vm.percpu_pagelist_high_fraction\",state=\"not_managed\"}" "x == 1"
check "pcptune_knob_writes_total$K" "x == 0"
check 'pcptune_rule_state{policy="test-metrics",rule="floor",state="active"}' "x == 1"
check 'pcptune_rule_state{policy="test-metrics",rule="never-storm",state="inactive"}' "x == 1"
check 'pcptune_memcgs{state="live"}' "x >= 1"
check 'pcptune_memcgs{state="dying"}' "x >= 0"
# node_exporter's own copies are not served twice (Percpu, PSI).
grep -q '^pcptune_\(percpu_bytes\|psi_\)' "$tmp/scrape" && tap_fail "pcptune_percpu_bytes or pcptune_psi_* served" ||
	tap_ok "no pcptune_percpu_bytes, no pcptune_psi_* (node_exporter's node_memory_Percpu_bytes, node_pressure_*)"
# pcp high and batch now, per zone: the largest over the CPUs of /proc/zoneinfo's Normal zone of node 0.
zi=$(awk '/^Node 0, zone +Normal/ { z = 1; next } /^Node/ { z = 0 } z && $1 == "high:" && $2 > h { h = $2 }
	z && $1 == "batch:" && $2 > b { b = $2 } END { print h + 0, b + 0 }' /proc/zoneinfo)
check 'pcptune_pcp_high_pages{node="0",zone="Normal"}' "x > 0 && x >= ${zi% *} / 2 && x <= ${zi% *} * 2 + 64"
check 'pcptune_pcp_batch_pages{node="0",zone="Normal"}' "x == ${zi#* }"
check 'pcptune_pcp_high_max_pages{node="0",zone="Normal"}' "x > 0"
check 'pcptune_pcp_list_bytes{node="0",zone="Normal"}' "x >= 0 && x % 4096 == 0"
check pcptune_process_exits_per_second "x >= 0 && x < 1000000"
check pcptune_process_exits_total "x >= 0"
check 'pcptune_reclaim_subtrees_total{outcome="reclaimed"}' "x == 0"
check pcptune_reclaim_runs_total "x == 0"
check pcptune_samples_total "x >= 2"
check pcptune_sample_duration_seconds "x > 0 && x < 5"
check pcptune_last_sample_timestamp_seconds "x > $now - 30 && x <= $now + 1"
echo "# sample:"; grep '^pcptune_\(build_info\|info\|config_info\|knob_value\|knob_target\|memcgs\|pcp_high\|pcp_batch\|sample_duration\|last_sample\)' "$tmp/scrape" | sed 's/^/#   /'

# Stop pcptuned: its file goes, and node_exporter serves no pcptune metric any more.
kill "$dpid"; wait "$dpid"; rc=$?; dpid=""
curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/scrape2"
if [ $rc = 0 ] && [ ! -e "$tmp/textfile/pcptune.prom" ] && ! grep -q '^pcptune_' "$tmp/scrape2"; then
	tap_ok "after pcptuned stops, node_exporter serves no pcptune metric (no stale values)"
else
	tap_fail "stale metrics after stop" "rc=$rc" "$(grep -c '^pcptune_' "$tmp/scrape2") pcptune samples"
fi
tap_done
