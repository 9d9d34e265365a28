#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pcptune-check.sh: the node's pcptune verdict for node-problem-detector's
# custom plugin monitor, from pcptuned's health file and restore journal
# (docs/health.md), with NPD's exit codes: 0 OK, 1 problem, 2 unknown, and
# one line of output (the reason).  The same rules as `pcptunectl check`, for
# NPD's container, where neither pcptunectl nor its libraries are: POSIX sh,
# and only date and wc besides the shell's builtins (busybox has both).
#
# usage: pcptune-check.sh [STATE_DIR...]
#   Each STATE_DIR is a pcptuned state directory as the container sees it
#   (default /host/run/pcptune).  With several, the worst answer wins
#   (1, then 2, then 0).
#
# It only reads: the health file is parsed as untrusted input (size,
# first line, every value's form), never sourced or evaluated.
# PCPTUNE_CHECK_NOW (Unix seconds) replaces the clock, for tests.

now=${PCPTUNE_CHECK_NOW:-$(date +%s)}
case $now in '' | *[!0-9]*) echo "unknown: cannot read the clock"; exit 2 ;; esac

# Positive decimal integers only: no sign, no blank, at most 12 digits (no
# overflow in $(( ))).
is_uint() {
	case $1 in '' | *[!0-9]*) return 1 ;; esac
	[ ${#1} -le 12 ]
}

# check_dir DIR: sets rc (0, 1, 2) and msg.
check_dir() {
	d=$1 h=$1/health j=$1/restore.json
	held_journal=0 fresh_ok=0
	[ -e "$j" ] && held_journal=1
	if [ ! -e "$d" ]; then
		rc=0 msg="pcptune not installed"
		return
	fi
	if [ ! -e "$h" ] && [ ! -L "$h" ]; then
		if [ $held_journal = 1 ]; then
			rc=1 msg="values held in restore.json with no pcptuned running"
		else
			rc=0 msg="pcptuned not running, no values held"
		fi
		return
	fi
	if [ -L "$h" ] || [ ! -f "$h" ] || [ ! -r "$h" ]; then
		rc=2 msg="unknown: the health file is not a readable regular file"
		return
	fi
	size=$(wc -c <"$h" 2>/dev/null) || size=x
	size=${size#"${size%%[! ]*}"}
	if ! is_uint "$size" || [ "$size" -gt 4096 ]; then
		rc=2 msg="unknown: the health file is larger than 4 KiB or unreadable"
		return
	fi
	first=1 v_verdict="" v_reason="" v_updated="" v_interval="" v_held="" v_dry=""
	bad=""
	while IFS= read -r line || [ -n "$line" ]; do
		if [ $first = 1 ]; then
			first=0
			[ "$line" = PCPTUNE_HEALTH=1 ] || { bad="its first line is not PCPTUNE_HEALTH=1"; break; }
			continue
		fi
		case $line in
		*=*) key=${line%%=*} val=${line#*=} ;;
		*) bad="a line without KEY=VALUE"; break ;;
		esac
		case $val in *\"* | *\'*) bad="a quoted value"; break ;; esac
		case $key in
		VERDICT) v_verdict=$val ;;
		REASON) v_reason=$val ;;
		UPDATED) v_updated=$val ;;
		INTERVAL) v_interval=$val ;;
		HELD) v_held=$val ;;
		DRY_RUN) v_dry=$val ;;
		esac
	done <"$h"
	[ $first = 1 ] && bad="it is empty"
	if [ -z "$bad" ]; then
		case $v_verdict in ok | problem) ;; *) bad="VERDICT is not ok or problem" ;; esac
	fi
	[ -z "$bad" ] && ! is_uint "$v_updated" && bad="UPDATED is not Unix seconds"
	[ -z "$bad" ] && { ! is_uint "$v_interval" || [ "$v_interval" -lt 1 ]; } && bad="INTERVAL is not a positive integer"
	[ -z "$bad" ] && [ -n "$v_held" ] && ! is_uint "$v_held" && bad="HELD is not a count"
	if [ -z "$bad" ]; then
		case $v_dry in '' | 0 | 1) ;; *) bad="DRY_RUN is not 0 or 1" ;; esac
	fi
	if [ -n "$bad" ]; then
		rc=2 msg="unknown: garbled health file ($bad)"
		return
	fi
	limit=$((3 * v_interval + 60))
	age=$((now - v_updated))
	if [ $age -lt $((-limit)) ]; then
		rc=2 msg="unknown: the health file is dated $((-age)) s in the future"
		return
	fi
	if [ $age -gt $limit ]; then
		if [ $held_journal = 1 ]; then
			rc=1 msg="values held in restore.json; pcptuned not sampling: health ${age} s old (limit ${limit} s)"
		else
			rc=1 msg="pcptuned not sampling: health ${age} s old (limit ${limit} s)"
		fi
		return
	fi
	if [ "$v_verdict" = problem ]; then
		rc=1 msg=${v_reason:-"pcptuned reports a problem"}
		return
	fi
	rc=0 fresh_ok=1 msg="ok: ${v_reason:-sampling}${v_held:+, $v_held value(s) held}"
	[ "$v_dry" = 1 ] && msg="$msg (dry run)"
	return 0
}

[ $# -gt 0 ] || set -- /host/run/pcptune
worst=-1 worst_msg=""
for dir in "$@"; do
	check_dir "$dir"
	[ $# -gt 1 ] && msg="$dir: $msg"
	# Rank: 1 (problem) > 2 (unknown) > 0 (ok) from a health file > 0 (ok) without one.
	case $rc in 1) rank=3 ;; 2) rank=2 ;; *) rank=$fresh_ok ;; esac
	if [ $rank -gt $worst ]; then
		worst=$rank worst_rc=$rc worst_msg=$msg
	fi
done
printf '%s\n' "$worst_msg"
exit "$worst_rc"
