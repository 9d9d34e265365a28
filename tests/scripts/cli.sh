#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Command-line behaviour of pcptuned and pcptunectl: options, exit codes,
# validate on good and bad policies, status on a fixture root.  Prints TAP.
. "$(dirname "$0")/tap.sh"

tmp=$(mktemp -d /tmp/pcptune-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
root=$FIXTURES/6.12.117+deb12-amd64-smp16-numa2-8G/root

expect_rc() { # name rc command...
	name=$1 want=$2; shift 2
	"$@" >"$tmp/out" 2>&1; rc=$?
	if [ "$rc" = "$want" ]; then tap_ok "$name"; else tap_fail "$name" "exit $rc, want $want" "$(cat "$tmp/out")"; fi
}

expect_rc "pcptuned --help" 0 "$PCPTUNED" --help
grep -q -- "--dry-run" "$tmp/out" && tap_ok "--help lists --dry-run" || tap_fail "--help content"
expect_rc "pcptuned --version" 0 "$PCPTUNED" --version
grep -q "^pcptuned [0-9]" "$tmp/out" && tap_ok "--version prints the version" || tap_fail "--version content"
expect_rc "pcptuned rejects an unknown option" 2 "$PCPTUNED" --frobnicate
expect_rc "pcptuned rejects a bad interval" 2 "$PCPTUNED" --interval 3fortnights
expect_rc "pcptuned --json needs --once" 2 "$PCPTUNED" --json
expect_rc "pcptuned with a missing root fails" 1 "$PCPTUNED" --dry-run --once --root "$tmp/nonexistent" \
	--policy-dir "$top_srcdir/tests/policies/empty"
expect_rc "pcptuned with a missing policy dir fails" 1 "$PCPTUNED" --dry-run --once --root "$root" --policy-dir "$tmp/none"
expect_rc "pcptunectl without a command" 2 "$PCPTUNECTL"
expect_rc "pcptunectl unknown command" 2 "$PCPTUNECTL" frobnicate
expect_rc "pcptunectl --version" 0 "$PCPTUNECTL" --version

# The shipped policies validate without errors or warnings.
expect_rc "validate policies/" 0 "$PCPTUNECTL" validate --no-owner-check "$top_srcdir/policies"
grep -q "OK (0 warning(s))" "$tmp/out" && tap_ok "shipped policies have no warnings" || tap_fail "shipped warnings" "$(cat "$tmp/out")"
# Every bad policy fails with file:line:column.
for f in "$top_srcdir"/tests/policies/bad/*.yaml; do
	[ -e "$f" ] || continue
	"$PCPTUNECTL" validate --no-owner-check "$f" >"$tmp/out" 2>&1; rc=$?
	if [ $rc = 1 ] && grep -Eq "$(basename "$f"):[0-9]+:[0-9]+: " "$tmp/out"; then
		tap_ok "validate $(basename "$f") fails with file:line:column"
	else
		tap_fail "validate $(basename "$f")" "exit $rc" "$(cat "$tmp/out")"
	fi
done
for f in "$top_srcdir"/tests/policies/good/*.yaml; do
	[ -e "$f" ] || continue
	expect_rc "validate good/$(basename "$f")" 0 "$PCPTUNECTL" validate --no-owner-check "$f"
done
expect_rc "validate without paths" 2 "$PCPTUNECTL" validate

# status on a fixture root: the report, no daemon.
expect_rc "pcptunectl status on a fixture" 0 "$PCPTUNECTL" --root "$root" --state-dir "$tmp/state" \
	--policy-dir "$top_srcdir/tests/policies/minimum" --no-owner-check status
if grep -q "pcptuned: not running" "$tmp/out" && grep -q "^1    Normal" "$tmp/out" && grep -q "decision:" "$tmp/out"; then
	tap_ok "status shows both nodes' zones and the decision"
else
	tap_fail "status content" "$(cat "$tmp/out")"
fi
expect_rc "pcptunectl status --json" 0 "$PCPTUNECTL" --root "$root" --state-dir "$tmp/state" \
	--policy-dir "$top_srcdir/tests/policies/empty" --json status
grep -q '"running": false' "$tmp/out" && tap_ok "status --json says not running" || tap_fail "status --json" "$(cat "$tmp/out")"
grep -q '"unavailable": "pcptuned is not running"' "$tmp/out" && tap_ok "status --json: bulk_free unavailable without the daemon" ||
	tap_fail "status --json bulk_free" "$(cat "$tmp/out")"
expect_rc "pcptuned --bulk-free-period 1s is refused" 2 "$PCPTUNED" --bulk-free-period 1s --once
expect_rc "pcptunectl restore without a journal" 0 "$PCPTUNECTL" --state-dir "$tmp/state" restore
expect_rc "pcptunectl resume without a daemon" 1 "$PCPTUNECTL" --state-dir "$tmp/state" resume vm.percpu_pagelist_high_fraction
expect_rc "pcptunectl resume of an unknown knob" 1 "$PCPTUNECTL" --state-dir "$tmp/state" resume vm.swappiness

tap_done
