#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/vm/systemd/deb.guest.sh: the Debian package, for real, in the Debian
# bookworm systemd image (vmrun -i IMAGE -f deb.guest.sh); the image holds the
# package's runtime dependencies (no network in the guest) and the overlay
# /usr/share/pcptune-vmtest/deb/: pcptune_V_ARCH.deb and a second version of
# it (the same files, version V+vmtest1) for the upgrade, and
# /usr/share/pcptune-vmtest/policies/50-minimum.yaml.  Prints
# "PASS|FAIL ID NAME - detail" per check, evidence as "#" lines; exit 0 = all
# passed.
#   D1 install          apt-get install ./pcptune_*.deb: files in place, the
#                       unit neither enabled nor started, the fraction untouched
#   D2 enable           a policy + systemctl enable --now: the fraction changes,
#                       restore.json holds the boot value as the original, and
#                       pcptune.prom appears in node_exporter's directory
#   D3 upgrade-running  apt-get install of the next version with the daemon
#                       running: a new daemon (try-restart), still enabled, the
#                       fraction still set, restore.json's original still the boot value
#   D4 remove           apt-get remove: the unit stops first, the boot value is
#                       back, no daemon left, restore.json and pcptune.prom gone
#   D5 remove-killed    reinstall, pcptuned started by hand and SIGKILLed (a
#                       journal left behind): apt-get remove restores it (prerm)
#   D6 purge            apt-get purge: no file of the package, no /run/pcptune,
#                       metrics file or enablement symlink left; the policy
#                       D2 wrote in /etc/pcptune (not the package's) is left,
#                       and purge says so
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
U=pcptuned.service
K=/proc/sys/vm/percpu_pagelist_high_fraction
D=/usr/share/pcptune-vmtest/deb
SRC=/usr/share/pcptune-vmtest/policies
PD=/etc/pcptune/policies.d
J=/run/pcptune/restore.json
PROM=/var/lib/prometheus/node-exporter
OUT=${VMTEST_OUT:-/tmp/vmtest-out}
mkdir -p "$OUT"
export DEBIAN_FRONTEND=noninteractive
passed=0 failed=0
BOOT_FRAC=$(cat "$K")

