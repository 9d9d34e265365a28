#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Command-line behaviour of pcptuned and pcptunectl: options, exit codes,
# validate on good and bad policies, status on a fixture root.  Prints TAP.
. "$(dirname "$0")/tap.sh"

tmp=$(mktemp -d /tmp/pcptune-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# Policy directories as the owner check wants them, whatever the checkout's modes (tap.sh).
empty=$(policy_copy empty "$tmp/pol-empty") minimum=$(policy_copy minimum "$tmp/pol-minimum")
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
	--policy-dir "$empty"
expect_rc "pcptuned with a missing policy dir fails" 1 "$PCPTUNED" --dry-run --once --root "$root" --policy-dir "$tmp/none"
expect_rc "pcptunectl without a command" 2 "$PCPTUNECTL"
expect_rc "pcptunectl unknown command" 2 "$PCPTUNECTL" frobnicate
expect_rc "pcptunectl --version" 0 "$PCPTUNECTL" --version

# The shipped policies validate without errors or warnings.
expect_rc "validate policies/" 0 "$PCPTUNECTL" validate --no-owner-check "$top_srcdir/policies"
grep -q "OK (0 warning(s))" "$tmp/out" && tap_ok "shipped policies have no warnings" || tap_fail "shipped warnings" "$(cat "$tmp/out")"
# An empty directory is valid, with one warning, and the summary counts it.
mkdir -p "$tmp/nopolicies"
expect_rc "validate an empty directory" 0 "$PCPTUNECTL" validate --no-owner-check "$tmp/nopolicies"
grep -q "^warning: no policies" "$tmp/out" && grep -q "^0 policies, 0 rules: OK (1 warning(s))$" "$tmp/out" &&
	tap_ok "an empty directory: the warning is counted" || tap_fail "empty directory summary" "$(cat "$tmp/out")"
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

# pcptune.policy(5)'s example validates without warnings; without force-empty, on a cgroup v1 host,
# its reclaim-dying rule is said to reclaim nothing.
sed -n '/^\.SH EXAMPLE/,/^\.fi/p' "$top_srcdir/man/pcptune.policy.5" | sed '1,2d;$d' >"$tmp/example.yaml"
expect_rc "validate the man page's example" 0 "$PCPTUNECTL" validate --no-owner-check "$tmp/example.yaml"
grep -q "OK (0 warning(s))" "$tmp/out" && tap_ok "the man page's example has no warnings" || tap_fail "example warnings" "$(cat "$tmp/out")"
if [ -e /sys/fs/cgroup/memory/memory.usage_in_bytes ]; then
	sed '/force-empty: childless/d; s/timeout: 10s,$/timeout: 10s } }/' "$tmp/example.yaml" >"$tmp/v1.yaml"
	"$PCPTUNECTL" validate --no-owner-check "$tmp/v1.yaml" >"$tmp/out" 2>&1
	grep -q "v1.yaml:[0-9]*:[0-9]*: rule 'dying-memcg-cleanup' can reclaim nothing on this host: .*cgroup v1.*force-empty: childless" "$tmp/out" &&
		tap_ok "cgroup v1 host: a reclaim-dying rule with no v1 method is warned about" || tap_fail "v1 warning" "$(cat "$tmp/out")"
fi
# Author words stay out of what operators read.
jargon=$(grep -nE "seed [0-9]{3}|the seed|stated apart|not tried|49x" "$top_srcdir/README" "$top_srcdir"/docs/*.md "$top_srcdir"/man/*.[58] \
	"$top_srcdir"/daemon/*/*.c "$top_srcdir"/daemon/*/*.h)
[ -z "$jargon" ] && tap_ok "no author jargon in README, docs, man pages and sources" || tap_fail "jargon" "$jargon"

# status on a fixture root: the report, no daemon.
expect_rc "pcptunectl status on a fixture" 0 "$PCPTUNECTL" --root "$root" --state-dir "$tmp/state" \
	--policy-dir "$minimum" --no-owner-check status
if grep -q "pcptuned: not running" "$tmp/out" && grep -q "^1    Normal" "$tmp/out" && grep -q "decision:" "$tmp/out"; then
	tap_ok "status shows both nodes' zones and the decision"
else
	tap_fail "status content" "$(cat "$tmp/out")"
fi
expect_rc "pcptunectl status --json" 0 "$PCPTUNECTL" --root "$root" --state-dir "$tmp/state" \
	--policy-dir "$empty" --json status
grep -q '"running": false' "$tmp/out" && tap_ok "status --json says not running" || tap_fail "status --json" "$(cat "$tmp/out")"
grep -q '"unavailable": "pcptuned is not running"' "$tmp/out" && tap_ok "status --json: bulk_free unavailable without the daemon" ||
	tap_fail "status --json bulk_free" "$(cat "$tmp/out")"
# A snapshot archive: status reads it as plan does; the commands that need a directory say so.
"$PCPTUNECTL" snapshot --root "$root" -o "$tmp/snap.tar.gz" >/dev/null 2>&1
"$PCPTUNECTL" --root "$tmp/snap.tar.gz" --state-dir "$tmp/state" --policy-dir "$empty" \
	--no-owner-check status >"$tmp/out" 2>&1; rc=$?
[ $rc = 0 ] && grep -q "^1    Normal" "$tmp/out" && grep -q "^decision:" "$tmp/out" &&
	head -n 1 "$tmp/out" | grep -Eq "^snapshot $tmp/snap.tar.gz \(written 20[0-9-]+T[0-9:]+Z\): no pcptuned runs on an archive$" &&
	tap_ok "status --root F.tar.gz reads the snapshot and says so first" || tap_fail "status on a .tar.gz" "exit $rc" "$(cat "$tmp/out")"
expect_rc "repair --root F.tar.gz is refused" 2 "$PCPTUNECTL" --root "$tmp/snap.tar.gz" repair
grep -q "is a snapshot archive, which only plan and status read; repair needs a directory" "$tmp/out" &&
	tap_ok "and says why" || tap_fail "repair on a .tar.gz" "$(cat "$tmp/out")"
# Broken policies: exit 1, the errors, and no decision made as if no rule were active.
mkdir -p "$tmp/broken" && cp "$top_srcdir/tests/policies/bad/bad-duration.yaml" "$tmp/broken/50.yaml"
expect_rc "pcptunectl status with a broken policy exits 1" 1 "$PCPTUNECTL" --root "$root" --state-dir "$tmp/state" \
	--policy-dir "$tmp/broken" --no-owner-check status
if grep -q "^policies ($tmp/broken): not loaded, 1 error (above)$" "$tmp/out" &&
	grep -q "^decision: none: the policies have 1 error (above); pcptuned does not start with them" "$tmp/out" &&
	! grep -q "no active rule" "$tmp/out"; then
	tap_ok "status with a broken policy: the errors, 'not loaded', no 'no active rule' decision"
else
	tap_fail "status broken policy" "$(cat "$tmp/out")"
fi
"$PCPTUNECTL" --root "$root" --state-dir "$tmp/state" --policy-dir "$tmp/broken" --no-owner-check --json status >"$tmp/out" 2>/dev/null
grep -q '"reason": "none: the policies have 1 error (above)' "$tmp/out" && tap_ok "status --json with a broken policy: decision.reason says so" ||
	tap_fail "status --json broken policy" "$(cat "$tmp/out")"
expect_rc "pcptuned --bulk-free-period 1s is refused" 2 "$PCPTUNED" --bulk-free-period 1s --once
expect_rc "the example policies validate" 0 "$PCPTUNECTL" validate --no-owner-check "$top_srcdir"/policies/examples/*.yaml
expect_rc "pcptunectl restore without a journal" 0 "$PCPTUNECTL" --state-dir "$tmp/state" restore
expect_rc "pcptunectl resume without a daemon" 1 "$PCPTUNECTL" --state-dir "$tmp/state" resume vm.percpu_pagelist_high_fraction
expect_rc "pcptunectl resume of an unknown knob" 1 "$PCPTUNECTL" --state-dir "$tmp/state" resume vm.swappiness

# --- issue 9 item 8: exit statuses are 0, 1 or 2, never a negative errno; a plan is whole or not printed.
expect_rc "plan --root on a missing path exits 1" 1 "$PCPTUNECTL" plan --root "$tmp/nonexistent"
grep -q "Failed to read $tmp/nonexistent: No such file or directory" "$tmp/out" && tap_ok "and says which path" ||
	tap_fail "plan missing root message" "$(cat "$tmp/out")"
expect_rc "plan --json --root on a missing path exits 1" 1 "$PCPTUNECTL" plan --json --root "$tmp/nonexistent"
mk_root() { rm -rf "$tmp/r"; cp -r "$FIXTURES/6.1.0-57-amd64-smp2-1G/root" "$tmp/r"; chmod -R u+w "$tmp/r"; }
mk_root; : >"$tmp/r/sys/devices/system/node/node0/cpulist"; : >"$tmp/r/sys/devices/system/node/online"
"$PCPTUNECTL" plan --root "$tmp/r" >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "no online CPU" "$tmp/err" && ! grep -q "pcp lists per zone" "$tmp/out"; then
	tap_ok "plan on a root without online CPUs: exit 1, a message, no cut-off table"
else
	tap_fail "plan zero CPUs" "rc=$rc" "$(cat "$tmp/out" "$tmp/err")"
fi
mk_root; mv "$tmp/r/proc/sys/vm/percpu_pagelist_high_fraction" "$tmp/r/proc/sys/vm/percpu_pagelist_fraction"
echo 5.10.0-30-amd64 >"$tmp/r/proc/sys/kernel/osrelease"; echo 1 >"$tmp/r/proc/sys/vm/percpu_pagelist_fraction"
"$PCPTUNECTL" plan --root "$tmp/r" >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ $rc = 0 ] && grep -q "holds a value no kernel accepts" "$tmp/err" && grep -q "pcp lists per zone" "$tmp/out"; then
	tap_ok "plan on 5.10 with vm.percpu_pagelist_fraction = 1: the whole table and why the sysctl is ignored"
else
	tap_fail "plan legacy fraction 1" "rc=$rc" "$(cat "$tmp/out" "$tmp/err")"
fi
# validate out of memory: the reason, never "0 error(s)" (ASan cannot run under ulimit -v).
if ! ldd "$PCPTUNECTL" 2>/dev/null | grep -q libasan; then
	{ printf 'version: 1\nname: many\nrules:\n'; i=0; while [ $i -lt 18000 ]; do
		printf -- '- {name: r%d, when: cpus>1, pcp: {high: minimum}}\n' $i; i=$((i + 1)); done; } >"$tmp/big.yaml"
	(ulimit -v 12000; "$PCPTUNECTL" validate --no-owner-check "$tmp/big.yaml") >"$tmp/out" 2>&1; rc=$?
	if [ $rc = 1 ] && ! grep -q "^0 error(s)" "$tmp/out" && grep -q "Cannot allocate memory" "$tmp/out"; then
		tap_ok "validate under ulimit -v: says it ran out of memory"
	elif [ $rc = 0 ]; then
		tap_ok "validate under ulimit -v # SKIP 12 MB was enough here"
	else
		tap_fail "validate ENOMEM" "rc=$rc" "$(cat "$tmp/out")"
	fi
fi

# --- issue 9 item 12: messages name the file and the line; control characters are escaped.
mk_root; head -c 3000 "$FIXTURES/6.18.44-fc-live-smp2-24G/root/proc/zoneinfo" >"$tmp/r/proc/zoneinfo"
"$PCPTUNECTL" plan --root "$tmp/r" >"$tmp/out" 2>&1; rc=$?
if [ $rc = 1 ] && grep -Eq "$tmp/r/proc/zoneinfo:[0-9]+: the zone that starts here is incomplete" "$tmp/out"; then
	tap_ok "a truncated zoneinfo is rejected with the file and the line of the incomplete zone"
else
	tap_fail "truncated zoneinfo" "rc=$rc" "$(cat "$tmp/out")"
fi
mk_root; sed -i '5s/.*/garbage here/' "$tmp/r/proc/zoneinfo"
"$PCPTUNED" --dry-run --once --root "$tmp/r" --policy-dir "$empty" >"$tmp/out" 2>&1; rc=$?
if [ $rc = 1 ] && grep -q "Failed to read the kernel's memory state below $tmp/r: $tmp/r/proc/zoneinfo:5: unexpected line" "$tmp/out"; then
	tap_ok "a malformed zoneinfo line: pcptuned names ROOT/proc/zoneinfo:5"
else
	tap_fail "zoneinfo line" "rc=$rc" "$(cat "$tmp/out")"
fi
mk_root; echo garbage >"$tmp/r/proc/sys/vm/percpu_pagelist_high_fraction"
"$PCPTUNED" --dry-run --once --root "$tmp/r" --policy-dir "$minimum" >"$tmp/out" 2>&1
if grep -q "Failed to read the pcp sysctl below $tmp/r (/proc/sys/vm/percpu_pagelist_high_fraction" "$tmp/out" &&
	! grep -q "This kernel has no pcp sysctl" "$tmp/out"; then
	tap_ok "a sysctl holding garbage is reported as such, not as a kernel without the sysctl"
else
	tap_fail "garbage sysctl" "$(cat "$tmp/out")"
fi
mkdir -p "$tmp/esc"; esc=$(printf 'x\033[31mred\001.yaml')
printf 'version: 1\nname: e\nrules:\n  - name: a\n    pcp: { high: "\033[2J" }\n' >"$tmp/esc/$esc"
"$PCPTUNECTL" validate --no-owner-check "$tmp/esc" >"$tmp/out" 2>&1; rc=$?
if [ $rc = 1 ] && ! grep -q "$(printf '\033')" "$tmp/out" && ! grep -q "$(printf '\001')" "$tmp/out" &&
	grep -q 'x\\x1b\[31mred\\x01.yaml:5:' "$tmp/out"; then
	tap_ok "control characters in a file name and a value are printed escaped"
else
	tap_fail "escape" "rc=$rc" "$(cat -v "$tmp/out")"
fi

tap_done
