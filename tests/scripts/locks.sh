#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One writer per kernel, not per path (issue 21, items 3 and 5), on fake roots: a second pcptuned, or
# pcptunectl restore/repair, in a new mount namespace with the first daemon's /proc bind-mounted over its
# own root (its own /run, so its own pcptuned.lock) is refused by the flock() on the knob's file and names
# the holder's pid; a holder that is no pcptuned is named too.  The metrics lock is a root-only file that
# an unprivileged user cannot hold, and a busy one is tried again at every sample.  Prints TAP.
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/fake-root.sh"

[ "$(id -u)" = 0 ] || tap_skip_all "needs root: mount namespaces, root-owned policies and journals"
command -v unshare >/dev/null || tap_skip_all "needs unshare (util-linux)"
unshare -m true 2>/dev/null || tap_skip_all "cannot create a mount namespace here"
fake_root_init locks
thousand=$(policy_dir fraction1000) empty=$(policy_dir empty)
F=proc/sys/vm/percpu_pagelist_high_fraction

# --- item 3: a second daemon in a new mount namespace with the first one's /proc over its root.
set_root; rm -rf "$tmp/state" "$tmp/state2" "$tmp/root2"; : >"$tmp/log"
cp -r "$tmp/root" "$tmp/root2"
start_daemon "$thousand"; wait_for 50 frac_is 1000
in_ns() { # command...: in a new mount namespace where root2/proc is root/proc
	unshare -m sh -c 'mount --bind "$1/root/proc" "$1/root2/proc" && shift && exec "$@"' sh "$tmp" "$@"
}
# On a build without the knob lock the second daemon would run: stop it after 5 s (exit 124).
in_ns timeout 5 "$PCPTUNED" --root "$tmp/root2" --state-dir "$tmp/state2" --policy-dir "$empty" --interval 200ms >"$tmp/out" 2>&1; rc=$?
if [ $rc -ne 0 ] && grep -q "vm.percpu_pagelist_high_fraction ($tmp/root2/$F) is locked by pid $daemon_pid (pcptuned)" "$tmp/out" &&
	frac_is 1000 && [ "$(cat "$tmp/root2/$F")" = 0 ]; then
	tap_ok "a second pcptuned in a new mount namespace with the first one's /proc bind-mounted refuses to start, naming pid $daemon_pid"
else
	tap_fail "second daemon, bind-mounted /proc" "rc=$rc fraction $(frac)" "$(cat "$tmp/out")"
fi
# Its own --once, and pcptunectl restore and repair there, are refused too (a journal of root2 to restore).
in_ns "$PCPTUNED" --once --root "$tmp/root2" --state-dir "$tmp/state2" --policy-dir "$empty" >"$tmp/out" 2>&1; rc=$?
[ $rc -ne 0 ] && grep -q "is locked by pid $daemon_pid (pcptuned)" "$tmp/out" && frac_is 1000 &&
	tap_ok "pcptuned --once there is refused too" || tap_fail "--once, bind-mounted /proc" "rc=$rc" "$(cat "$tmp/out")"
mkdir -p "$tmp/state2"
printf '%s' "{\"version\":2,\"root\":\"$tmp/root2\",\"entries\":[{\"name\":\"vm.percpu_pagelist_high_fraction\",\"original\":0,\"written\":1000}]}" >"$tmp/state2/restore.json"
chmod 0600 "$tmp/state2/restore.json"
in_ns "$PCPTUNECTL" --root "$tmp/root2" --state-dir "$tmp/state2" restore >"$tmp/out" 2>&1; rc=$?
[ $rc -ne 0 ] && grep -q "is locked by pid $daemon_pid (pcptuned).*; not restoring" "$tmp/out" && frac_is 1000 &&
	[ -e "$tmp/state2/restore.json" ] && tap_ok "pcptunectl restore there is refused, naming the daemon; its journal stays" ||
	tap_fail "ctl restore, bind-mounted /proc" "rc=$rc fraction $(frac)" "$(cat "$tmp/out")"
in_ns "$PCPTUNECTL" --root "$tmp/root2" --state-dir "$tmp/state2" repair --force >"$tmp/out" 2>&1; rc=$?
[ $rc -ne 0 ] && grep -q "is locked by pid $daemon_pid (pcptuned).*; not repairing" "$tmp/out" && frac_is 1000 &&
	tap_ok "pcptunectl repair --force there is refused, naming the daemon" ||
	tap_fail "ctl repair, bind-mounted /proc" "rc=$rc fraction $(frac)" "$(cat "$tmp/out")"
