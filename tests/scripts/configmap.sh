#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Component tests: policies mounted from a Kubernetes ConfigMap, and a policy
# directory reached through a symlink that is retargeted.  kubelet's update of
# a ConfigMap volume is replayed operation by operation (kubelet_update below):
# the daemon must reload once per update, atomically (a broken set keeps the
# old one), never for unrelated files, and keep following a retargeted
# symlink.  Every load logs "Loaded N policies from DIR": reloads are counted
# from those lines.  pcptuned runs on a copy of a fixture root where sysctl
# writes land in a file.  Prints TAP.
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/fake-root.sh"

[ "$(id -u)" = 0 ] || tap_skip_all "needs root: policy files must be owned by root"
fake_root_init configmap
set_root
# Each run's log alone: reloads are counted from it.
start_daemon_fresh_log() { : >"$tmp/log"; start_daemon "$1"; }
loads() { grep -c "Loaded [0-9]* polic[a-z]* from $1\$" "$tmp/log"; }
loads_are() { [ "$(loads "$1")" = "$2" ]; }
# Quiet for longer than the 300 ms debounce: no reload is pending.
settle() { sleep 1; }

minimum=$(cat "$top_srcdir/tests/policies/minimum/50-minimum.yaml")
thousand=$(cat "$top_srcdir/tests/policies/fraction1000/50-fraction.yaml")
broken=$(printf 'version: 1\nname: broken\nrules:\n  - name: x\n    pcp: { high: "3x batch" }\n')
# Independent oracle for `minimum` on this fixture (as in engine.sh): F = managed / (cpus * (4 * batch + 1)) + 1.
want=$(awk '/^Node/ { managed = 0; batch = 0 } /^        managed/ { managed = $2 }
	/^              batch:/ && batch == 0 { batch = $2; f = int(managed / (2 * (4 * batch + 1))) + 1; if (f > best) best = f }
	END { if (best < 8) best = 8; print best }' "$tmp/root/proc/zoneinfo")

# kubelet's update of a ConfigMap volume, in its order of operations: a new
# "..<timestamp>" directory (created 0700, then chmod 0755) with the payload
# (each file written, then chmod 0644); a "..data_tmp" symlink to it renamed
# over "..data"; a visible symlink NAME -> ..data/NAME for each new key; the
# visible names of removed keys unlinked; the old directory removed.
# kubelet_update VOLUME KEY=CONTENT...
kubelet_update() {
	local vol=$1 old ts key kv keys=() mode=${MODE:-0644}
	shift
	old=$(readlink "$vol/..data" 2>/dev/null)
	ts=..$(date -u +%Y_%m_%d_%H_%M_%S).$RANDOM$RANDOM
	mkdir -m 0700 "$vol/$ts" && chmod 0755 "$vol/$ts"
	for kv in "$@"; do
		key=${kv%%=*}; keys+=("$key")
		printf '%s\n' "${kv#*=}" >"$vol/$ts/$key" && chmod "$mode" "$vol/$ts/$key"
	done
	ln -s "$ts" "$vol/..data_tmp"
	mv -T "$vol/..data_tmp" "$vol/..data" # rename(2)
	for key in "${keys[@]}"; do
		[ -L "$vol/$key" ] || ln -s "..data/$key" "$vol/$key"
	done
	for kv in "$vol"/*; do
		key=${kv##*/}
		case " ${keys[*]} " in *" $key "*) ;; *) rm -f "$vol/$key" ;; esac
	done
	[ -n "$old" ] && rm -rf "${vol:?}/$old"
	return 0
}

# The volume: an emptyDir, which kubelet creates with mode 0777, filled before the pod starts.
vol=$tmp/configmap
mkdir -m 0777 "$vol"; chmod 0777 "$vol"
kubelet_update "$vol" "50-pcp.yaml=$minimum"

# --- start: the ConfigMap's layout loads (its directory is 0777, the data directory is checked).
start_daemon_fresh_log "$vol"
if wait_for 50 frac_is "$want" && loads_are "$vol" 1; then
	tap_ok "a ConfigMap volume loads at start (fraction $want, one load)"
