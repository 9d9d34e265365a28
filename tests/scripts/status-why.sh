#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pcptunectl status says why each rule is or is not acting and what the daemon did to the knob, from the
# running daemon's evaluation (its status file): a condition's value against its threshold with units, how
# long its `for` has held, a host clause's reason; the knob's state, original and last change.  pcptuned runs
# on a copy of a fixture root (its writes land there).  Prints TAP.
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/fake-root.sh"

[ "$(id -u)" = 0 ] || tap_skip_all "needs root: policy files must be owned by root"
fake_root_init status-why
set_root
mkdir "$tmp/policies"
cat >"$tmp/policies/50-why.yaml" <<'POL'
version: 1
name: why
rules:
  - name: floor
    pcp: { high: minimum }
  - name: slow
    when: meminfo.free >= 0 for 1h
    pcp: { high: "8x batch" }
POL
cat >"$tmp/policies/60-big.yaml" <<'POL'
version: 1
name: big
host:
  cpus: ">= 64"
rules:
  - name: exits
    when: proc.exit_rate > 200/s for 3s
    pcp: { high: minimum }
POL
chmod 0644 "$tmp/policies"/*
"$PCPTUNED" --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$tmp/policies" --interval 200ms >"$tmp/log" 2>&1 &
daemon_pid=$!
wait_for 50 grep -q '"last_change"' "$(status_file)" 2>/dev/null || tap_fail "the daemon changes the knob" "$(cat "$tmp/log")"
sleep 1.2
"$PCPTUNECTL" --root "$tmp/root" --state-dir "$tmp/state" status >"$tmp/text" 2>&1
"$PCPTUNECTL" --root "$tmp/root" --state-dir "$tmp/state" status --json >"$tmp/json" 2>&1
# Asked about another state directory than the daemon's: it says where the daemon's state is.
mkdir -p "$tmp/other"
"$PCPTUNECTL" --root "$tmp/root" --state-dir "$tmp/other" status >"$tmp/elsewhere" 2>&1
kill -TERM "$daemon_pid"; wait "$daemon_pid"; daemon_pid=""
if grep -q "^pcptuned: running (pid [0-9]*) with its state in $tmp/state, not in $tmp/other: what it manages and its rules are there (pass --state-dir $tmp/state)$" "$tmp/elsewhere" &&
	! grep -q "manages nothing\|listed at the top" "$tmp/elsewhere"; then
	tap_ok "status with another --state-dir than the daemon's says where its state is"
else
	tap_fail "status elsewhere" "$(head -n 3 "$tmp/elsewhere")"
fi

# The daemon's own rules, at the top: its `for` history, not a fresh one.
if grep -A1 "^  rule why/slow: inactive" "$tmp/text" | grep -Eq "^    why: meminfo\.free [0-9.]+ [KMG]iB >= 0 B, held [1-9][0-9.]* s of 60 min$"; then
	tap_ok "status: the daemon's rule with its value, threshold and the time its for has held"
else
	tap_fail "daemon rule why" "$(cat "$tmp/text")"
fi
grep -A1 "^  rule big/exits: host does not match" "$tmp/text" | grep -q "^    why: host: cpus 2, needs >= 64$" &&
	tap_ok "status: a host clause's reason (not 'metric unavailable')" || tap_fail "host why" "$(cat "$tmp/text")"
grep -q "metric unavailable\|no rule uses it" "$tmp/text" && tap_fail "no contradictory unavailable metric" "$(cat "$tmp/text")" ||
	tap_ok "no 'metric unavailable' for a rule whose host does not match"
grep -Eq "^vm\.percpu_pagelist_high_fraction = [0-9]+ \(managed by pcptuned, original 0\)$" "$tmp/text" &&
	tap_ok "status: the knob's value, state and original" || tap_fail "knob line" "$(cat "$tmp/text")"
grep -Eq "^  last change: 0 -> [0-9]+ \(policy why, rule floor: .*\) at 20[0-9-]+T[0-9:]+Z$" "$tmp/text" &&
	tap_ok "status: the knob's last change, why and when" || tap_fail "last change" "$(cat "$tmp/text")"
# Under policies: a fresh evaluation, with its why lines too.
grep -A1 "^    slow  " "$tmp/text" | grep -Eq "^      why: meminfo\.free [0-9.]+ [KMG]iB >= 0 B, held 0 s of 60 min" &&
	tap_ok "status: the fresh evaluation's why line" || tap_fail "fresh why" "$(cat "$tmp/text")"

python3 - "$tmp/json" <<'PY' && tap_ok "status --json: the daemon's rules with why, terms, cooldown and host; the knob's last change" || tap_fail "json why" "$(cat "$tmp/json")"
import json, sys
d = json.load(open(sys.argv[1]))
rules = {r["rule"]: r for r in d["daemon"]["rules"]}
slow, exits = rules["slow"], rules["exits"]
t = slow["terms"][0]
assert slow["condition"] == "when" and t["metric"] == "meminfo.free" and t["op"] == ">=" and t["threshold"] == 0, slow
assert t["unit"] == "bytes" and t["holds"] and t["for_seconds"] == 3600 and t["held_seconds"] > 0.5, t
assert slow["why"].startswith("meminfo.free ") and slow["cooldown_left_seconds"] == 0 and slow["host_mismatch"] is None
assert exits["state"] == "host does not match" and exits["host_mismatch"] == "cpus 2, needs >= 64", exits
k = d["daemon"]["knob"]
assert k["state"] == "managed" and k["original"] == 0 and "rule floor" in k["last_change"], k
assert k["last_change_time"].endswith("Z") and k["last_change_usec"] > 0, k
PY
tap_done
