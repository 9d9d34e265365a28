#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/bench/churn-evictions -s on a captured trace (tests/fixtures/trace/churn-evictions-6.18.txt):
# each removal is classified by its kernel stack (the unlinks as truncation, the host's DAMON pageout
# as such), an inode number that comes back for the next file starts a new file of it, and pages are
# counted from the folio order.  Needs no root: -s only reads the file.  Prints TAP.
. "$(dirname "$0")/tap.sh"

tool=$top_srcdir/tests/bench/churn-evictions
trace=$FIXTURES/trace/churn-evictions-6.18.txt want=$FIXTURES/trace/churn-evictions-6.18.summary
got=$(bash "$tool" -s "$trace" 2>&1)
[ "$got" = "$(cat "$want")" ] && tap_ok "the summary of the captured trace is the golden one" ||
	tap_fail "the summary of the captured trace" "$(diff <(printf '%s\n' "$got") "$want")"
case $got in
*"(file 3 of it): 256 pages in 1 folios by DAMON pageout"*) tap_ok "the DAMON eviction is one 1 MiB folio of the third file" ;;
*) tap_fail "no DAMON eviction of 256 pages in the third file" "$got" ;;
esac
n=$(printf '%s\n' "$got" | grep -c 'by truncation')
[ "$n" = 3 ] && tap_ok "three unlinks, one per file" || tap_fail "expected 3 truncation rows, found $n" "$got"
empty=$(mktemp); trap 'rm -f "$empty"' EXIT
printf '# tracer: nop\n' > "$empty"
[ "$(bash "$tool" -s "$empty")" = "  none" ] && tap_ok "a trace without removals says none" ||
	tap_fail "a trace without removals" "$(bash "$tool" -s "$empty")"
tap_done