else
	tap_fail "ConfigMap start" "fraction $(frac), loads $(loads "$vol")" "$(cat "$tmp/log")"
fi
out=$("$PCPTUNECTL" validate "$vol" 2>&1) && printf "%s" "$out" | grep -q "^1 policy, 1 rule: OK" &&
	tap_ok "pcptunectl validate reads the ConfigMap's layout" || tap_fail "validate ConfigMap" "$out"

# --- an update of the key's content: exactly one reload.
kubelet_update "$vol" "50-pcp.yaml=$thousand"
if wait_for 50 frac_is 1000 && settle && loads_are "$vol" 2; then
	tap_ok "a ConfigMap update (..data swapped) reloads once and applies it (fraction 1000)"
else
	tap_fail "ConfigMap update" "fraction $(frac), loads $(loads "$vol")" "$(cat "$tmp/log")"
fi

# --- unrelated files: no reload.
echo notes >"$vol/README.txt"; echo x >"$vol/.50-pcp.yaml.swp"; mkdir "$vol/..2026_01_01_00_00_00.1"
rm "$vol/README.txt" "$vol/.50-pcp.yaml.swp"; rmdir "$vol/..2026_01_01_00_00_00.1"
settle
loads_are "$vol" 2 && tap_ok "unrelated files and hidden names cause no reload" ||
	tap_fail "unrelated files" "loads $(loads "$vol")" "$(cat "$tmp/log")"

# --- an update that renames the key (one visible symlink added, one removed): one reload.
kubelet_update "$vol" "60-renamed.yaml=$minimum"
if wait_for 50 frac_is "$want" && settle && loads_are "$vol" 3 && [ ! -e "$vol/50-pcp.yaml" ] &&
	[ "$(readlink "$vol/60-renamed.yaml")" = ..data/60-renamed.yaml ]; then
	tap_ok "an update adding and removing keys reloads once (fraction $want)"
else
	tap_fail "key renamed" "fraction $(frac), loads $(loads "$vol")" "$(ls -la "$vol")" "$(cat "$tmp/log")"
fi

# --- a broken update keeps the old set, names the file as the operator sees it; a fix applies.
kubelet_update "$vol" "60-renamed.yaml=$thousand" "70-broken.yaml=$broken"
if wait_for 50 log_has "$vol/70-broken.yaml:5:" && wait_for 30 log_has "keeping the 1 policy in use" && settle &&
	frac_is "$want" && loads_are "$vol" 3; then
	tap_ok "a broken ConfigMap update keeps the old set and names DIR/70-broken.yaml:5 (the visible name)"
else
	tap_fail "broken update" "fraction $(frac), loads $(loads "$vol")" "$(cat "$tmp/log")"
fi
kubelet_update "$vol" "60-renamed.yaml=$thousand"
if wait_for 50 frac_is 1000 && settle && loads_are "$vol" 4; then
	tap_ok "the fixed update applies (fraction 1000, one more load)"
else
	tap_fail "fixed update" "fraction $(frac), loads $(loads "$vol")" "$(cat "$tmp/log")"
fi
stop_daemon
frac_is 0 && tap_ok "stop restores 0" || tap_fail "stop" "fraction $(frac)"

# --- owner checks in the ConfigMap layout: the data directory and the files, not the 0777 volume.
MODE=0666 kubelet_update "$vol" "60-renamed.yaml=$minimum"
out=$("$PCPTUNED" --dry-run --once --root "$tmp/root" --policy-dir "$vol" 2>&1); rc=$?
[ $rc -ne 0 ] && printf '%s' "$out" | grep -q "$vol/60-renamed.yaml: refusing policy file" &&
	tap_ok "a ConfigMap with defaultMode 0666 is refused" || tap_fail "defaultMode 0666" "rc=$rc" "$out"
