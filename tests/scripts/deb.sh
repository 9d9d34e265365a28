#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian package (debian/), fast: build-aux/build-deb builds the .deb
# (DEB_BUILD_OPTIONS=nocheck: tests/run-all ran the tests already), then
# lintian reports no error or warning (overrides carry their reason), the
# package holds every file it must and nothing from the build, its version is
# configure's, and its maintainer scripts neither enable nor start the unit,
# try-restart it on upgrade and stop it on remove.  Installing it for real
# (enable, the fraction changes, remove restores, purge) is the VM test:
# make check-deb-vm.  Run by tests/run-all (not make check: it builds the
# package, whose build runs make check).  Prints TAP.
. "$(dirname "$0")/tap.sh"

for t in dpkg-buildpackage dh lintian; do
	command -v "$t" >/dev/null || tap_skip_all "$t not installed (build-aux/debian-packages-test)"
done
out=${DEB_OUT:-$top_srcdir/build/deb}
tmp=$(mktemp -d /tmp/pcptune-deb-check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

if deb=$(DEB_BUILD_OPTIONS=nocheck "$top_srcdir/build-aux/build-deb" -o "$out" 2>"$tmp/build.log" | tail -n 1) && [ -f "$deb" ]; then
	tap_ok "build-aux/build-deb: $(basename "$deb") ($(stat -c %s "$deb") bytes)"
else
	tap_fail "build-aux/build-deb" "$(tail -n 30 "$tmp/build.log")"; tap_done; exit
fi
version=$(sed -n 's/^AC_INIT(\[pcptune\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] && tap_ok "the package version is configure's ($version)" ||
	tap_fail "package version $(dpkg-deb -f "$deb" Version) != configure's $version"

lint=$(lintian --fail-on error,warning -IE --pedantic "$deb" 2>&1); rc=$?
lint=$(printf '%s\n' "$lint" | grep -v '^running with root privileges')
[ -n "$lint" ] && printf "%s\n" "$lint" | sed "s/^/# lintian: /"
[ "$rc" = 0 ] && ! printf '%s\n' "$lint" | grep -q '^[EW]: ' && tap_ok "lintian: no errors, no warnings" ||
	tap_fail "lintian (exit $rc)" "$lint"
# Every override says why: a comment right above it.
ov=$top_srcdir/debian/pcptune.lintian-overrides
if [ -f "$ov" ]; then
	bare=$(awk '/^#/ { c = 1; next } /^[^#[:space:]]/ { if (!c) print; c = 0; next } { c = 0 }' "$ov")
	[ -z "$bare" ] && tap_ok "every lintian override has a reason" || tap_fail "overrides without a reason" "$bare"
fi

dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||' >"$tmp/files"
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd)
for f in /usr/sbin/pcptuned /usr/bin/pcptunectl /usr/share/man/man8/pcptuned.8.gz /usr/share/man/man8/pcptunectl.8.gz \
	/usr/share/man/man5/pcptune.policy.5.gz "$unitdir/pcptuned.service" /usr/share/bash-completion/completions/pcptunectl \
	/usr/lib/systemd/catalog/pcptune.catalog \
	/usr/share/doc/pcptune/copyright $(cd "$top_srcdir" && ls policies/*.yaml | sed 's|^|/usr/share/pcptune/|'); do
	grep -qxF "$f" "$tmp/files" && tap_ok "installs $f" || tap_fail "does not install $f"
done
extra=$(grep -E '/(bench-sample|churn|exitstorm|fuzz-[a-z-]*|test-[a-z-]*)$|\.(o|a|la)$|^/usr/local|^/etc/pcptune' "$tmp/files")
[ -z "$extra" ] && tap_ok "no benchmarks, tests, objects, /usr/local or /etc/pcptune in the package" || tap_fail "unexpected files" "$extra"
dpkg-deb -x "$deb" "$tmp/root"
grep -qx "ExecStart=/usr/sbin/pcptuned" "$tmp/root$unitdir/pcptuned.service" && tap_ok "the unit runs /usr/sbin/pcptuned" ||
	tap_fail "ExecStart" "$(grep ExecStart "$tmp/root$unitdir/pcptuned.service")"

dpkg-deb -e "$deb" "$tmp/ctl"
cat "$tmp"/ctl/preinst "$tmp"/ctl/postinst 2>/dev/null >"$tmp/install-scripts"
bad=$(grep -nE 'deb-systemd-helper +enable|deb-systemd-invoke +(start|restart|stop)|systemctl +(enable|start|restart)' "$tmp/install-scripts" |
	grep -v 'was-enabled' | grep -v '^.*deb-systemd-helper enable .pcptuned.service. >/dev/null || true$')
# The one enable line debhelper writes runs only for a unit the admin had enabled (was-enabled).
[ -z "$bad" ] && tap_ok "preinst/postinst neither enable nor start nor stop the unit" || tap_fail "install scripts" "$bad"
grep -q "deb-systemd-invoke try-restart 'pcptuned.service'" "$tmp/ctl/postinst" && grep -q 'if \[ -n "\$2" \]' "$tmp/ctl/postinst" &&
	tap_ok "postinst try-restarts the unit on upgrade only" || tap_fail "postinst restart" "$(cat "$tmp/ctl/postinst")"
grep -q 'deb-systemd-invoke stop pcptuned.service' "$tmp/ctl/prerm" && grep -q 'pcptunectl restore' "$tmp/ctl/prerm" &&
	tap_ok "prerm stops the unit on remove, then restores a leftover journal" || tap_fail "prerm" "$(cat "$tmp/ctl/prerm")"
for p in /run/pcptune /etc/pcptune /var/lib/prometheus/node-exporter/pcptune.prom; do
	grep -qF "$p" "$tmp/ctl/postrm" && tap_ok "postrm purge removes $p" || tap_fail "postrm does not remove $p"
done
tap_done
