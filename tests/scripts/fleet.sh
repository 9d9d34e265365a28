#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run as a fleet runs pcptuned (issue 22; docs/health.md), on fake roots: the
# canary DaemonSet's arguments, liveness and readiness commands, taken from
# contrib/kubernetes/canary/daemonset.yaml, in a dry run that leaves the knob
# alone, traces nothing and writes its status, health and metrics files; a
# rollout with the main DaemonSet's own arguments (SIGTERM, start again) that
# neither hands the knob back nor writes it again (the knob file's inode and
# mtime, the daemon's write counter), then an emptied policy set that restores
# it; a crash after an adoption restored at the next start; `pcptunectl
# check` 0 on a healthy dry-run node and 1 "crash restore pending" with a
# crashed run's journal (and the NPD plugin's script the same);
# --on-stop=auto outside systemd restores.  Prints TAP.
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/fake-root.sh"

[ "$(id -u)" = 0 ] || tap_skip_all "needs root: policy files must be owned by root"
command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null || tap_skip_all "python3-yaml not installed"
fake_root_init fleet
k8s=$top_srcdir/contrib/kubernetes
npd=$k8s/node-problem-detector/pcptune-check.sh

# The container's args, liveness and readiness commands of a DaemonSet manifest, one word a line.
manifest() { # file args|liveness|readiness
	python3 - "$1" "$2" <<'EOF'
import sys, yaml
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if doc and doc.get("kind") == "DaemonSet":
        c = doc["spec"]["template"]["spec"]["containers"][0]
        words = {"args": c.get("args", []),
                 "liveness": c.get("livenessProbe", {}).get("exec", {}).get("command", []),
                 "readiness": c.get("readinessProbe", {}).get("exec", {}).get("command", [])}[sys.argv[2]]
        print("\n".join(str(w) for w in words))
EOF
}
# The manifest's paths made the test's: the policies, the state directories.
map_paths() {
	sed -e "s|^/etc/pcptune/policies.d\$|$pol|" -e "s|^--policy-dir=/etc/pcptune/policies.d\$|--policy-dir=$pol|" \
		-e "s|^/run/pcptune-canary\$|$tmp/canary|" -e "s|^/run/pcptune\$|$tmp/state|"
}
knob_stamp() { stat -c '%i %y' "$tmp/root/proc/sys/vm/percpu_pagelist_high_fraction"; }
metric() { # file name: the value of an unlabelled or knob-labelled series
	awk -v n="$2" '$1 == n || $1 == n "{knob=\"vm.percpu_pagelist_high_fraction\"}" { print $2; exit }' "$1"
}
health_key() { sed -n "s/^$2=//p" "$1/health"; }

set_root
JF=$tmp/state/$(journal_name "$tmp/root"); HM=$tmp/state/$(root_state_name "$tmp/root" handover)
mkdir -p "$tmp/metrics"
pol=$(policy_dir minimum)
want=1528   # what the minimum policy sets on this fixture (engine.sh)

# --- 1. The canary: its manifest's arguments, on the fake root.
mapfile -t cargs < <(manifest "$k8s/canary/daemonset.yaml" args | map_paths)
mapfile -t live < <(manifest "$k8s/canary/daemonset.yaml" liveness | map_paths)
mapfile -t ready < <(manifest "$k8s/canary/daemonset.yaml" readiness | map_paths)
printf '%s\n' "${cargs[@]}" | grep -qx -- --dry-run && [ "${live[1]}" = --state-dir ] ||
	tap_fail "the canary manifest's args and probes" "${cargs[*]} / ${live[*]}"
before=$(knob_stamp)
"$PCPTUNED" --root "$tmp/root" --interval 200ms --metrics-dir "$tmp/metrics" "${cargs[@]}" >"$tmp/log" 2>&1 &
daemon_pid=$!
if wait_for 50 test -s "$tmp/metrics/pcptune-canary.prom" && wait_for 50 test -s "$tmp/canary/health" &&
	wait_for 50 log_has "would set vm.percpu_pagelist_high_fraction: 0 -> $want"; then
	tap_ok "the canary (${cargs[*]}) evaluates: would set 0 -> $want"
else
	tap_fail "the canary did not run" "$(cat "$tmp/log")"
fi
frac_is 0 && [ "$(knob_stamp)" = "$before" ] && tap_ok "the canary leaves the knob alone (0, its file untouched)" ||
	tap_fail "the canary wrote the knob" "$(frac)"
log_has "bulk-free tracing off, dry-run" && ! grep -q "Tracing bulk frees\|trace instance" "$tmp/log" &&
	tap_ok "its start line says bulk-free tracing is off ($(grep -o 'started: .*' "$tmp/log"))" ||
	tap_fail "the canary's start line" "$(grep started "$tmp/log")"
[ ! -e "$tmp/canary/$(journal_name "$tmp/root")" ] && [ ! -e "$tmp/root/run/pcptune/pcptuned.lock" ] &&
	tap_ok "no journal, no lock" || tap_fail "the canary left a journal or took the lock" "$(ls -R "$tmp/canary" "$tmp/root/run" 2>&1)"
