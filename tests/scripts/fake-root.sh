# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the component tests that run pcptuned on a copy of a captured fixture root, where its sysctl
# writes land in regular files (sourced after tap.sh).  fake_root_init NAME makes $tmp
# (/tmp/pcptune-NAME.XXXXXX); at exit the daemon started last ($daemon_pid) and any pid in $more_pids is
# killed, cleanup_more runs if the test defines it, and $tmp is removed.

fake_root_init() { # name
	tmp=$(mktemp -d "/tmp/pcptune-$1.XXXXXX")
	daemon_pid="" more_pids=""
	trap fake_root_cleanup EXIT
}
fake_root_cleanup() {
	for p in $daemon_pid $more_pids; do
		kill -CONT "$p" 2>/dev/null # a stopped daemon (SIGSTOP) too
		kill -9 "$p" 2>/dev/null
	done
	if declare -F cleanup_more >/dev/null; then cleanup_more; fi
	rm -rf "$tmp"
}
set_root() { # [fixture set]: a writable copy of its root/ at $tmp/root (default: the live capture)
	rm -rf "$tmp/root"
	cp -r "$FIXTURES/${1:-6.18.44-fc-live-smp2-24G}/root" "$tmp/root"
	chmod -R u+w "$tmp/root"
}
status_file() { echo "$tmp/state/$(status_name "$tmp/root")"; } # the daemon's status file for $tmp/root
frac() { cat "$tmp/root/proc/sys/vm/percpu_pagelist_high_fraction"; }
frac_is() { [ "$(frac)" = "$1" ]; }
policy_dir() { # name -> a root-owned copy of tests/policies/name: the directory 0755, the files 0644
	policy_copy "$1" "$tmp/pol-$1"
}
start_daemon() { # policy-dir [extra args]; the environment passes through (PCPTUNED_FAULT)
	pd=$1; shift
	"$PCPTUNED" --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$pd" --interval 200ms "$@" \
		>>"$tmp/log" 2>&1 &
	daemon_pid=$!
}
stop_daemon() { # [signal]: returns the daemon's exit status
	kill -"${1:-TERM}" "$daemon_pid" 2>/dev/null
	wait "$daemon_pid" 2>/dev/null; rc=$?
	daemon_pid=""
	return $rc
}
log_has() { grep -q -- "$1" "$tmp/log"; }