kubelet_update "$vol" "60-renamed.yaml=$minimum"
chown 65534 "$vol/$(readlink "$vol/..data")"
out=$("$PCPTUNED" --dry-run --once --root "$tmp/root" --policy-dir "$vol" 2>&1); rc=$?
[ $rc -ne 0 ] && printf '%s' "$out" | grep -q "refusing policy directory (owner uid 65534" &&
	tap_ok "a ..data directory not owned by root is refused" || tap_fail "..data owner" "rc=$rc" "$out"
rm -f "$vol/..data"; ln -s /etc "$vol/..data"
out=$("$PCPTUNED" --dry-run --once --root "$tmp/root" --policy-dir "$vol" 2>&1); rc=$?
[ $rc -ne 0 ] && printf '%s' "$out" | grep -q '..data: expected a symlink to a "..<timestamp>" directory beside it' &&
	tap_ok "a ..data pointing out of the volume is refused" || tap_fail "..data outside" "rc=$rc" "$out"
rm -f "$vol/..data"
out=$("$PCPTUNED" --dry-run --once --root "$tmp/root" --policy-dir "$vol" 2>&1); rc=$?
[ $rc -ne 0 ] && printf '%s' "$out" | grep -q "refusing policy directory (owner uid 0, mode 0777)" &&
	tap_ok "without ..data the 0777 volume itself is checked, and refused" || tap_fail "no ..data" "rc=$rc" "$out"

# --- a symlinked policy directory, retargeted (ln -sfn): the watch follows it.
for d in a b; do mkdir -p "$tmp/targets/$d"; done
printf '%s\n' "$minimum" >"$tmp/targets/a/50-pcp.yaml"
printf '%s\n' "$thousand" >"$tmp/targets/b/50-pcp.yaml"
chmod 0644 "$tmp"/targets/*/*.yaml
link=$tmp/policies.d
ln -s targets/a "$link"
start_daemon_fresh_log "$link"
wait_for 50 frac_is "$want"
ln -sfn targets/b "$link"
if wait_for 50 frac_is 1000 && settle && loads_are "$link" 2; then
	tap_ok "retargeting the policy directory's symlink reloads once, from the new target"
else
	tap_fail "symlink retargeted" "fraction $(frac), loads $(loads "$link")" "$(cat "$tmp/log")"
fi
printf '%s\n' "$minimum" >"$tmp/targets/a/50-pcp.yaml"
settle
loads_are "$link" 2 && tap_ok "the old target is no longer watched" ||
	tap_fail "old target" "loads $(loads "$link")" "$(cat "$tmp/log")"
printf '%s\n' "$minimum" >"$tmp/targets/b/50-pcp.yaml"
if wait_for 50 frac_is "$want" && settle && loads_are "$link" 3; then
	tap_ok "an edit in the new target reloads (the watch moved)"
else
	tap_fail "new target watched" "fraction $(frac), loads $(loads "$link")" "$(cat "$tmp/log")"
fi
stop_daemon

# --- a symlink further up the path: SIGHUP reloads from the new target and moves the watch there.
mkdir -p "$tmp/trees/a/policies" "$tmp/trees/b/policies"
printf '%s\n' "$minimum" >"$tmp/trees/a/policies/50-pcp.yaml"
printf '%s\n' "$thousand" >"$tmp/trees/b/policies/50-pcp.yaml"
chmod 0644 "$tmp"/trees/*/policies/*.yaml
ln -s trees/a "$tmp/top"
start_daemon_fresh_log "$tmp/top/policies"
wait_for 50 frac_is "$want"
ln -sfn trees/b "$tmp/top"
kill -HUP "$daemon_pid"
wait_for 50 frac_is 1000
printf '%s\n' "$minimum" >"$tmp/trees/b/policies/50-pcp.yaml"
if wait_for 50 frac_is "$want" && settle && loads_are "$tmp/top/policies" 3; then
	tap_ok "after SIGHUP, edits in the retargeted directory reload (the watch moved)"
else
	tap_fail "SIGHUP retarget" "fraction $(frac), loads $(loads "$tmp/top/policies")" "$(cat "$tmp/log")"
fi
stop_daemon
frac_is 0 && tap_ok "stop restores 0" || tap_fail "stop" "fraction $(frac)"

tap_done