# The probes as the manifest has them, on the test's fake root (the pod's is /: status.json).
"${live[0]/pcptunectl/$PCPTUNECTL}" --root "$tmp/root" "${live[@]:1}" >"$tmp/out" 2>&1 &&
	tap_ok "its liveness probe (${live[*]}): $(cat "$tmp/out")" || tap_fail "the canary's liveness probe" "$(cat "$tmp/out")"
out=$("${ready[0]/pcptunectl/$PCPTUNECTL}" "${ready[@]:1}" 2>&1); rc=$?
[ $rc = 0 ] && [ "$out" = "ok: dry run, 0 value(s) held (dry run)" ] &&
	tap_ok "its readiness probe (${ready[*]}): 0, $out" || tap_fail "the canary's readiness probe" "$rc: $out"
nout=$(sh "$npd" "$tmp/canary"); nrc=$?
[ "$nrc:$nout" = "$rc:$out" ] && tap_ok "the NPD plugin's script says the same: $nrc, $nout" ||
	tap_fail "the NPD script differs" "$nrc: $nout"
[ "$(stat -c %a "$tmp/canary/health")" = 644 ] && [ "$(health_key "$tmp/canary" DRY_RUN)" = 1 ] &&
	[ "$(health_key "$tmp/canary" PID)" = "$daemon_pid" ] && tap_ok "its health file: 0644, DRY_RUN=1, PID $daemon_pid" ||
	tap_fail "the canary's health file" "$(ls -l "$tmp/canary"; cat "$tmp/canary/health")"
[ "$(metric "$tmp/metrics/pcptune-canary.prom" pcptune_dry_run)" = 1 ] && [ ! -e "$tmp/metrics/pcptune.prom" ] &&
	[ "$(metric "$tmp/metrics/pcptune-canary.prom" pcptune_knob_writes_total)" = 0 ] &&
	tap_ok "its metrics in pcptune-canary.prom only (pcptune_dry_run 1, no write)" ||
	tap_fail "the canary's metrics" "$(ls "$tmp/metrics")"
stop_daemon; rc=$?
[ $rc = 0 ] && frac_is 0 && [ ! -e "$tmp/canary/health" ] && [ ! -e "$tmp/canary/$(status_name "$tmp/root")" ] &&
	[ ! -e "$tmp/metrics/pcptune-canary.prom" ] && tap_ok "its stop: exit 0, knob 0, its files removed" ||
	tap_fail "the canary's stop" "rc $rc, $(frac), $(ls "$tmp/canary" "$tmp/metrics")"
"$PCPTUNED" --dry-run --metrics-file ../x.prom --root "$tmp/root" --once >/dev/null 2>&1
[ $? = 2 ] && tap_ok "--metrics-file ../x.prom is refused (exit 2)" || tap_fail "--metrics-file with a path was taken"

# --- 2. A rollout with the main DaemonSet's arguments: the new pod adopts the journal and writes nothing.
mapfile -t margs < <(manifest "$k8s/daemonset.yaml" args | map_paths)
printf '%s\n' "${margs[@]}" | grep -qx -- --on-stop=keep || tap_fail "the main DaemonSet keeps on stop" "${margs[*]}"
: >"$tmp/log"
start_main() { "$PCPTUNED" --root "$tmp/root" --state-dir "$tmp/state" --interval 200ms --metrics-dir "$tmp/metrics" \
	"${margs[@]}" >>"$tmp/log" 2>&1 & daemon_pid=$!; }
start_main
wait_for 50 frac_is "$want" && wait_for 50 test -s "$tmp/state/health" &&
	tap_ok "the main DaemonSet's pcptuned (${margs[*]}) sets $want" || tap_fail "main daemon" "$(cat "$tmp/log")"
stop_daemon; rc=$?
if [ $rc = 0 ] && frac_is "$want" && grep -q '"original": 0' "$JF" && [ -f "$HM" ] &&
	[ "$(health_key "$tmp/state" REASON)" = "stopped, values kept for the next pcptuned" ] &&
	[ "$(health_key "$tmp/state" HELD)" = 1 ]; then
	tap_ok "SIGTERM keeps $want, the journal (original 0), marks it handed over, last health: HELD=1"
else
	tap_fail "the stop with --on-stop=keep" "rc $rc, $(frac), $(ls "$tmp/state")" "$(tail -n 5 "$tmp/log")"
fi
out=$("$PCPTUNECTL" --state-dir "$tmp/state" check); rc=$?
[ $rc = 0 ] && [ "$out" = "ok: stopped, values kept for the next pcptuned, 1 value(s) held" ] &&
	tap_ok "pcptunectl check between the pods: 0, $out" || tap_fail "check between the pods" "$rc: $out"
stamp=$(knob_stamp)
start_main
wait_for 50 log_has "Adopted the restore journal" && wait_for 50 test ! -e "$HM" &&
	wait_for 50 grep -q '^pcptune_samples_total [3-9]' "$tmp/metrics/pcptune.prom"
