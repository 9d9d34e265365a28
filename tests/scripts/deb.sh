#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian package (debian/), fast: build-aux/build-deb builds the .deb
# (DEB_BUILD_OPTIONS=nocheck: tests/run-all ran the tests already), then
# lintian reports no error or warning (overrides carry their reason), the
# package holds every file it must and nothing from the build, its version is
# configure's, and its maintainer scripts neither enable nor start the unit,
# try-restart it on upgrade and stop it on remove, and its postrm, run on a
# fake root, purges what the package made and leaves /etc/pcptune (saying
# so).  Installing it for real
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
grep -qx "ExecStart=/usr/sbin/pcptuned --on-stop=auto" "$tmp/root$unitdir/pcptuned.service" && tap_ok "the unit runs /usr/sbin/pcptuned --on-stop=auto" ||
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

# postrm, run for real on a fake root (DPKG_ROOT), without debhelper's
# sections (they talk to systemd): purge removes what the package and its
# daemon made and leaves /etc/pcptune, which the package does not install,
# saying so; remove removes nothing.  First, statically: every path it
# removes is below $root (else running it here would touch this machine).
sed '/^# Automatically added by dh_/,/^# End automatically added section/d' "$tmp/ctl/postrm" >"$tmp/postrm"
unrooted=$(grep -E '^[[:space:]]*rm ' "$tmp/postrm" | grep -vE '^[[:space:]]*rm -(rf|f)( "\$root/[^"]+")+$')
if [ -z "$unrooted" ] && grep -q 'root=${DPKG_ROOT:-}' "$tmp/postrm"; then
	tap_ok "postrm removes only paths below \$DPKG_ROOT"
	fr=$tmp/fakeroot
	mkfr() {
		rm -rf "$fr"
		mkdir -p "$fr/run/pcptune" "$fr/var/lib/pcptune" "$fr/var/lib/prometheus/node-exporter" "$fr/etc/pcptune/policies.d"
		echo '{}' >"$fr/run/pcptune/restore.json"; echo x >"$fr/run/pcptune/health"
		echo '{}' >"$fr/var/lib/pcptune/calibration.json"
		echo 'pcptune_samples_total 1' >"$fr/var/lib/prometheus/node-exporter/pcptune.prom"
		echo 'pcptune_samples_total 1' >"$fr/var/lib/prometheus/node-exporter/.pcptune.prom.tmp"
		echo 'other_metric 1' >"$fr/var/lib/prometheus/node-exporter/other.prom"
		echo 'version: 1' >"$fr/etc/pcptune/policies.d/90-site.yaml"
	}
	mkfr
	DPKG_ROOT=$fr sh "$tmp/postrm" purge >"$tmp/purge.out" 2>&1; rc=$?
	left=$(cd "$fr" && find . -type f | sort | paste -sd' ')
	[ "$rc" = 0 ] && [ "$left" = "./etc/pcptune/policies.d/90-site.yaml ./var/lib/prometheus/node-exporter/other.prom" ] &&
		[ ! -e "$fr/run/pcptune" ] && [ ! -e "$fr/var/lib/pcptune" ] &&
		tap_ok "postrm purge removes /run/pcptune, /var/lib/pcptune, pcptune.prom and its temporary file; leaves $left" ||
		tap_fail "postrm purge (exit $rc)" "left: $left" "$(cat "$tmp/purge.out")"
	[ "$(grep -c "pcptune: leaving $fr/etc/pcptune (not installed by the package" "$tmp/purge.out")" = 1 ] &&
		tap_ok "postrm purge says it leaves /etc/pcptune: $(cat "$tmp/purge.out")" || tap_fail "postrm purge message" "$(cat "$tmp/purge.out")"
	rm -rf "$fr/etc/pcptune"
	DPKG_ROOT=$fr sh "$tmp/postrm" purge >"$tmp/purge.out" 2>&1
	[ ! -s "$tmp/purge.out" ] && tap_ok "postrm purge without /etc/pcptune says nothing" || tap_fail "postrm purge output" "$(cat "$tmp/purge.out")"
	mkfr
	before=$(cd "$fr" && find . | sort)
	DPKG_ROOT=$fr sh "$tmp/postrm" remove >"$tmp/remove.out" 2>&1; rc=$?
	[ "$rc" = 0 ] && [ "$(cd "$fr" && find . | sort)" = "$before" ] && [ ! -s "$tmp/remove.out" ] &&
		tap_ok "postrm remove removes nothing" || tap_fail "postrm remove (exit $rc)" "$(cat "$tmp/remove.out")"
else
	tap_fail "postrm removes a path not below \$DPKG_ROOT (not run)" "$unrooted"
fi
tap_done
