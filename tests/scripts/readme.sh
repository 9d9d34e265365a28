#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's two quick-start commands and the package lists they install:
# .ci/run runs exactly the README's test command; the first command installs
# only build-aux/debian-packages, the second that and build-aux/debian-packages-test;
# the lists hold valid Debian package names, once each, and the main list has
# nothing that only the tests use.  Where apt has package lists, every name is
# known to apt-cache.  The README has at most 300 lines and names only files that exist.  Prints TAP.
. "$(dirname "$0")/tap.sh"

readme=$top_srcdir/README main=$top_srcdir/build-aux/debian-packages test=$top_srcdir/build-aux/debian-packages-test
# The indented command lines of the quick start, in order.
cmds=$(sed -n '/^Quick start/,/^What the dry-run/p' "$readme" | sed -n 's/^       \(apt-get update .*\)$/\1/p')
first=$(printf '%s\n' "$cmds" | sed -n 1p) second=$(printf '%s\n' "$cmds" | sed -n 2p)
[ "$(printf '%s\n' "$cmds" | wc -l)" = 2 ] && tap_ok "the quick start has two commands" ||
	tap_fail "the quick start has not two apt-get commands" "$cmds"
case $first in
*'$(cat build-aux/debian-packages)'*'./pcptuned --dry-run --once'*) tap_ok "the first command installs build-aux/debian-packages and runs the dry-run" ;;
*) tap_fail "the first command" "$first" ;;
esac
case $second in
*'$(cat build-aux/debian-packages build-aux/debian-packages-test) && tests/run-all') tap_ok "the second command installs both lists, then runs tests/run-all" ;;
*) tap_fail "the second command" "$second" ;;
esac
grep -qxF -- "$second" "$top_srcdir/.ci/run" && tap_ok ".ci/run runs exactly the README's test command" ||
	tap_fail ".ci/run does not run the README's test command" "$second"

# The README is a front door: at most 300 lines, and every file it sends a reader to exists.
lines=$(wc -l <"$readme")
[ "$lines" -le 300 ] && tap_ok "the README has $lines lines (at most 300)" || tap_fail "the README has $lines lines, more than 300"
missing=$(grep -oE '(docs/[a-z0-9-]+\.md|contrib/[a-z]+/README|tests/[a-z]+/README|man/[a-z.]+\.[58])' "$readme" | sort -u |
	while read -r f; do [ -e "$top_srcdir/$f" ] || echo "$f"; done)
[ -n "$(grep -o 'docs/[a-z-]*\.md' "$readme")" ] && [ -z "$missing" ] && tap_ok "every docs/, README and man page the README names exists" ||
	tap_fail "the README names files that do not exist" "$missing"

names=$(cat "$main" "$test")
bad=$(printf '%s\n' "$names" | grep -vxE '[a-z0-9][a-z0-9.+-]+')
[ -z "$bad" ] && tap_ok "the lists hold one package name a line" || tap_fail "not package names" "$bad"
dup=$(printf '%s\n' "$names" | sort | uniq -d)
[ -z "$dup" ] && tap_ok "no package is listed twice" || tap_fail "listed twice" "$dup"
# Only the tests use these; the main list must not pull them in.
heavy=$(grep -xE 'clang|valgrind|libcmocka-dev|libclang-rt-dev|linux-source-.*|lintian|debhelper' "$main")
[ -z "$heavy" ] && tap_ok "build-aux/debian-packages has nothing only the tests use" ||
	tap_fail "build-aux/debian-packages installs test tools" "$heavy"
if command -v apt-cache >/dev/null && [ -n "$(ls /var/lib/apt/lists/*_Packages* 2>/dev/null)" ]; then
	unknown=$(for n in $names; do apt-cache show --no-all-versions "$n" >/dev/null 2>&1 || echo "$n"; done)
	[ -z "$unknown" ] && tap_ok "apt-cache knows every listed package" || tap_fail "apt-cache does not know" "$unknown"
else
	echo "# no apt package lists here: names not checked against apt"
fi
tap_done
