#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Component test of `pcptunectl liveness` (the DaemonSet's liveness probe):
# alive while pcptuned samples, not alive when it stops sampling (SIGSTOP),
# alive again when it resumes, not alive once it stopped.  pcptuned runs on a
# copy of a fixture root.  Prints TAP.
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/fake-root.sh"

[ "$(id -u)" = 0 ] || tap_skip_all "needs root: policy files must be owned by root"
fake_root_init liveness
set_root
mkdir "$tmp/policies"; cp "$top_srcdir/tests/policies/minimum/50-minimum.yaml" "$tmp/policies/"; chmod 0644 "$tmp/policies"/*
live() { "$PCPTUNECTL" --root "$tmp/root" --state-dir "$tmp/state" liveness "$@"; }

out=$(live 2>&1); rc=$?
[ $rc = 1 ] && printf '%s' "$out" | grep -q "not sampling: no $(status_file)" &&
	tap_ok "no daemon: not alive (exit 1)" || tap_fail "no daemon" "rc=$rc" "$out"

"$PCPTUNED" --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$tmp/policies" --interval 200ms >"$tmp/log" 2>&1 &
daemon_pid=$!
if wait_for 50 live --max-age 1s; then
	out=$(live 2>&1)
	printf '%s' "$out" | grep -q "is sampling: last sample [0-9.]* s ago (limit 30.0 s)" &&
		tap_ok "a sampling daemon is alive; the default limit is 30 s at a 200 ms interval" || tap_fail "default limit" "$out"
else
	tap_fail "sampling daemon alive" "$(live 2>&1)" "$(cat "$tmp/log")"
fi

kill -STOP "$daemon_pid"
sleep 2.2
out=$(live --max-age 2s 2>&1); rc=$?
[ $rc = 1 ] && printf '%s' "$out" | grep -q "not sampling: its last sample was 2\.[0-9] s ago (limit 2.0 s)" &&
	tap_ok "a stopped daemon (SIGSTOP) is not alive after --max-age" || tap_fail "stopped daemon" "rc=$rc" "$out"
live >/dev/null && tap_ok "... but still within the default limit" || tap_fail "default limit while stopped" "$(live 2>&1)"
kill -CONT "$daemon_pid"
wait_for 50 live --max-age 1s && tap_ok "sampling again: alive" || tap_fail "resumed" "$(live 2>&1)"

# The limit follows the daemon's interval: 3 x 20 s = 60 s.
kill -STOP "$daemon_pid"
sed -i 's/"interval_usec": [0-9]*/"interval_usec": 20000000/' "$(status_file)"
out=$(live 2>&1)
printf '%s' "$out" | grep -q "(limit 60.0 s)" && tap_ok "the default limit is 3 sampling intervals when longer than 30 s" ||
	tap_fail "interval limit" "$out"
sed -i 's/"interval_usec": [0-9]*/"interval_usec": 5/' "$(status_file)"
out=$(live 2>&1); rc=$?
[ $rc = 1 ] && printf '%s' "$out" | grep -q "holds no valid sampling interval" &&
	tap_ok "an interval out of range in the status file is refused" || tap_fail "bad interval" "rc=$rc" "$out"
kill -CONT "$daemon_pid"

kill -TERM "$daemon_pid"; wait "$daemon_pid"; daemon_pid=""
out=$(live 2>&1); rc=$?
[ $rc = 1 ] && tap_ok "after a clean stop: not alive" || tap_fail "after stop" "rc=$rc" "$out"

tap_done
