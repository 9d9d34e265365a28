#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every key pcptunectl(8) documents under JSON OUTPUT is present in the document it is documented for:
# status --json (with and without a daemon), the daemon's status file, pcptuned --once --json, plan --json
# on a snapshot and on a directory of snapshots.  Also: no "\/" in any of them.  Prints TAP.
. "$(dirname "$0")/tap.sh"

tmp=$(mktemp -d /tmp/pcptune-json-keys.XXXXXX)
daemon_pid=""
cleanup() {
	[ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
root=$FIXTURES/6.18.44-fc-live-smp2-24G/root
man=$top_srcdir/man/pcptunectl.8

# The documented keys, per .SS of JSON OUTPUT: "title<TAB>key" lines.
awk '/^\.SH / { in_json = ($0 ~ /^\.SH JSON OUTPUT/) } in_json && /^\.SS / { t = $0; sub(/^\.SS "?/, "", t); sub(/"$/, "", t) }
     in_json && prev == ".TP" && /^\.B / { k = $0; sub(/^\.B /, "", k); print t "\t" k } { prev = $0 }' "$man" >"$tmp/keys"
[ "$(wc -l <"$tmp/keys")" -ge 40 ] && tap_ok "pcptunectl(8) documents the JSON keys ($(wc -l <"$tmp/keys"))" ||
	tap_fail "documented keys" "$(cat "$tmp/keys")"

check_doc() { # name section json-file [key prefix to leave out]
	name=$1 section=$2 file=$3 skip=${4:-}
	if grep -q '\\/' "$file"; then tap_fail "$name: slashes are not escaped" "$(grep -m3 '\\/' "$file")"; else tap_ok "$name: slashes are not escaped"; fi
	missing=$(awk -F'\t' -v s="$section" -v skip="$skip" '$1 == s && (skip == "" || index($2, skip) != 1) { print $2 }' "$tmp/keys" | python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
def has(o, path):
    if not path:
        return True
    head, _, rest = path.partition(".")
    if head.endswith("[]"):
        l = o.get(head[:-2]) if isinstance(o, dict) else None
        return isinstance(l, list) and len(l) > 0 and all(has(e, rest) for e in l)
    return isinstance(o, dict) and head in o and (not rest or has(o[head], rest))
keys = [l.strip() for l in sys.stdin if l.strip()]
if not keys:
    print("(no keys documented)")
for k in keys:
    if not has(doc, k):
        print(k)
' "$file" 2>&1)
	[ -z "$missing" ] && tap_ok "$name: every documented key is present" || tap_fail "$name: documented keys missing" "$missing"
}

pol=$(policy_copy "$top_srcdir/policies" "$tmp/shipped") # as the owner check wants it (tap.sh)
"$PCPTUNECTL" --root "$root" --state-dir "$tmp/nostate" --policy-dir "$pol" --no-owner-check status --json >"$tmp/status.json" 2>"$tmp/err"
check_doc "status --json" 'status \-\-json' "$tmp/status.json"
# decision.reason says what the text's decision line says.
text_reason=$("$PCPTUNECTL" --root "$root" --state-dir "$tmp/nostate" --policy-dir "$pol" --no-owner-check status 2>/dev/null |
	sed -n 's/^decision: //p')
json_reason=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["decision"]["reason"])' "$tmp/status.json")
[ -n "$text_reason" ] && [ "$text_reason" = "$json_reason" ] && tap_ok "decision.reason is the text's decision line" ||
	tap_fail "decision.reason" "text: $text_reason" "json: $json_reason"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not (d["schema_version"] == 1 and
    list(d)[0] == "schema_version" and d["memory"]["slab_bytes"] > 0))' "$tmp/status.json" &&
	tap_ok "status --json: schema_version 1 first, the slab figure" || tap_fail "schema_version/slab" "$(head -5 "$tmp/status.json")"

"$PCPTUNED" --once --dry-run --json --root "$root" --policy-dir "$pol" >"$tmp/once.json" 2>/dev/null
check_doc "pcptuned --once --json" 'status \-\-json' "$tmp/once.json" daemon.

"$PCPTUNECTL" plan --root "$root" --json >"$tmp/plan.json" 2>/dev/null
check_doc "plan --json" 'plan \-\-json' "$tmp/plan.json"
mkdir -p "$tmp/fleet"; ln -s "$root" "$tmp/fleet/a"; ln -s "$FIXTURES/6.1.0-57-amd64-smp8-4G/root" "$tmp/fleet/b"
"$PCPTUNECTL" plan --root "$tmp/fleet" --json >"$tmp/fleet.json" 2>/dev/null
check_doc "plan --json on a directory of snapshots" 'plan \-\-json on a directory of snapshots' "$tmp/fleet.json"

# The daemon's status file and status --json beside a running daemon (a copy of the fixture: writes land there).
if [ "$(id -u)" = 0 ]; then
	cp -r "$root" "$tmp/root"; chmod -R u+w "$tmp/root"
	mkdir "$tmp/policies"; cp "$top_srcdir/tests/policies/minimum/50-minimum.yaml" "$tmp/policies/"; chmod 0644 "$tmp/policies"/*
	"$PCPTUNED" --root "$tmp/root" --state-dir "$tmp/state" --policy-dir "$tmp/policies" --interval 200ms >"$tmp/log" 2>&1 &
	daemon_pid=$!
	sf="$tmp/state/$(status_name "$tmp/root")"
	if wait_for 50 test -s "$sf"; then
		cp "$sf" "$tmp/file.json"
		check_doc "the daemon's status file" "the daemon's status file" "$tmp/file.json"
		"$PCPTUNECTL" --root "$tmp/root" --state-dir "$tmp/state" status --json >"$tmp/status2.json" 2>/dev/null
		check_doc "status --json beside the daemon" 'status \-\-json' "$tmp/status2.json"
	else
		tap_fail "the daemon writes its status file" "$(cat "$tmp/log")"
	fi
	kill -TERM "$daemon_pid"; wait "$daemon_pid"; daemon_pid=""
fi
tap_done
