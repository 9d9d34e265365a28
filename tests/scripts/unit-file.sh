#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# units/pcptuned.service: `systemd-analyze verify` and the exposure score of
# `systemd-analyze security --offline=yes`.  Prints TAP.
. "$(dirname "$0")/tap.sh"

sa=${SYSTEMD_ANALYZE:-}; [ -n "$sa" ] && [ "$sa" != no ] || sa=$(command -v systemd-analyze)
[ -x "$sa" ] || tap_skip_all "systemd-analyze not installed"
unit=$top_builddir/units/pcptuned.service
[ -f "$unit" ] || tap_skip_all "unit not built"
tmp=$(mktemp -d /tmp/pcptune-unit.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# verify needs ExecStart to exist: point it at the built binary.
sed "s|^ExecStart=.*|ExecStart=$PCPTUNED|" "$unit" >"$tmp/pcptuned.service"
out=$(SYSTEMD_LOG_LEVEL=warning "$sa" verify "$tmp/pcptuned.service" 2>&1 | grep -v "Cannot add dependency job\|Failed to load configuration\|multi-user.target\|tuned.service\|systemd-sysctl.service")
if [ -z "$out" ]; then tap_ok "systemd-analyze verify: no complaints"; else tap_fail "systemd-analyze verify" "$out"; fi
for k in "Type=notify" "WatchdogSec=" "ExecReload=" "Restart=on-failure" "RuntimeDirectoryPreserve=yes" "ReadWritePaths=/proc/sys/vm" "ReadWritePaths=-/var/lib/prometheus/node-exporter" "ReadWritePaths=-/sys/kernel/tracing/instances" "ReadWritePaths=-/sys/kernel/mm/percpu" "StateDirectory=pcptune"; do
	grep -q "^$k" "$unit" && tap_ok "unit has $k" || tap_fail "unit lacks $k"
done
# percpu-depopulate works through the file's mode (contrib patch 0003), not CAP_SYS_ADMIN.
if grep '^CapabilityBoundingSet=' "$unit" | grep -q CAP_SYS_ADMIN; then tap_fail "the bounding set grants CAP_SYS_ADMIN"
else tap_ok "the bounding set leaves out CAP_SYS_ADMIN"; fi
score=$("$sa" security --offline=yes "$tmp/pcptuned.service" 2>/dev/null | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
if [ -n "$score" ]; then
	echo "# systemd-analyze security --offline=yes: exposure $score"
	awk -v s="$score" 'BEGIN { exit !(s <= 3.0) }' && tap_ok "exposure $score <= 3.0" || tap_fail "exposure $score > 3.0"
else
	echo "# systemd-analyze security --offline=yes not supported by this systemd"
fi
tap_done