ev() { printf '#   %s\n' "$*"; }
evf() { sed 's/^/#   /'; }
head_() { echo "# --- $1 $2"; }
result() { # RC ID NAME DETAIL
	if [ "$1" = 0 ]; then passed=$((passed + 1)); echo "PASS $2 $3 - $4"; else failed=$((failed + 1)); echo "FAIL $2 $3 - $4"; fi
}
frac() { cat "$K"; }
prop() { systemctl show -P "$1" "$U" 2>/dev/null; }
wait_for() { # TENTHS CMD...
	local t=$1; shift
	while [ "$t" -gt 0 ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; t=$((t - 1)); done
	return 1
}
frac_not_boot() { [ "$(frac)" != "$BOOT_FRAC" ]; }
frac_boot() { [ "$(frac)" = "$BOOT_FRAC" ]; }
# The original value journaled for the fraction (restore.json, json-c's output).
j_original() { tr -d ' \n' <"$J" 2>/dev/null | grep -o '"name":"vm.percpu_pagelist_high_fraction"[^}]*' | sed -n 's/.*"original":\(-\{0,1\}[0-9]*\).*/\1/p'; }
apt_() { # log-name args...: apt-get, output kept
	local log=$OUT/$1.txt; shift
	apt-get -y -o Dpkg::Use-Pty=0 "$@" >"$log" 2>&1; local rc=$?
	evf <"$log"; return $rc
}
# The two versions, older first (dpkg's order: "0.1.0" < "0.1.0+vmtest1").
set -- "$D"/pcptune_*.deb
[ $# = 2 ] || { echo "FAIL D0 setup - expected two packages in $D, found $#"; exit 1; }
DEB1=$1 DEB2=$2
if dpkg --compare-versions "$(dpkg-deb -f "$DEB1" Version)" gt "$(dpkg-deb -f "$DEB2" Version)"; then DEB1=$2 DEB2=$1; fi
V1=$(dpkg-deb -f "$DEB1" Version) V2=$(dpkg-deb -f "$DEB2" Version)
echo "# kernel $(uname -r), $(nproc) CPUs, $(systemctl --version | head -n 1), state $(systemctl is-system-running)"
echo "# $K at boot: $BOOT_FRAC; packages: $(basename "$DEB1") ($V1), $(basename "$DEB2") ($V2)"
# The directory Debian's prometheus-node-exporter reads: pcptuned writes its
# metrics there when it exists (it never creates it).
mkdir -p "$PROM"
# The image leaves apt's lists and caches out: apt wants the directories.
mkdir -p /var/lib/apt/lists/partial /var/cache/apt/archives/partial

# ---- D1 install ------------------------------------------------------------------
head_ D1 install
apt_ D1-apt install "$DEB1"; rc=$?
en=$(systemctl is-enabled "$U" 2>&1) act=$(systemctl is-active "$U" 2>&1)
unitfile=$(systemctl show -P FragmentPath "$U")
missing=""
for f in /usr/sbin/pcptuned /usr/bin/pcptunectl "$unitfile" /usr/share/bash-completion/completions/pcptunectl \
	/usr/share/pcptune/policies/50-large-host-latency.yaml; do [ -e "$f" ] || missing="$missing $f"; done
ev "dpkg -s: $(dpkg-query -W -f '${Status} ${Version}' pcptune 2>&1); unit $unitfile: $en/$act; fraction $(frac)"
ok=1
[ "$rc" = 0 ] && [ -z "$missing" ] && [ -n "$unitfile" ] && [ "$en" = disabled ] && [ "$act" = inactive ] && frac_boot && ok=0
result $ok D1 install "apt-get install exit $rc; unit $en/$act; fraction $(frac) (boot $BOOT_FRAC)${missing:+; missing:$missing}"

# ---- D2 enable with a policy -------------------------------------------------------
head_ D2 enable
mkdir -p "$PD" && install -m 0644 "$SRC/50-minimum.yaml" "$PD/"
pcptunectl validate "$PD" 2>&1 | evf
systemctl enable --now "$U" 2>&1 | evf
wait_for 100 frac_not_boot
F=$(frac) pid1=$(prop MainPID) orig=$(j_original)
ev "systemctl: $(systemctl is-enabled "$U")/$(prop ActiveState)/$(prop SubState), MainPID $pid1; fraction $BOOT_FRAC -> $F"
ev "restore.json: $(tr -d '\n' <"$J" 2>/dev/null)"
# The hardened unit lets it write node_exporter's directory (ReadWritePaths=-...).
wait_for 100 test -s "$PROM/pcptune.prom"
metrics=$(grep -c '^pcptune_' "$PROM/pcptune.prom" 2>/dev/null)
ev "metrics: $PROM/pcptune.prom: ${metrics:-no} samples; $(grep -m1 '^pcptune_info' "$PROM/pcptune.prom" 2>/dev/null)"
ok=1
[ "$(systemctl is-enabled "$U")" = enabled ] && [ "$(prop ActiveState)" = active ] && [ "$F" != "$BOOT_FRAC" ] &&
	[ "$orig" = "$BOOT_FRAC" ] && [ "${metrics:-0}" -gt 0 ] && ok=0
result $ok D2 enable "enabled/active; fraction $BOOT_FRAC -> $F; journaled original $orig; ${metrics:-no} metric samples in $PROM/pcptune.prom"

# ---- D3 upgrade with the daemon running ---------------------------------------------
head_ D3 upgrade-running
apt_ D3-apt install "$DEB2"; rc=$?
wait_for 100 sh -c "[ \"\$(systemctl show -P SubState $U)\" = running ]"
pid2=$(prop MainPID) F2=$(frac) orig2=$(j_original)
ev "dpkg -s: $(dpkg-query -W -f '${Version}' pcptune); MainPID $pid1 -> $pid2; $(systemctl is-enabled "$U")/$(prop ActiveState); fraction $F2"
ev "restore.json: $(tr -d '\n' <"$J" 2>/dev/null)"
journalctl -b -u "$U" -o cat --no-pager | grep -E 'restored|vm.percpu_pagelist_high_fraction: ' | tail -n 4 | evf
ok=1
[ "$rc" = 0 ] && [ "$(dpkg-query -W -f '${Version}' pcptune)" = "$V2" ] && [ "$pid2" != "$pid1" ] && [ "$pid2" != 0 ] &&
	[ "$(systemctl is-enabled "$U")" = enabled ] && [ "$F2" = "$F" ] && [ "$orig2" = "$BOOT_FRAC" ] && ok=0
result $ok D3 upgrade-running "$V1 -> $V2 (exit $rc): daemon $pid1 -> $pid2, fraction $F2, journaled original $orig2 (boot $BOOT_FRAC)"

# ---- D4 remove ---------------------------------------------------------------------
head_ D4 remove
apt_ D4-apt remove "pcptune"; rc=$?
left=$(pgrep -x pcptuned | paste -sd' ')
ev "after remove: dpkg $(dpkg-query -W -f '${Status}' pcptune 2>&1); fraction $(frac); pcptuned processes: ${left:-none}; restore.json $([ -e "$J" ] && echo present || echo gone)"
journalctl -b -u "$U" -o cat --no-pager | tail -n 5 | evf
ok=1
[ "$rc" = 0 ] && frac_boot && [ -z "$left" ] && [ ! -e "$J" ] && [ ! -e /usr/sbin/pcptuned ] && [ ! -e "$PROM/pcptune.prom" ] && ok=0
result $ok D4 remove "apt-get remove exit $rc; fraction $(frac) (boot $BOOT_FRAC); no daemon: $([ -z "$left" ] && echo yes || echo "no ($left)"); metrics file $([ -e "$PROM/pcptune.prom" ] && echo "still there" || echo removed)"

# ---- D5 remove after a killed daemon -----------------------------------------------
head_ D5 remove-killed
apt_ D5-apt-install install "$DEB2"; rc1=$?
/usr/sbin/pcptuned >"$OUT/D5-pcptuned.txt" 2>&1 &
p=$!
wait_for 100 frac_not_boot
kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null
Fk=$(frac)
ev "pcptuned (pid $p, by hand, policies $PD) set $Fk and was SIGKILLed; restore.json $([ -e "$J" ] && echo present || echo missing)"
apt_ D5-apt-remove remove pcptune; rc2=$?
ok=1
[ "$rc1" = 0 ] && [ "$rc2" = 0 ] && [ "$Fk" != "$BOOT_FRAC" ] && frac_boot && [ ! -e "$J" ] && ok=0
result $ok D5 remove-killed "a killed daemon left $Fk; after apt-get remove (exit $rc2): $(frac) (boot $BOOT_FRAC), restore.json $([ -e "$J" ] && echo present || echo gone)"

# ---- D6 purge ------------------------------------------------------------------------
head_ D6 purge
# What node_exporter's directory would hold if pcptuned had written metrics.
[ -e "$PROM/pcptune.prom" ] || echo '# pcptune metrics (placed by the test)' >"$PROM/pcptune.prom"
apt_ D6-apt purge pcptune; rc=$?
st=$(dpkg-query -W -f '${Status}' pcptune 2>&1)
leftovers=$(find / -xdev \( -path /proc -o -path /sys -o -path /usr/share/pcptune-vmtest -o -path "$OUT" -o -path /vmtest -o -path /etc/pcptune \) -prune -o \
	\( -name '*pcptune*' -o -name 'pcptuned*' \) -print 2>/dev/null | grep -v "^$OUT" | paste -sd' ')
ev "dpkg: $st; files named *pcptune* left: ${leftovers:-none}"
ok=1
kept=$(find /etc/pcptune -type f 2>/dev/null | paste -sd' ')
said=$(grep -c 'pcptune: leaving /etc/pcptune' "$OUT/D6-apt.txt")
ev "left in /etc/pcptune (the administrator's): ${kept:-nothing}; purge said so: $said line(s)"
[ "$rc" = 0 ] && [ -z "$leftovers" ] && [ "$kept" = "$PD/50-minimum.yaml" ] && [ "$said" = 1 ] &&
	[ ! -e /run/pcptune ] && [ ! -e "$PROM/pcptune.prom" ] &&
	[ ! -e /etc/systemd/system/multi-user.target.wants/$U ] && frac_boot && ok=0
result $ok D6 purge "apt-get purge exit $rc; dpkg: $st; left: ${leftovers:-nothing}, /etc/pcptune: ${kept:-nothing}; fraction $(frac)"
rm -rf /etc/pcptune

journalctl -b --no-pager -o short-monotonic >"$OUT/journal.txt" 2>&1
echo "# end: fraction $(frac) (boot $BOOT_FRAC); $passed passed, $failed failed"
[ "$failed" = 0 ]