stop_daemon TERM
frac_is 0 && tap_ok "the first daemon restores its original (0) at exit" || tap_fail "first daemon restore" "fraction $(frac)"
# Without the first daemon the same namespace runs (the lock went with it).
in_ns "$PCPTUNED" --once --root "$tmp/root2" --state-dir "$tmp/state2" --policy-dir "$empty" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 0 ] && ! grep -q "is locked by" "$tmp/out" && tap_ok "once the first daemon stopped, --once in that namespace runs" ||
	tap_fail "after the first daemon" "rc=$rc" "$(cat "$tmp/out")"

# --- item 3: a holder that is not a pcptuned is named by its pid and command.
set_root; rm -rf "$tmp/state"
flock -x "$tmp/root/$F" sleep 30 &
holder=$!; more_pids="$more_pids $holder"
wait_for 50 grep -q " $holder " /proc/locks
"$PCPTUNED" --once --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$thousand" >"$tmp/out" 2>&1; rc=$?
[ $rc -ne 0 ] && grep -q "is locked by pid $holder (flock)" "$tmp/out" && frac_is 0 &&
	tap_ok "pcptuned --once refuses a knob file another process holds, naming it (pid $holder, flock)" ||
	tap_fail "flock holder" "rc=$rc fraction $(frac)" "$(cat "$tmp/out")"
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null

# --- item 5: the metrics lock is a root-only file; an unprivileged flock on the directory stops nothing.
set_root; rm -rf "$tmp/state" "$tmp/metrics"; mkdir -m 0755 "$tmp/metrics"; : >"$tmp/log"
chmod 0755 "$tmp" # uid 65534 reaches the metrics directory
prom=$tmp/metrics/pcptune.prom
lockname=/run/pcptune/metrics-$(stat -c %d "$tmp/metrics")-$(stat -c %i "$tmp/metrics").lock
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups flock -x -n "$tmp/metrics" sleep 8 &
	nobody=$!; more_pids="$more_pids $nobody"
	wait_for 50 grep -q " $nobody " /proc/locks
	start_daemon "$empty" --metrics-dir "$tmp/metrics"
	if wait_for 50 test -s "$prom" && grep -q " $nobody " /proc/locks && ! log_has "Metrics are off\|Not writing metrics"; then
		tap_ok "uid 65534 holding a flock on the metrics directory: metrics are still written"
	else
		tap_fail "unprivileged flock on the metrics directory" "$(cat "$tmp/log")" "$(ls -la "$tmp/metrics")"
	fi
	[ -f "$lockname" ] && [ "$(stat -c %a:%u "$lockname")" = 600:0 ] &&
		! setpriv --reuid=65534 --regid=65534 --clear-groups flock -x -n "$lockname" true 2>/dev/null &&
		tap_ok "the metrics lock is $lockname, root's, 0600: uid 65534 cannot open it" ||
		tap_fail "metrics lock file" "$(ls -la "$lockname" 2>&1)"
	stop_daemon TERM
	[ ! -e "$prom" ] && [ ! -e "$lockname" ] && tap_ok "on stop the file and the lock file are removed" ||
		tap_fail "removal on stop" "$(ls -la "$tmp/metrics" "$lockname" 2>&1)"
	kill "$nobody" 2>/dev/null; wait "$nobody" 2>/dev/null
else
	tap_ok "# SKIP setpriv (util-linux) missing"
fi

# A busy lock (another pcptuned: here root's flock(1)) is tried again at every sample, not given up.
rm -rf "$tmp/state"; : >"$tmp/log"
mkdir -p /run/pcptune
flock -x "$lockname" sleep 2 &
holder=$!; more_pids="$more_pids $holder"
wait_for 50 grep -q " $holder " /proc/locks
start_daemon "$empty" --metrics-dir "$tmp/metrics"
wait_for 50 log_has "Not writing metrics: another pcptuned writes $prom (it holds $lockname); trying again at every sample"
seen=$([ -e "$prom" ] && echo "written while held" || echo "not written while held")
wait "$holder" 2>/dev/null
if [ "$seen" = "not written while held" ] && wait_for 50 test -s "$prom" && log_has "Wrote $tmp/metrics/pcptune.prom again"; then
	tap_ok "metrics wait while another holds the lock, and are written once it is released"
else
	tap_fail "metrics lock retry" "$seen" "$(cat "$tmp/log")"
fi
stop_daemon TERM

tap_done
