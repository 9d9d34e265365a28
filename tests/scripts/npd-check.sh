#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The node-problem-detector plugin's check
# (contrib/kubernetes/node-problem-detector/pcptune-check.sh) on fake state
# directories, under busybox sh (what NPD's container has) and dash (a
# strict POSIX sh): each case's exit code and reason are the verdict rules of
# docs/health.md.  Also: the plugin config is what NPD accepts (plugin
# "custom", every permanent rule's condition has a default, the rule's
# timeout is within the global one, the rule runs the script at the path the
# DaemonSet patch mounts it).  Prints TAP.  Fast (no daemon).
. "$(dirname "$0")/tap.sh"

npd=$top_srcdir/contrib/kubernetes/node-problem-detector
script=$npd/pcptune-check.sh
shells=()
command -v busybox >/dev/null && shells+=("busybox sh") || echo "# busybox not installed (build-aux/debian-packages-test): its cases are skipped"
command -v dash >/dev/null && shells+=("dash")
[ ${#shells[@]} -gt 0 ] || tap_skip_all "neither busybox nor dash"
tmp=$(mktemp -d /tmp/pcptune-npd.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
now=1796176800

# health DIR VERDICT REASON AGE [INTERVAL] [HELD] [DRY_RUN]: a health file written AGE s before $now.
health() {
	mkdir -p "$1"
	printf 'PCPTUNE_HEALTH=1\nVERDICT=%s\nREASON=%s\nUPDATED=%s\nINTERVAL=%s\nHELD=%s\nDRY_RUN=%s\nPID=4242\n' \
		"$2" "$3" $((now - $4)) "${5:-10}" "${6:-0}" "${7:-0}" >"$1/health"
}
journal() { mkdir -p "$1"; echo '{"version":1,"knobs":[]}' >"$1/restore.json"; }

# case NAME WANT_RC WANT_REGEX DIR...: run the check under every shell.
case_() {
	local name=$1 want=$2 re=$3 sh out rc
	shift 3
	for sh in "${shells[@]}"; do
		out=$(PCPTUNE_CHECK_NOW=$now $sh "$script" "$@" 2>&1); rc=$?
		if [ "$rc" = "$want" ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && printf '%s' "$out" | grep -Eq -- "$re"; then
			tap_ok "$sh: $name -> $rc: $out"
		else
			tap_fail "$sh: $name: want $want and /$re/ on one line" "got $rc: $out"
		fi
	done
}

d=$tmp/healthy; health "$d" ok sampling 5 10 1 0
case_ "healthy (fresh, VERDICT=ok, a value held)" 0 '^ok: sampling, 1 value\(s\) held$' "$d"
d=$tmp/canary; health "$d" ok "dry run" 3 10 0 1
case_ "healthy dry-run canary" 0 '^ok: dry run, 0 value\(s\) held \(dry run\)$' "$d"
d=$tmp/crash; health "$d" problem "crash restore pending" 5 10 1 0; journal "$d"
case_ "crash restore pending" 1 '^crash restore pending$' "$d"
d=$tmp/reload; health "$d" problem "last policy reload failed" 5
case_ "last reload failed" 1 '^last policy reload failed$' "$d"
d=$tmp/stale-held; health "$d" ok sampling 200 10 1 0; journal "$d"
case_ "stale health + journal (3 x 10 + 60 = 90 s limit, 200 s old)" 1 'values held in restore.json; pcptuned not sampling: health 200 s old \(limit 90 s\)' "$d"
d=$tmp/stale; health "$d" ok sampling 91 10
case_ "stale health, no journal: 91 s > 90 s" 1 'pcptuned not sampling: health 91 s old \(limit 90 s\)' "$d"
d=$tmp/edge; health "$d" ok sampling 90 10
case_ "health exactly at the limit (90 s) is fresh" 0 '^ok: sampling' "$d"
d=$tmp/slow; health "$d" ok sampling 200 60
case_ "a 60 s interval: 200 s is fresh (limit 240 s)" 0 '^ok: sampling' "$d"
d=$tmp/orphan; journal "$d"
case_ "journal, no health file: values held with no pcptuned" 1 '^values held in restore.json with no pcptuned running$' "$d"
d=$tmp/empty-dir; mkdir -p "$d"
case_ "state directory, no health, no journal" 0 '^pcptuned not running, no values held$' "$d"
case_ "nothing installed (no state directory)" 0 '^pcptune not installed$' "$tmp/none"

garbage() { # NAME CONTENT
	local d=$tmp/garbage-$((++g))
	mkdir -p "$d"; printf "$2" >"$d/health"
	case_ "garbled: $1" 2 '^unknown: ' "$d"
}
g=0
garbage "binary noise" '\001\002\377\376 garbage\n'
garbage "empty file" ''
garbage "no version line" "VERDICT=ok\nUPDATED=$now\nINTERVAL=10\n"
garbage "version 2" "PCPTUNE_HEALTH=2\nVERDICT=ok\nUPDATED=$now\nINTERVAL=10\n"
garbage "unknown verdict" "PCPTUNE_HEALTH=1\nVERDICT=fine\nUPDATED=$now\nINTERVAL=10\n"
garbage "no UPDATED" "PCPTUNE_HEALTH=1\nVERDICT=ok\nINTERVAL=10\n"
garbage "UPDATED not a number" "PCPTUNE_HEALTH=1\nVERDICT=ok\nUPDATED=\$(reboot)\nINTERVAL=10\n"
garbage "negative INTERVAL" "PCPTUNE_HEALTH=1\nVERDICT=ok\nUPDATED=$now\nINTERVAL=-5\n"
garbage "INTERVAL 0" "PCPTUNE_HEALTH=1\nVERDICT=ok\nUPDATED=$now\nINTERVAL=0\n"
garbage "a huge number" "PCPTUNE_HEALTH=1\nVERDICT=ok\nUPDATED=99999999999999999999\nINTERVAL=10\n"
garbage "quoted value" "PCPTUNE_HEALTH=1\nVERDICT=\"ok\"\nUPDATED=$now\nINTERVAL=10\n"
garbage "a line without =" "PCPTUNE_HEALTH=1\nVERDICT=ok\nUPDATED=$now\nINTERVAL=10\nhello\n"
garbage "from the future" "PCPTUNE_HEALTH=1\nVERDICT=ok\nUPDATED=$((now + 1000))\nINTERVAL=10\n"
d=$tmp/big; mkdir -p "$d"; { printf 'PCPTUNE_HEALTH=1\nVERDICT=ok\nUPDATED=%s\nINTERVAL=10\n' $now; head -c 5000 /dev/zero | tr '\0' x; echo; } >"$d/health"
case_ "garbled: larger than 4 KiB" 2 '^unknown: .*4 KiB' "$d"
d=$tmp/link; mkdir -p "$d"; health "$tmp/link-target" ok sampling 1; ln -s "$tmp/link-target/health" "$d/health"
case_ "a symlinked health file is not trusted" 2 '^unknown: .*regular file' "$d"
d=$tmp/dir; mkdir -p "$d/health"
case_ "a directory named health" 2 '^unknown: ' "$d"
# An unknown key is ignored (forward compatibility), a missing trailing newline read.
d=$tmp/newer; mkdir -p "$d"; printf 'PCPTUNE_HEALTH=1\nVERDICT=ok\nREASON=sampling\nUPDATED=%s\nINTERVAL=10\nFUTURE_KEY=x\nHELD=0' $now >"$d/health"
case_ "an unknown key and no final newline" 0 '^ok: sampling, 0 value\(s\) held$' "$d"

# Several directories: the worst wins, problem before unknown.
case_ "main healthy + canary crash pending: 1" 1 "crash: crash restore pending" "$tmp/healthy" "$tmp/crash"
case_ "unknown + problem: problem wins" 1 "orphan: values held" "$tmp/garbage-1" "$tmp/orphan"
case_ "unknown + ok: 2" 2 "garbage-1: unknown" "$tmp/healthy" "$tmp/garbage-1"
case_ "not installed + canary ok: the canary's line" 0 "canary: ok: dry run" "$tmp/none" "$tmp/canary"
# Without PCPTUNE_CHECK_NOW the real clock: a file written now is fresh.
d=$tmp/clock; now=$(date +%s) health "$d" ok sampling 0
for sh in "${shells[@]}"; do
	out=$($sh "$script" "$d"); rc=$?
	[ $rc = 0 ] && tap_ok "$sh: the real clock: fresh -> 0 ($out)" || tap_fail "$sh: real clock" "$rc $out"
done
# The default directory is /host/run/pcptune (the DaemonSet patch's mount).
grep -q '^\[ \$# -gt 0 \] || set -- /host/run/pcptune$' "$script" && tap_ok "default state directory /host/run/pcptune" ||
	tap_fail "the script's default directory"

# The same verdicts as `pcptunectl check` (docs/health.md: the rules are
# shared): each state directory above made again with the real clock, both
# asked, the exit codes and the lines compared; then the garbled files above
# whose verdict does not depend on the clock.
real=$(date +%s)
eq=$tmp/eq
mkdir -p "$eq"
now=$real health "$eq/healthy" ok sampling 5 10 1 0
now=$real health "$eq/canary" ok "dry run" 3 10 0 1
now=$real health "$eq/crash" problem "crash restore pending" 5 10 1 0; journal "$eq/crash"
now=$real health "$eq/reload" problem "last policy reload failed" 5
now=$real health "$eq/refused" problem "a knob write was refused: vm.percpu_pagelist_high_fraction (errno EINVAL)" 5
now=$real health "$eq/stale-held" ok sampling 200 10 1 0; journal "$eq/stale-held"
now=$real health "$eq/stale" ok sampling 500 10
now=$real health "$eq/future" ok sampling -1000 10
journal "$eq/orphan"
mkdir -p "$eq/empty-dir" "$eq/garbage"; printf 'nonsense\n' >"$eq/garbage/health"
dirs=""
for d in healthy canary crash reload refused stale-held stale future orphan empty-dir garbage none; do dirs="$dirs $eq/$d"; done
for i in $(seq 1 12); do dirs="$dirs $tmp/garbage-$i"; done
for d in $dirs $tmp/big $tmp/link $tmp/dir; do
	a=$("$PCPTUNECTL" --state-dir "$d" check 2>&1); ra=$?
	b=$(sh "$script" "$d" 2>&1); rb=$?
	[ "$ra:$a" = "$rb:$b" ] && tap_ok "pcptunectl check and the NPD check agree on ${d#$tmp/}: $ra: $a" ||
		tap_fail "pcptunectl check ($ra: $a) and the NPD check ($rb: $b) differ on ${d#$tmp/}"
done

# The plugin config: what NPD's custom plugin monitor checks when it loads it.
if command -v python3 >/dev/null; then
	out=$(python3 - "$npd" <<'EOF' 2>&1
import json, os, re, sys
npd = sys.argv[1]
cfg = json.load(open(os.path.join(npd, "pcptune-plugin.json")))
def dur(s):
    m = re.fullmatch(r"(\d+)(ms|s|m)", s)
    assert m, "duration %r" % s
    return int(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60}[m.group(2)]
errs = []
if cfg.get("plugin") != "custom": errs.append("plugin is not custom")
pc = cfg.get("pluginConfig", {})
gt = dur(pc.get("timeout", "5s"))
conds = {c["type"]: c for c in cfg.get("conditions", [])}
rules = cfg.get("rules", [])
if not rules: errs.append("no rule")
for r in rules:
    if r.get("type") not in ("permanent", "temporary"): errs.append("rule type %r" % r.get("type"))
    if r.get("type") == "permanent" and r.get("condition") not in conds: errs.append("condition %r has no default" % r.get("condition"))
    if "timeout" in r and dur(r["timeout"]) > gt: errs.append("rule timeout over the global one")
    if not r.get("reason"): errs.append("a rule without reason")
    print("rule %s %s %s" % (r.get("condition"), r.get("path"), " ".join(r.get("args", []))))
if "PcptuneProblem" not in conds: errs.append("no PcptuneProblem condition")
for c in conds.values():
    if not (c.get("reason") and c.get("message")): errs.append("condition %s without reason/message" % c["type"])
if pc.get("max_output_length", 80) < 120: errs.append("max_output_length < 120 cuts the reasons")
print("errors: " + "; ".join(errs) if errs else "errors: none")
EOF
)
	if printf '%s\n' "$out" | grep -qx 'errors: none'; then tap_ok "the plugin config is what NPD's custom plugin monitor accepts"
	else tap_fail "plugin config" "$out"; fi
	rule=$(printf '%s\n' "$out" | sed -n 's/^rule PcptuneProblem //p')
	path=${rule%% *}
	if grep -q "mountPath: $(dirname "$path")\$" "$npd/daemonset-patch.yaml" 2>/dev/null &&
		grep -q "$(basename "$path")" "$npd/daemonset-patch.yaml"; then
		tap_ok "the rule runs $path, where the DaemonSet patch mounts the script"
	else
		tap_fail "the rule's path $path is not mounted by daemonset-patch.yaml"
	fi
	for a in ${rule#* }; do
		grep -q "mountPath: $a\$" "$npd/daemonset-patch.yaml" && tap_ok "the rule's state directory $a is mounted" ||
			tap_fail "the rule's argument $a is not a mountPath of daemonset-patch.yaml"
	done
fi
tap_done
