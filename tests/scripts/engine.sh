#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Component tests: pcptuned and pcptunectl on fake roots (copies of captured
# fixture trees) where sysctl writes land in regular files.  Covers dry-run,
# --once, the loop with SIGTERM restore, SIGKILL + crash-journal restore, the
# admin-wins rule, resume, reload (good and bad), the state-dir lock, restore
# by hand and kernels before 5.14.  Prints TAP.
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/fake-root.sh"

[ "$(id -u)" = 0 ] || tap_skip_all "needs root: policy files must be owned by root"
fake_root_init engine
# Independent oracle for `minimum`: per populated zone F = managed / (cpus * (4 * batch + 1)) + 1,
# the largest over zones, at least 8 (zone_highsize(), mm/page_alloc.c; cpus = online CPUs of the zone's node, all
# online CPUs -- one pageset each in the zone -- for a node without CPUs, as zone_highsize() does).
minimum_oracle() { # zoneinfo-file root
	awk -v root="$2" '
	function cpus(node,   f, line, n, a, i, b) {
		f = root "/sys/devices/system/node/node" node "/cpulist"; n = 0
		if ((getline line < f) > 0) {
			split(line, a, ",")
			for (i in a) { if (split(a[i], b, "-") == 2) n += b[2] - b[1] + 1; else n += 1 }
		}
		close(f); return n
	}
	/^Node/ { node = $2; sub(",", "", node); managed = 0; batch = 0; pagesets = 0 }
	/^        managed/ { managed = $2 }
	/^    cpu: / { pagesets++ }
	/^              batch:/ && batch == 0 { batch = $2
		c = cpus(node); if (c == 0) c = online
		f = int(managed / (c * (4 * batch + 1))) + 1; if (f > best) best = f }
	/^              batch:/ && pagesets > online { online = pagesets }
	END { if (best < 8) best = 8; print best }' "$1"
}

minimum=$(policy_dir minimum)
empty=$(policy_dir empty)
thousand=$(policy_dir fraction1000)

