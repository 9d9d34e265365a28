#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Prometheus metrics (pcptuned(8), METRICS) on fake roots: pcptuned(8) lists
# exactly the metrics pcptuned has, with their types, units and labels; the
# file follows what the daemon does (write, restore, administrator change,
# dry-run) and passes `promtool check metrics`; it is 0644, replaced
# atomically, removed on stop; a missing directory turns metrics off with one
# notice and is never created; a second daemon on the same directory writes
# nothing; --once writes nothing.  Prints TAP.
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/fake-root.sh"

[ "$(id -u)" = 0 ] || tap_skip_all "needs root: policy files must be owned by root"
fake_root_init metrics
dry_pid=""
cleanup_more() { [ -n "$dry_pid" ] && kill -9 "$dry_pid" 2>/dev/null; }

# --- pcptuned(8) documents every metric, with the table's type, unit and labels, and nothing else.
from_table=$("$PCPTUNED" --list-metrics | awk -F'\t' '{
	u = $3 == "-" ? "none" : $3; l = $4 == "-" ? "none" : $4; gsub(",", ", ", l)
	print $1 " " $2 "; unit: " u "; labels: " l "." }' | sort)
from_man=$(awk '/^\.SH / { in_m = ($2 == "METRICS") }
	in_m && prev == ".TP" && /^\.B pcptune_/ { name = $2; getline; print name " " $0 }
	{ prev = $0 }' "$top_srcdir/man/pcptuned.8" | sort)
n_metrics=$(printf '%s\n' "$from_table" | grep -c .)
if [ -n "$from_table" ] && [ "$from_table" = "$from_man" ]; then
	tap_ok "pcptuned(8) lists the $n_metrics metrics of --list-metrics with their type, unit and labels"
else
	tap_fail "pcptuned(8) METRICS and --list-metrics differ" "$(diff <(printf '%s\n' "$from_table") <(printf '%s\n' "$from_man"))"
fi

# --- Prometheus naming: counters and only counters end in _total; a unit is the name's last word
# (before _total) and a unit word means the unit; a family shares one prefix (pcptune_pcp_bulk_free_).
bad_names=$("$PCPTUNED" --list-metrics | awk -F'\t' '
	{ n = $1; t = $2; u = $3; b = n; sub(/_total$/, "", b)
	  if (t == "counter" && n !~ /_total$/) print "counter without _total: " n
	  if (t != "counter" && n ~ /_total$/) print t " ending in _total: " n
	  if (u != "-" && b !~ ("_" u "$")) print "unit " u " not the last word: " n
	  if (u == "-" && b ~ /_(seconds|bytes|pages|ratio)$/) print "unit word without a unit: " n
	  if (n ~ /bulk_free/ && n !~ /^pcptune_pcp_bulk_free_/) print "bulk-free metric outside pcptune_pcp_bulk_free_: " n }')
if [ -z "$bad_names" ] && [ "$n_metrics" -gt 0 ]; then
	tap_ok "metric names: _total on counters only, the unit as the last word, one pcptune_pcp_bulk_free_ family"
else
	tap_fail "metric names break the naming rules" "$bad_names"
fi

knob=$tmp/root/proc/sys/vm/percpu_pagelist_high_fraction
prom=$tmp/metrics/pcptune.prom
# The value of one sample: metric name with its labels exactly as written ("name" or 'name{a="b"}').
value() { awk -v k="$1" '$1 == k { print $2; found = 1 } END { exit !found }' "$prom" 2>/dev/null; }
value_is() { [ "$(value "$1")" = "$2" ]; }
K='{knob="vm.percpu_pagelist_high_fraction"}'
ks() { echo "pcptune_knob_state{knob=\"vm.percpu_pagelist_high_fraction\",state=\"$1\"}"; }
promtool_ok() { # what
	if ! command -v promtool >/dev/null; then
		echo "ok $((tap_n += 1)) - promtool check metrics: $1 # SKIP promtool not installed (Debian package prometheus)"
		return
	fi
	if out=$(promtool check metrics <"$prom" 2>&1); then
		tap_ok "promtool check metrics passes on the file: $1"
	else
		tap_fail "promtool check metrics: $1" "$out" "$(cat "$prom")"
	fi
}

set_root 6.18.44-fc-live-smp2-24G
minimum=$(policy_dir minimum)
mkdir "$tmp/metrics"
# The minimum the daemon computes for this tree (the engine test checks it against an oracle).
want=$("$PCPTUNED" --dry-run --once --json --root "$tmp/root" --policy-dir "$minimum" 2>/dev/null |
	sed -n 's/^ *"to": \([0-9]*\),*$/\1/p')

# --- the daemon writes; the file follows what it does.
: >"$tmp/log"
"$PCPTUNED" --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$minimum" --interval 200ms \
	--metrics-dir "$tmp/metrics" >>"$tmp/log" 2>&1 &
daemon_pid=$!
managed() { value_is "$(ks managed)" 1 && value_is "pcptune_knob_writes_total$K" 1; }
if wait_for 50 managed && value_is "pcptune_knob_value$K" "$want" && value_is "pcptune_knob_target_value$K" "$want" &&
	value_is "pcptune_knob_original_value$K" 0 && value_is "$(ks not_managed)" 0 && value_is pcptune_dry_run 0 &&
	value_is 'pcptune_rule_state{policy="test-minimum",rule="floor",state="active"}' 1 &&
	value_is "pcptune_knob_refused_writes_total$K" 0 && [ "$(cat "$knob")" = "$want" ]; then
	tap_ok "after the write: value $want, target $want, original 0, state managed, 1 write"
else
	tap_fail "metrics after the write (want $want)" "$(cat "$tmp/log")" "$(cat "$prom" 2>&1)"
fi
promtool_ok "a daemon managing the fraction"
now=$(date +%s)
ts=$(value pcptune_last_sample_timestamp_seconds)
dur=$(value pcptune_sample_duration_seconds)
samples=$(value pcptune_samples_total)
if awk -v t="$ts" -v n="$now" -v d="$dur" -v s="$samples" 'BEGIN { exit !(t > n - 30 && t <= n + 1 && d > 0 && d < 5 && s >= 1) }'; then
	tap_ok "last sample at $ts (now $now), took $dur s, $samples samples"
else
	tap_fail "sample timestamp/duration" "ts=$ts now=$now dur=$dur samples=$samples"
fi
mode=$(stat -c %a "$prom")
if [ "$mode" = 644 ] && [ -z "$(find "$tmp/metrics" -name '.pcptune.prom.tmp*')" ]; then
	tap_ok "the file is 0644 and no temporary is left"
else
	tap_fail "file mode $mode or temporary left" "$(ls -la "$tmp/metrics")"
fi
zones=$(grep -c '^pcptune_pcp_high_max_pages{node="0",zone="\(DMA\|DMA32\|Normal\)"} [1-9]' "$prom")
if [ "$zones" = 3 ] && grep -q '^pcptune_pcp_list_bytes{node="0",zone="Normal"} [0-9]' "$prom" &&
	! grep -q 'cpu=' "$prom"; then
	tap_ok "pcp high and list bytes per populated zone (3 zones), no label per CPU"
else
	tap_fail "per-zone pcp metrics" "$(grep pcp_ "$prom")"
fi

# A second daemon (a dry-run beside the service) must not overwrite or remove the file.
"$PCPTUNED" --dry-run --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$minimum" --interval 200ms --metrics-dir "$tmp/metrics" \
	>"$tmp/log-dry" 2>&1 &
dry_pid=$!
sleep 1
kill -TERM "$dry_pid"; wait "$dry_pid"; dry_pid=""
if grep -q "Not writing metrics: another pcptuned writes $tmp/metrics/pcptune.prom (it holds /run/pcptune/metrics-.*.lock); trying again" "$tmp/log-dry" && [ -f "$prom" ] &&
	value_is pcptune_dry_run 0; then
	tap_ok "a second pcptuned on the same directory writes no metrics and leaves the file alone"
else
	tap_fail "second daemon on the metrics directory" "$(cat "$tmp/log-dry")"
fi

# No rule wants the knob any more: the original is written back.
rm -f "$minimum"/*.yaml
kill -HUP "$daemon_pid"
handed_back() { value_is "$(ks not_managed)" 1 && value_is "pcptune_knob_restores_total$K" 1; }
if wait_for 50 handed_back && value_is "pcptune_knob_value$K" 0 && ! value "pcptune_knob_target_value$K" >/dev/null &&
	! grep -q '^pcptune_rule_state' "$prom"; then
	tap_ok "after the reload to no policy: restored (1 restore), not_managed, no target, no rule"
else
	tap_fail "metrics after the restore" "$(cat "$prom")"
fi

# Managed again, then an administrator changes the value: it is theirs.
cp "$top_srcdir"/tests/policies/minimum/*.yaml "$minimum"/ && chmod 0644 "$minimum"/*
kill -HUP "$daemon_pid"
wait_for 50 value_is "pcptune_knob_writes_total$K" 2
echo 5000 >"$knob"
admin() { value_is "$(ks admin_changed)" 1 && value_is "pcptune_knob_value$K" 5000; }
if wait_for 50 admin && value_is "$(ks managed)" 0 && value_is "pcptune_knob_original_value$K" 5000; then
	tap_ok "an administrator's change: state admin_changed, value and what a stop leaves 5000"
else
	tap_fail "metrics after an administrator's change" "$(cat "$prom")"
fi
promtool_ok "after restore and an administrator's change"

# Stop: the file goes, the directory stays.
kill -TERM "$daemon_pid"; wait "$daemon_pid"; rc=$?; daemon_pid=""
if [ $rc = 0 ] && [ ! -e "$prom" ] && [ -d "$tmp/metrics" ] && [ -z "$(ls -A "$tmp/metrics")" ]; then
	tap_ok "on stop the file is removed (the directory stays, empty)"
else
	tap_fail "file removal on stop" "rc=$rc" "$(ls -la "$tmp/metrics")"
fi

# --- a dry-run daemon writes metrics too (it observes).
set_root 6.18.44-fc-live-smp2-24G
minimum=$(policy_dir minimum)
"$PCPTUNED" --dry-run --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$minimum" --interval 200ms --metrics-dir "$tmp/metrics" \
	>"$tmp/log-dry" 2>&1 &
dry_pid=$!
dry_ok() { value_is pcptune_dry_run 1 && value_is "pcptune_knob_target_value$K" "$want"; }
if wait_for 50 dry_ok && value_is "pcptune_knob_value$K" 0 && value_is "pcptune_knob_writes_total$K" 0 &&
	value_is "$(ks not_managed)" 1 && [ "$(cat "$knob")" = 0 ]; then
	tap_ok "a dry-run daemon writes metrics: would set $want (target), value 0, no write"
else
	tap_fail "dry-run metrics" "$(cat "$tmp/log-dry")" "$(cat "$prom" 2>&1)"
fi
promtool_ok "a dry-run daemon"
kill -TERM "$dry_pid"; wait "$dry_pid"; dry_pid=""
[ ! -e "$prom" ] && tap_ok "the dry-run daemon removes its file on stop" || tap_fail "dry-run file left on stop"

# --- a missing directory: metrics off, one notice, never created.
"$PCPTUNED" --dry-run --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$minimum" --interval 200ms --metrics-dir "$tmp/absent" \
	>"$tmp/log-absent" 2>&1 &
dry_pid=$!
sleep 1
kill -TERM "$dry_pid"; wait "$dry_pid"; rc=$?; dry_pid=""
if [ $rc = 0 ] && [ ! -e "$tmp/absent" ] && [ "$(grep -c "Metrics are off: $tmp/absent does not exist" "$tmp/log-absent")" = 1 ] &&
	grep -q "would set" "$tmp/log-absent"; then
	tap_ok "a missing metrics directory: one notice, not created, the daemon runs on"
else
	tap_fail "missing metrics directory" "rc=$rc" "$(cat "$tmp/log-absent")"
fi

# --- --once and --no-metrics write none.
"$PCPTUNED" --once --dry-run --root "$tmp/root" --policy-dir "$minimum" --metrics-dir "$tmp/metrics" >/dev/null 2>&1
"$PCPTUNED" --dry-run --no-metrics --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$minimum" --interval 200ms \
	--metrics-dir "$tmp/metrics" >"$tmp/log-none" 2>&1 &
dry_pid=$!
sleep 1
if [ -z "$(ls -A "$tmp/metrics")" ]; then
	tap_ok "--once and --no-metrics write no metrics file"
else
	tap_fail "--once/--no-metrics wrote" "$(ls -la "$tmp/metrics")"
fi
kill -TERM "$dry_pid"; wait "$dry_pid"; dry_pid=""
out=$("$PCPTUNED" --metrics-dir relative/dir --once --dry-run 2>&1); rc=$?
[ $rc = 2 ] && printf '%s' "$out" | grep -q "absolute path" && tap_ok "--metrics-dir needs an absolute path" ||
	tap_fail "--metrics-dir relative" "rc=$rc $out"
tap_done