if [ "$(knob_stamp)" = "$stamp" ] && frac_is "$want" &&
	[ "$(metric "$tmp/metrics/pcptune.prom" pcptune_knob_writes_total)" = 0 ] &&
	[ "$(metric "$tmp/metrics/pcptune.prom" pcptune_journal_held_values)" = 1 ] &&
	[ "$(grep -c "vm.percpu_pagelist_high_fraction: 0 -> $want" "$tmp/log")" = 1 ]; then
	tap_ok "the next pod adopts the journal and writes nothing: knob file $(knob_stamp | cut -d' ' -f1,3) unchanged, 0 writes, 1 value held"
else
	tap_fail "the adoption wrote the knob" "stamp $stamp -> $(knob_stamp), $(frac)" "$(cat "$tmp/log")"
fi
grep -q '"original": 0' "$JF" && tap_ok "the journal still holds the original 0" ||
	tap_fail "the adopted journal" "$(cat "$JF")"
# The uninstall: an emptied policy set hands the value back, then a stop keeps nothing.
rm -f "$pol"/*.yaml
if wait_for 100 frac_is 0 && wait_for 50 test ! -e "$JF" &&
	wait_for 50 grep -q '^HELD=0$' "$tmp/state/health"; then
	tap_ok "an emptied policy set restores 0 and removes the journal (health HELD=0)"
else
	tap_fail "the emptied policy set" "$(frac)" "$(tail -n 5 "$tmp/log")"
fi
out=$("$PCPTUNECTL" --state-dir "$tmp/state" check); rc=$?
[ $rc = 0 ] && tap_ok "check after the uninstall step: $out" || tap_fail "check after the restore" "$rc: $out"
stop_daemon; rc=$?
[ $rc = 0 ] && frac_is 0 && [ ! -e "$HM" ] && [ ! -e "$tmp/state/health" ] &&
	[ ! -e "$JF" ] && tap_ok "then SIGTERM keeps nothing: no journal, no mark, no health file" ||
	tap_fail "the stop after the restore" "rc $rc $(ls "$tmp/state")"

# --- 3. A crash after an adoption is a crash: the next start restores.
pol=$(policy_dir minimum)
: >"$tmp/log"
start_main; wait_for 50 frac_is "$want"
stop_daemon
start_main; wait_for 50 log_has "Adopted the restore journal"; wait_for 50 test ! -e "$HM"
stop_daemon KILL
frac_is "$want" && [ -f "$JF" ] && [ ! -e "$HM" ] &&
	tap_ok "SIGKILL after an adoption: $want stays, the journal has no handover mark" ||
	tap_fail "the crash after the adoption" "$(frac) $(ls "$tmp/state")"
# A dry run on that state directory sees the crashed run's journal: a crash restore is pending.
"$PCPTUNED" --dry-run --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$pol" --interval 200ms >>"$tmp/log" 2>&1 &
daemon_pid=$!
wait_for 50 grep -q '^REASON=crash restore pending$' "$tmp/state/health"
out=$("$PCPTUNECTL" --state-dir "$tmp/state" check); rc=$?
nout=$(sh "$npd" "$tmp/state"); nrc=$?
[ $rc = 1 ] && [ "$out" = "crash restore pending" ] && tap_ok "pcptunectl check: 1, $out" ||
	tap_fail "check with a crash restore pending" "$rc: $out"
[ "$nrc:$nout" = "$rc:$out" ] && tap_ok "the NPD plugin's script says the same: $nrc, $nout" ||
	tap_fail "the NPD script differs" "$nrc: $nout"
frac_is "$want" && tap_ok "the dry run restores nothing ($want stays)" || tap_fail "the dry run restored" "$(frac)"
stop_daemon
start_main
wait_for 50 log_has "Found a restore journal from a run that did not stop cleanly" && wait_for 50 frac_is "$want"
if log_has "restored vm.percpu_pagelist_high_fraction: $want -> 0" &&
	wait_for 50 grep -q 'pcptune_journal_crash_restore{state="done"} 1' "$tmp/metrics/pcptune.prom"; then
	tap_ok "the next start restores the crashed run's 0, then applies $want again (crash_restore done)"
else
	tap_fail "the crash restore after an adoption" "$(tail -n 8 "$tmp/log")"
fi
stop_daemon

# --- 4. --on-stop=auto where systemd cannot be asked restores.
: >"$tmp/log"
start_daemon "$pol" --on-stop=auto
# The value is in place already (section 3's stop kept it): wait for the daemon itself.
wait_for 50 log_has "Adopted the restore journal" && wait_for 50 log_has " started: "
stop_daemon; rc=$?
[ $rc = 0 ] && frac_is 0 && [ ! -e "$JF" ] && log_has "Stopping: --on-stop=auto: .*restoring" &&
	tap_ok "--on-stop=auto outside a systemd restart restores 0 ($(grep -o 'auto: .*' "$tmp/log"))" ||
	tap_fail "--on-stop=auto" "rc $rc $(frac)" "$(tail -n 4 "$tmp/log")"
tap_done
