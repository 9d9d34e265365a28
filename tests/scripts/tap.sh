# SPDX-License-Identifier: GPL-2.0-or-later
# Small TAP helpers for the shell tests (sourced).  Each check prints one
# "ok N - name" / "not ok N - name" line; tap_done prints the plan and sets
# the exit status.  Diagnostics go to stdout as "# ..." lines.

tap_n=0
tap_failed=0
# What the tests create (policy directories, journals, state) gets the modes they expect whatever the
# caller's umask (a package build may run with 002).
umask 022
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${FIXTURES:=$top_srcdir/tests/fixtures}"
PCPTUNED=${PCPTUNED:-$top_builddir/pcptuned}
PCPTUNECTL=${PCPTUNECTL:-$top_builddir/pcptunectl}

tap_ok() { # name
	tap_n=$((tap_n + 1)); echo "ok $tap_n - $1"
}
tap_fail() { # name [diagnostic...]
	tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1)); echo "not ok $tap_n - $1"
	shift; for d in "$@"; do printf '%s\n' "$d" | sed 's/^/# /'; done
}
tap_check() { # name command...
	name=$1; shift
	if "$@" >/dev/null 2>&1; then tap_ok "$name"; else tap_fail "$name" "command failed: $*"; fi
}
tap_skip_all() { # reason
	echo "1..0 # SKIP $1"; exit 0
}
tap_done() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
}
# A copy of tests/policies/NAME's *.yaml (or of the *.yaml of an absolute directory, e.g. the shipped
# policies) in DIR, made with the modes pcptuned's owner check wants: DIR 0755 and the files 0644, whatever
# the checkout's modes (a tree unpacked as root by `git archive | tar -x` has 0775 folders and 0664 files,
# which pcptuned rightly refuses).  Prints DIR.
policy_copy() { # name-or-dir dir
	local src=$1
	case $src in /*) ;; *) src=$top_srcdir/tests/policies/$1 ;; esac
	rm -rf "$2" && mkdir -p "$2" && chmod 0755 "$2" || return 1
	cp "$src"/*.yaml "$2"/ 2>/dev/null
	chmod 0644 "$2"/* 2>/dev/null
	echo "$2"
}
# Live tests change this machine's sysctls and cgroups: one at a time, also
# under make check -j and across build directories (else one test would take
# another's value for the original and "restore" it).  Held until exit.
live_lock() {
	exec 9>"${TMPDIR:-/tmp}/pcptune-live-tests.lock" && flock 9
}
# Live tests restore only what they changed.  knob_save FILE records FILE's value at the start (the one
# written back); knob_write FILE VALUE writes VALUE and remembers it as the test's own; knob_ours FILE VALUE
# remembers a value the test saw its own pcptuned write.  knob_restore FILE (in the cleanup): if FILE holds
# one of the test's values, write the saved value back; if it holds anything else, another writer changed
# it meanwhile (a daemon on the host, an administrator): say so in a TAP diagnostic and leave it.
declare -A knob_saved=() knob_values=()
knob_save() { # file
	local v
	v=$(cat "$1") || return 1
	knob_saved[$1]=$v
	knob_values[$1]=" $v "
}
knob_ours() { # file value
	knob_values[$1]="${knob_values[$1]:- }$2 "
}
knob_write() { # file value
	knob_ours "$1" "$2"
	echo "$2" >"$1"
}
knob_restore() { # file
	local now
	[ -n "${knob_saved[$1]+set}" ] || return 0
	now=$(cat "$1" 2>/dev/null) || return 0
	[ "$now" = "${knob_saved[$1]}" ] && return 0
	case ${knob_values[$1]} in
	*" $now "*) echo "${knob_saved[$1]}" >"$1" ;;
	*) echo "# $1 holds $now, which this test did not write (its values:${knob_values[$1]% }): another writer changed it; left as it is, not restored to ${knob_saved[$1]}" ;;
	esac
}
# Stop a pcptuned so that it restores what it wrote: SIGTERM, SIGKILL after 10 s.
stop_pid() { # pid
	local i
	kill -TERM "$1" 2>/dev/null || return 0
	for i in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
# Wait until a command succeeds (timeout in tenths of a second).
# Wait (at most 15 s) until a count printed by a command stops moving: the same value in three readings
# half a second apart.  For host-wide counts such as v1's dying memcgs, which removed cgroups (a test
# that just ended, other work) leave for a moment after rmdir until the kernel frees them.
settle() { # command...
	local last="" same=0 i v
	for i in $(seq 30); do
		v=$("$@")
		if [ "$v" = "$last" ]; then same=$((same + 1)); else same=0; last=$v; fi
		[ $same -ge 2 ] && return 0
		sleep 0.5
	done
	return 1
}
wait_for() { # tenths command...
	t=$1; shift
	while [ "$t" -gt 0 ]; do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.1; t=$((t - 1))
	done
	return 1
}
# The name of a per-root state file (root_state_name(), daemon/lib/util.c): BASE for root /,
# else BASE with -<FNV-1a 64 of the root, 16 hex> before its extension.
root_state_name() { # root base
	local LC_ALL=C root i c h=-3750763034362895579 # the FNV offset basis 0xcbf29ce484222325, as bash's int64
	root=$(realpath -m -- "$1")
	if [ "$root" = / ]; then echo "$2"; return; fi
	for ((i = 0; i < ${#root}; i++)); do
		printf -v c '%d' "'${root:i:1}"
		h=$(((h ^ (c & 255)) * 1099511628211)) # the FNV 64-bit prime 0x100000001b3; wraps like uint64_t
	done
	case $2 in
	*.*) printf '%s-%016x.%s\n' "${2%.*}" "$h" "${2##*.}" ;;
	*) printf '%s-%016x\n' "$2" "$h" ;;
	esac
}
journal_name() { root_state_name "$1" restore.json; } # root
status_name() { root_state_name "$1" status.json; }   # root: the daemon's status file
# No restore journal of any root left in a state directory.
no_journal() { # state-dir
	! compgen -G "$1/restore*.json" >/dev/null
}