# --- dry-run on every captured fixture: a report, and nothing written anywhere.
for set in "$FIXTURES"/*/; do
	set=$(basename "$set"); [ -d "$FIXTURES/$set/root" ] || continue
	set_root "$set"
	before=$(find "$tmp/root" -type f -exec md5sum {} + | sort)
	out=$("$PCPTUNED" --dry-run --once --root "$tmp/root" --state-dir "$tmp/state-dry" --policy-dir "$minimum" 2>&1)
	rc=$?
	after=$(find "$tmp/root" -type f -exec md5sum {} + | sort)
	want=$(minimum_oracle "$tmp/root/proc/zoneinfo" "$tmp/root")
	if [ $rc -eq 0 ] && [ "$before" = "$after" ] && [ ! -e "$tmp/state-dry" ] &&
		printf '%s\n' "$out" | grep -q "would set vm.percpu_pagelist_high_fraction 0 -> $want "; then
		tap_ok "dry-run --once on $set: would set $want, wrote nothing"
	else
		tap_fail "dry-run --once on $set" "rc=$rc want=$want" "$out"
	fi
done

# --- --once applies and leaves no journal.
set_root 6.18.44-fc-live-smp2-24G
want=$(minimum_oracle "$tmp/root/proc/zoneinfo" "$tmp/root")
"$PCPTUNED" --once --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$minimum" >"$tmp/out" 2>&1
if [ $? -eq 0 ] && frac_is "$want" && no_journal "$tmp/state"; then
	tap_ok "--once sets $want and leaves no journal"
else
	tap_fail "--once" "fraction $(frac), want $want" "$(cat "$tmp/out")"
fi
# Its report is read after the write: the decision says what it did, the knob line that nothing restores it.
if grep -q "^decision: set vm.percpu_pagelist_high_fraction 0 -> $want (policy " "$tmp/out" &&
	grep -q "^vm.percpu_pagelist_high_fraction = $want (managed by this pcptuned --once, original 0; no restore journal" "$tmp/out"; then
	tap_ok "--once reports the change it made (0 -> $want) and that no journal restores it"
else
	tap_fail "--once report" "$(grep -E '^(decision|vm.percpu)' "$tmp/out")"
fi
out=$("$PCPTUNED" --once --dry-run --json --root "$tmp/root" --policy-dir "$minimum" 2>/dev/null)
if printf '%s' "$out" | grep -q '"kernel": "6.18.44' && printf '%s' "$out" | grep -q '"zones"'; then
	tap_ok "--once --dry-run --json prints the report as JSON"
else
	tap_fail "--json report" "$out"
fi

# --- the loop: apply, journal, SIGTERM restores.
set_root 6.18.44-fc-live-smp2-24G; : >"$tmp/log"
start_daemon "$minimum"
if wait_for 50 frac_is "$want" && grep -q '"original": 0' "$tmp/state/$(journal_name "$tmp/root")" &&
	grep -q "\"written\": $want" "$tmp/state/$(journal_name "$tmp/root")"; then
	tap_ok "daemon sets $want and journals original 0 and written $want"
else
	tap_fail "daemon applies" "fraction $(frac)" "$(cat "$tmp/log")"
fi
"$PCPTUNECTL" --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$minimum" status >"$tmp/status" 2>&1
if grep -q "running (pid $daemon_pid)" "$tmp/status" && grep -q "manages vm.percpu_pagelist_high_fraction: original 0, written $want" "$tmp/status"; then
	tap_ok "pcptunectl status shows the running daemon and what it manages"
else
	tap_fail "pcptunectl status" "$(cat "$tmp/status")"
fi
"$PCPTUNED" --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$minimum" --once >"$tmp/second" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "Another pcptuned (pid $daemon_pid) is running" "$tmp/second"; then
	tap_ok "a second instance on the same root exits with a clear message"
else
	tap_fail "second instance" "rc=$rc" "$(cat "$tmp/second")"
fi
stop_daemon TERM; rc=$?
if [ $rc -eq 0 ] && frac_is 0 && no_journal "$tmp/state"; then
	tap_ok "SIGTERM restores 0 and removes the journal"
else
	tap_fail "SIGTERM restore" "rc=$rc fraction $(frac)" "$(cat "$tmp/log")"
fi

# --- a closed stderr (piped into head) must not kill the daemon before it restores.
( "$PCPTUNED" --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$minimum" --interval 200ms 2>&1 | head -1 >/dev/null ) &
wait_for 50 frac_is "$want"
sleep 0.5
dpid=$(pgrep -f "pcptuned --root $tmp/root" | head -1)
[ -n "$dpid" ] && kill -TERM "$dpid"
# The daemon writes the original back, then removes the journal: wait for both.
restored_clean() { frac_is 0 && no_journal "$tmp/state"; }
if wait_for 50 restored_clean; then
	tap_ok "with its stderr closed (SIGPIPE ignored) the daemon still restores on SIGTERM"
else
	tap_fail "closed stderr" "fraction $(frac), pid $dpid" "journal: $(ls "$tmp/state" 2>&1)"
fi
wait

# --- SIGKILL: the journal survives; the next start restores.
: >"$tmp/log"
start_daemon "$minimum"
wait_for 50 frac_is "$want"
stop_daemon KILL
if frac_is "$want" && [ -s "$tmp/state/$(journal_name "$tmp/root")" ]; then
	tap_ok "after SIGKILL the value stays and the journal remains"
else
	tap_fail "SIGKILL leaves journal" "fraction $(frac)"
fi
start_daemon "$empty"
if wait_for 50 frac_is 0 && wait_for 20 log_has "restored vm.percpu_pagelist_high_fraction: $want -> 0 (restore after an unclean stop)"; then
	tap_ok "restart after SIGKILL restores the crash journal"
else
	tap_fail "crash journal restore" "fraction $(frac)" "$(cat "$tmp/log")"
fi
stop_daemon TERM
no_journal "$tmp/state" && frac_is 0 && tap_ok "nothing left after the clean stop" || tap_fail "clean stop after crash restore"

# --- crash journal, but the admin changed the value since: leave it.
: >"$tmp/log"
start_daemon "$minimum"; wait_for 50 frac_is "$want"; stop_daemon KILL
echo 777 >"$tmp/root/proc/sys/vm/percpu_pagelist_high_fraction"
start_daemon "$empty"; sleep 1; stop_daemon TERM
# (killed between the write and the commit, the journal names both values: "neither 0 nor $want")
if frac_is 777 && grep -Eq "is 777, (not the $want|neither the 0 nor the $want) we (wrote|were writing): changed since, leaving it" "$tmp/log"; then
	tap_ok "crash journal: a value changed since is left alone"
else
	tap_fail "crash journal vs admin" "fraction $(frac)" "$(cat "$tmp/log")"
fi
echo 0 >"$tmp/root/proc/sys/vm/percpu_pagelist_high_fraction"

# --- the admin changes the knob while the daemon runs: not overwritten, not restored at exit.
: >"$tmp/log"
start_daemon "$minimum"; wait_for 50 frac_is "$want"
echo 1000 >"$tmp/root/proc/sys/vm/percpu_pagelist_high_fraction"
wait_for 30 log_has "changed to 1000 by someone else"; sleep 0.6
still=$(frac)
stop_daemon TERM
if [ "$still" = 1000 ] && frac_is 1000; then
	tap_ok "admin wins: 1000 kept while running and at exit"
else
	tap_fail "admin wins" "while running $still, after exit $(frac)" "$(cat "$tmp/log")"
fi

# --- resume hands the knob back; the admin's value becomes the one restored.
: >"$tmp/log"
start_daemon "$minimum"; wait_for 50 frac_is "$want"
echo 1000 >"$tmp/root/proc/sys/vm/percpu_pagelist_high_fraction"
wait_for 30 log_has "by someone else"
"$PCPTUNECTL" --root "$tmp/root" --state-dir "$tmp/state" resume vm.percpu_pagelist_high_fraction >/dev/null 2>&1
if wait_for 30 frac_is "$want"; then tap_ok "pcptunectl resume: the daemon manages the knob again"; else
	tap_fail "resume" "fraction $(frac)" "$(cat "$tmp/log")"; fi
stop_daemon TERM
frac_is 1000 && tap_ok "after resume, stop restores the admin's value" || tap_fail "restore after resume" "fraction $(frac)"
echo 0 >"$tmp/root/proc/sys/vm/percpu_pagelist_high_fraction"

# --- reload: a broken set keeps the old one; a good one replaces it.
: >"$tmp/log"
live=$tmp/pol-live; rm -rf "$live"; cp -r "$minimum" "$live"
start_daemon "$live"; wait_for 50 frac_is "$want"
printf 'version: 1\nname: broken\nrules:\n  - name: x\n    pcp: { high: "3x batch" }\n' >"$live/60-broken.yaml"
chmod 0644 "$live/60-broken.yaml"
kill -HUP "$daemon_pid"
if wait_for 30 log_has "60-broken.yaml:5:" && wait_for 30 log_has "keeping the 1 policy in use" && sleep 0.5 && frac_is "$want"; then
	tap_ok "SIGHUP with a broken policy keeps the old set and names file:line:column"
else
	tap_fail "bad reload" "$(cat "$tmp/log")"
fi
rm -f "$live/60-broken.yaml" "$live"/*.yaml; cp "$thousand"/*.yaml "$live"/
kill -HUP "$daemon_pid"
if wait_for 30 frac_is 1000; then tap_ok "SIGHUP with a good set applies it (fraction 1000)"; else
	tap_fail "good reload" "fraction $(frac)" "$(cat "$tmp/log")"; fi
stop_daemon TERM
frac_is 0 && tap_ok "stop after reload restores 0" || tap_fail "stop after reload" "fraction $(frac)"

# --- policy files must be root-owned and not group/other-writable.
chmod 0666 "$live"/*.yaml
out=$("$PCPTUNED" --dry-run --once --root "$tmp/root" --policy-dir "$live" 2>&1); rc=$?
if [ $rc -ne 0 ] && printf '%s' "$out" | grep -q "writable by group or others"; then
	tap_ok "a world-writable policy file is refused"
else
	tap_fail "writable policy refused" "rc=$rc" "$out"
fi
chmod 0644 "$live"/*.yaml

# --- pcptunectl restore by hand.
: >"$tmp/log"
start_daemon "$minimum"; wait_for 50 frac_is "$want"; stop_daemon KILL
out=$("$PCPTUNECTL" --root "$tmp/root" --state-dir "$tmp/state" restore 2>&1); rc=$?
if [ $rc -eq 0 ] && frac_is 0 && no_journal "$tmp/state"; then
	tap_ok "pcptunectl restore puts the journal back by hand"
else
	tap_fail "pcptunectl restore" "rc=$rc fraction $(frac)" "$out"
fi

# --- a kernel with pcptune's contrib patches (declared in the tree): -1 and vm.pcp_batch_scale_max.
contrib=$(policy_dir contrib)
set_root 6.18.44-fc-live-smp2-24G
mkdir -p "$tmp/root/.pcptune"; echo 1 >"$tmp/root/.pcptune/fraction-floor"; echo 5 >"$tmp/root/proc/sys/vm/pcp_batch_scale_max"
: >"$tmp/log"
start_daemon "$contrib"
scale_is() { [ "$(cat "$tmp/root/proc/sys/vm/pcp_batch_scale_max")" = "$1" ]; }
if wait_for 50 frac_is -1 && wait_for 20 scale_is 2; then
	tap_ok "contrib kernel: minimum writes -1, batch_scale_max 2 is set"
else
	tap_fail "contrib kernel" "fraction $(frac), scale $(cat "$tmp/root/proc/sys/vm/pcp_batch_scale_max")" "$(cat "$tmp/log")"
fi
grep -q '"name": "vm.pcp_batch_scale_max"' "$tmp/state/$(journal_name "$tmp/root")" && tap_ok "both knobs are journaled" || tap_fail "journal" "$(cat "$tmp/state/$(journal_name "$tmp/root")")"
# Later samples read -1 back as the knob at its floor (a kernel holding -1 still has the knob).
sleep 1
if ! log_has "has no pcp sysctl" && frac_is -1 && grep -q '"value": -1' "$(status_file)"; then
	tap_ok "samples after the write still see the knob, at -1"
else
	tap_fail "knob at -1" "fraction $(frac)" "$(cat "$tmp/log")"
fi
# Status shows every knob of the table: vm.pcp_batch_scale_max with who manages it and its last change, in
# the daemon's status file and in `pcptunectl status` (text and JSON, read back from that file).
"$PCPTUNECTL" --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$contrib" --no-owner-check status >"$tmp/st" 2>&1
"$PCPTUNECTL" --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$contrib" --no-owner-check status --json >"$tmp/st.json" 2>/dev/null
scale_json='import json, sys
for f in sys.argv[1:]:
    k = [k for k in json.load(open(f))["knobs"] if k["name"] == "vm.pcp_batch_scale_max"]
    assert len(k) == 1 and k[0]["value"] == 2 and k[0]["managed"] and k[0]["original"] == 5, (f, k)
    assert k[0]["state"] == "managed" and k[0]["last_change"].startswith("5 -> 2 (policy "), (f, k)'
if grep -q '^vm.pcp_batch_scale_max = 2 (managed by pcptuned, original 5)$' "$tmp/st" &&
	grep -A1 '^vm.pcp_batch_scale_max = ' "$tmp/st" | grep -q '^  last change: 5 -> 2 (policy ' &&
	grep -q '^  manages vm.pcp_batch_scale_max: original 5, written 2$' "$tmp/st" &&
	python3 -c "$scale_json" "$(status_file)" "$tmp/st.json"; then
	tap_ok "status shows vm.pcp_batch_scale_max: value, managed, original, last change (text, JSON, status file)"
else
	tap_fail "batch_scale_max in status" "$(cat "$tmp/st")" "$(python3 -c "$scale_json" "$(status_file)" "$tmp/st.json" 2>&1 | tail -3)"
fi
stop_daemon TERM
if frac_is 0 && scale_is 5; then tap_ok "stop restores both (0 and 5)"; else tap_fail "contrib restore" "fraction $(frac)"; fi
# Without the patch (no marker, no file): the computed minimum, and a warning for batch_scale_max.
rm -f "$tmp/root/.pcptune/fraction-floor" "$tmp/root/proc/sys/vm/pcp_batch_scale_max"; : >"$tmp/log"
start_daemon "$contrib"
if wait_for 50 frac_is "$want" && wait_for 20 log_has "pcp.batch_scale_max needs vm.pcp_batch_scale_max"; then
	tap_ok "stock kernel: the computed minimum, and batch_scale_max says it needs the patch"
else
	tap_fail "stock kernel contrib policy" "fraction $(frac)" "$(cat "$tmp/log")"
fi
stop_daemon TERM

# --- percpu-depopulate on a tree with the contrib patch's /sys/kernel/mm/percpu (fake counters).
depop=$(policy_dir depopulate)
set_root 6.18.44-fc-live-smp2-24G
pc=$tmp/root/sys/kernel/mm/percpu; mkdir -p "$pc"
for kv in nr_chunks=6 nr_empty_chunks=1 nr_to_depopulate=0 nr_sidelined=0 nr_populated_pages=900 \
	nr_empty_pop_pages=300 nr_used_pop_pages=600 frag_free_bytes=123456 nr_units=2 unit_pages=64 empty_pop_pages_high=4; do
	echo "${kv#*=}" >"$pc/${kv%%=*}"
done
: >"$pc/depopulate"
out=$("$PCPTUNED" --dry-run --once --verbose --root "$tmp/root" --policy-dir "$depop" 2>&1)
if printf '%s' "$out" | grep -q "would write /sys/kernel/mm/percpu/depopulate: 300 empty populated pages per unit, 296 beyond the 4" &&
	[ ! -s "$pc/depopulate" ] && printf '%s' "$out" | grep -q "contrib 0003, /sys/kernel/mm/percpu: yes"; then
	tap_ok "dry-run: percpu-depopulate says what it would give back and writes nothing"
else
	tap_fail "depopulate dry-run" "$out"
fi
out=$("$PCPTUNED" --once --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$depop" 2>&1)
if [ "$(cat "$pc/depopulate")" = 1 ] && printf '%s' "$out" | grep -q "percpu-depopulate in"; then
	tap_ok "percpu-depopulate writes the trigger and logs before and after"
else
	tap_fail "depopulate" "$out"
fi
rm -rf "$pc"
out=$("$PCPTUNED" --once --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$depop" 2>&1)
printf '%s' "$out" | grep -q "percpu.empty_populated, which is unavailable here (no /sys/kernel/mm/percpu" &&
	tap_ok "without the patch the rule says its metric is unavailable" || tap_fail "no patch" "$out"

# --- dying memcg reparenting (probe-kernel.c): where the kernel reparents LRU folios at offline,
# reclaim-dying still runs (files written through cgroup writeback keep removed memcgs dying: Debian
# 7.2.13 on ext4, tests/vm/reparent-vm) and says once what is left for it.
reparent=$(policy_dir reparent)
set_root 6.18.44-fc-live-smp2-24G
cg=$tmp/root/sys/fs/cgroup; mkdir -p "$cg/pods/c1"
echo "cpu memory pids" >"$cg/cgroup.controllers"
printf 'nr_descendants 2\nnr_dying_descendants 40\n' >"$cg/cgroup.stat"
printf 'nr_descendants 1\nnr_dying_descendants 40\n' >"$cg/pods/cgroup.stat"
printf 'nr_descendants 0\nnr_dying_descendants 0\n' >"$cg/pods/c1/cgroup.stat"
: >"$cg/pods/memory.reclaim"
out=$("$PCPTUNED" --dry-run --once --verbose --root "$tmp/root" --policy-dir "$reparent" 2>&1)
if printf '%s' "$out" | grep -q "dying memcg reparenting: no - by kernel version 6.18.44" &&
	printf '%s' "$out" | grep -q "looking for subtrees holding dying memcgs" &&
	! printf '%s' "$out" | grep -q "stays inactive"; then
	tap_ok "6.18: no reparenting, reclaim-dying looks for subtrees"
else
	tap_fail "reparenting no" "$out"
fi
mkdir -p "$tmp/root/.pcptune"; echo 1 >"$tmp/root/.pcptune/dying-memcg-reparenting"
out=$("$PCPTUNED" --dry-run --once --verbose --root "$tmp/root" --policy-dir "$reparent" 2>&1)
if printf '%s' "$out" | grep -q "dying memcg reparenting: yes - declared by the root tree" &&
	printf '%s' "$out" | grep -q "this kernel reparents LRU folios when a memcg goes offline; reclaim-dying still frees" &&
	printf '%s' "$out" | grep -q "looking for subtrees holding dying memcgs"; then
	tap_ok "reparenting kernel: reclaim-dying still looks for subtrees and says what is left for it"
else
	tap_fail "reparenting yes" "$out"
fi
json=$("$PCPTUNECTL" --root "$tmp/root" --no-owner-check --policy-dir "$reparent" status --json 2>/dev/null)
if printf '%s' "$json" | grep -q '"label": "dying memcg reparenting"' &&
	printf '%s' "$json" | grep -A1 '"label": "dying memcg reparenting"' | grep -q '"answer": "yes"'; then
	tap_ok "status --json: the probe row with its answer"
else
	tap_fail "status json probes" "$json"
fi
# Without --verbose the probes are one line each (name, answer, reason) naming no test script nor
# patch number; --verbose gives the evidence (the same rows as --json).
text=$("$PCPTUNECTL" --root "$tmp/root" --no-owner-check --policy-dir "$reparent" status 2>/dev/null)
verbose=$("$PCPTUNECTL" --root "$tmp/root" --no-owner-check --policy-dir "$reparent" status --verbose 2>/dev/null)
block=$(printf '%s\n' "$text" | sed -n '/^kernel probes/,/^$/p' | sed '1d;/^$/d')
rows=$(printf '%s' "$json" | grep -c '"label":')
if [ "$(printf '%s\n' "$block" | wc -l)" = "$rows" ] && [ "$rows" -ge 8 ] &&
	printf '%s\n' "$block" | grep -qE '^  dying memcg reparenting +yes +page cache does not pin removed memcgs$' &&
	! printf '%s\n' "$block" | grep -qE 'tests/|contrib 0|.{81}' &&
	printf '%s\n' "$verbose" | grep -q "dying memcg reparenting: yes - declared by the root tree" &&
	printf '%s\n' "$verbose" | grep -q "tests/live/live-reparent.sh"; then
	tap_ok "status: one line per probe ($rows), the evidence with --verbose"
else
	tap_fail "status probes text" "$block" "$verbose"
fi

# --- kernels before 5.14: vm.percpu_pagelist_fraction is only read.
set_root 6.1.0-57-amd64-smp2-1G
mv "$tmp/root/proc/sys/vm/percpu_pagelist_high_fraction" "$tmp/root/proc/sys/vm/percpu_pagelist_fraction"
echo 5.10.0-30-amd64 >"$tmp/root/proc/sys/kernel/osrelease"
out=$("$PCPTUNED" --once --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$minimum" 2>&1); rc=$?
if [ $rc -eq 0 ] && [ "$(cat "$tmp/root/proc/sys/vm/percpu_pagelist_fraction")" = 0 ] &&
	printf '%s' "$out" | grep -q "kernels before 5.14 give it another meaning"; then
	tap_ok "5.10: percpu_pagelist_fraction is read-only, with a clear message"
else
	tap_fail "legacy kernel" "rc=$rc" "$out"
fi

tap_done
