#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The tests do not depend on the modes of the checkout (issue 21, item 9): the Debian package build runs
# them from a tree unpacked as root by `git archive | tar -x`, whose folders are 0775 and files 0664, with
# umask 002, and pcptuned rightly refuses such policy directories.  Runs the scripts that pass policy
# directories of the tree to pcptuned and pcptunectl (cli.sh, json-keys.sh) from a copy of the tree with
# those modes, and checks that every one of their tests passes.  Prints TAP.
. "$(dirname "$0")/tap.sh"

[ "$(id -u)" = 0 ] || tap_skip_all "needs root: the owner check of policy directories applies to root's files"
tmp=$(mktemp -d /tmp/pcptune-checkout-modes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src
mkdir -p "$src/tests"
cp -r "$top_srcdir/README" "$top_srcdir/man" "$top_srcdir/policies" "$src"/
cp -r "$top_srcdir/tests/scripts" "$top_srcdir/tests/policies" "$src/tests"/
find "$src" -type d -exec chmod 0775 {} +
find "$src" -type f -exec chmod g+w {} +
if [ "$(stat -c %a "$src/tests/policies/minimum")" = 775 ]; then
	tap_ok "a copy of the tree with 0775 folders and group-writable files"
else
	tap_fail "tree copy modes" "$(stat -c '%a %n' "$src/tests/policies/minimum")"
fi
for t in cli.sh json-keys.sh; do
	out=$( (umask 002; top_srcdir=$src bash "$src/tests/scripts/$t") 2>&1)
	failed=$(printf '%s\n' "$out" | grep -c '^not ok')
	plan=$(printf '%s\n' "$out" | grep -E '^1\.\.[0-9]+$')
	if [ "$failed" = 0 ] && [ -n "$plan" ] && [ "$plan" != "1..0" ]; then
		tap_ok "$t from that tree with umask 002: ${plan#1..} tests, none fails"
	else
		tap_fail "$t from a 0775 tree" "$failed failed ($plan)" "$(printf '%s\n' "$out" | grep -A3 '^not ok')"
	fi
done
tap_done
