#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Prometheus rules and the Grafana dashboard (contrib/prometheus,
# contrib/grafana; docs/health.md): `promtool check rules`, `promtool test
# rules` on contrib/prometheus/tests/*.yml, and the same tests fail on a
# rule made wrong on purpose; the dashboard is JSON with a PromQL expression
# in every panel, each of which promtool parses; every family the rules and
# the dashboard name is in contrib/prometheus/families.txt and every one
# listed there is named; each
# node_ family of the list is served by prometheus-node-exporter (run for a
# moment on a loopback port), each pcptune family is exported by pcptuned
# (--list-metrics), and the families docs/health.md drops are not.  Prints
# TAP.  Fast.
#
# DROPPED: the families docs/health.md drops (node_exporter has them) or
# renames; pcptuned must not export them.  (While the daemon half of issue
# 22 was pending, its families were TAP TODO here; pcptuned exports them now.)
. "$(dirname "$0")/tap.sh"

PENDING_NEW=""
DROPPED="pcptune_psi_memory_stall_ratio pcptune_psi_memory_stall_seconds_total pcptune_percpu_bytes
pcptune_reclaim_last_refault_rate_max"
PENDING_DROP=""
PENDING_TYPE=""

command -v promtool >/dev/null || tap_skip_all "promtool not installed (Debian's prometheus, build-aux/debian-packages-test)"
command -v python3 >/dev/null || tap_skip_all "python3 not installed"
pdir=$top_srcdir/contrib/prometheus
rules=$pdir/pcptune.rules.yml
dash=$top_srcdir/contrib/grafana/pcptune.json
tmp=$(mktemp -d /tmp/pcptune-prom-rules.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

out=$(promtool check rules "$rules" 2>&1) && tap_ok "promtool check rules: $(printf '%s' "$out" | grep -o '[0-9]* rules found')" ||
	tap_fail "promtool check rules" "$out"
tests=$(ls "$pdir"/tests/*.yml 2>/dev/null)
n_tests=$(cat $tests | grep -c '^  - interval:')
out=$(cd "$pdir/tests" && promtool test rules $(basename -a $tests) 2>&1) &&
	tap_ok "promtool test rules: $n_tests tests in $(echo $tests | wc -w) file(s) pass" || tap_fail "promtool test rules" "$out"

# The tests can fail: each mutation of a rule (a threshold, a selector, a
# "for") must make them fail.  One promtool run for all of them: a copy of
# the tests beside each mutated rule file.
mutations=(
	"staleness limit 300 -> 600 s|s/pcptune_last_sample_timestamp_seconds > 300$/pcptune_last_sample_timestamp_seconds > 600/"
	"PcptuneDown without the disabled-node selector|s/, pcptune_disabled!=\"true\"//"
	"reload alert on success|s/pcptune_config_last_reload_successful == 0/pcptune_config_last_reload_successful == 1/"
	"bulk-free p90 instead of p99|s/histogram_quantile(0.99,/histogram_quantile(0.90,/"
	"bulk-free alert without the 20-hold minimum|s/ >= 20$/ >= 0/"
	"crash restore on state done|s/state=\"pending\"} == 1/state=\"done\"} == 1/"
)
files=()
for i in "${!mutations[@]}"; do
	m=$tmp/m$i
	mkdir -p "$m/tests"
	cp "$pdir"/tests/*.yml "$m/tests/"
	sed -e "${mutations[$i]#*|}" "$rules" >"$m/pcptune.rules.yml"
	files+=("$m"/tests/*.yml)
done
promtool test rules "${files[@]}" >"$tmp/mutations.out" 2>&1
for i in "${!mutations[@]}"; do
	name=${mutations[$i]%%|*}
	# promtool prints "Unit Testing:  FILE" then SUCCESS or FAILED for it.
	verdict=$(awk -v f="$tmp/m$i/tests/" 'index($0, "Unit Testing:") { cur = index($0, f) > 0; next }
		cur && /^ *(SUCCESS|FAILED)/ { print $1; exit }' "$tmp/mutations.out")
	if cmp -s "$rules" "$tmp/m$i/pcptune.rules.yml"; then
		tap_fail "mutation '$name' changed nothing (the rule file changed: update the test)"
	elif [ "$verdict" = "FAILED:" ] || [ "$verdict" = FAILED ]; then
		tap_ok "the tests fail with the rules' $name"
	else
		tap_fail "the tests do not fail with the rules' $name (promtool: ${verdict:-no verdict})"
	fi
done

# --- The dashboard and the families the rules and it name.
python3 - "$rules" "$dash" "$pdir/families.txt" "$tmp/dashboard.rules.yml" >"$tmp/families.out" 2>&1 <<'EOF'
import json, re, sys
import yaml
rules_path, dash_path, fam_path = sys.argv[1:4]
KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left",
            "group_right", "inf", "nan", "Inf", "NaN"}

def names(expr):
    """Metric names in a PromQL expression: identifiers that are not functions,
    keywords, label names or values, durations, numbers or Grafana variables."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '""', expr)  # strings
    e = re.sub(r"\{[^}]*\}", " ", e)                                     # label matchers
    e = re.sub(r"\[[^\]]*\]", " ", e)                                    # ranges
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\$\{[^}]*\}|\$\w+", " ", e)                             # Grafana variables
    e = re.sub(r"\b\d+(\.\d+)?([eE][-+]?\d+)?\b", " ", e)                # numbers
    out = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        rest = e[m.end():].lstrip()
        if rest.startswith("(") or m.group(0) in KEYWORDS:
            continue
        out.add(m.group(0))
    return out

used = {}
doc = yaml.safe_load(open(rules_path))
for g in doc["groups"]:
    for r in g["rules"]:
        for n in names(r["expr"]):
            used.setdefault(n, set()).add("rule " + r.get("alert", r.get("record", "?")))
try:
    d = json.load(open(dash_path))
    print("dashboard parses: %s, %d panels" % (d.get("title"), len(d.get("panels", []))))
except ValueError as err:
    print("dashboard: not JSON: %s" % err)
    sys.exit(0)
bad_panels = []
for p in d.get("panels", []):
    if p.get("type") == "row":
        continue
    exprs = [t.get("expr") for t in p.get("targets", [])]
    if not exprs or not all(exprs):
        bad_panels.append(p.get("title"))
    for e in exprs:
        for n in names(e or ""):
            used.setdefault(n, set()).add("panel " + p.get("title", "?"))
for v in d.get("templating", {}).get("list", []):
    q = v.get("query")
    q = q.get("query") if isinstance(q, dict) else q
    m = re.match(r"label_values\((\w+)\s*,", q or "")
    if m:
        used.setdefault(m.group(1), set()).add("variable " + v["name"])
print("panels without an expression: %s" % (", ".join(map(str, bad_panels)) or "none"))
# Every panel expression as a recording rule, Grafana's variables replaced,
# for promtool to parse.
recs = []
for p in d.get("panels", []):
    for t in p.get("targets", []):
        e = (t.get("expr") or "").replace("$__rate_interval", "5m").replace("$instance", ".*")
        recs.append({"record": "dashboard:panel%s:%s" % (p.get("id"), t.get("refId", "A")), "expr": e})
with open(sys.argv[4], "w") as f:
    yaml.safe_dump({"groups": [{"name": "dashboard", "rules": recs}]}, f)
ids = [p.get("id") for p in d.get("panels", [])]
print("panel ids unique: %s" % ("yes" if len(ids) == len(set(ids)) else "no"))
fams = [l.strip() for l in open(fam_path) if l.strip() and not l.startswith("#")]
def family(n):
    for suf in ("_bucket", "_sum", "_count"):
        if n.endswith(suf) and n[: -len(suf)] in fams:
            return n[: -len(suf)]
    return n
fused = {}
for n, where in used.items():
    fused.setdefault(family(n), set()).update(where)
for n in sorted(fused):
    print("used %s %s" % (n, "; ".join(sorted(fused[n]))))
for n in fams:
    print("listed %s" % n)
print("sorted: %s" % ("yes" if fams == sorted(fams) else "no"))
EOF
if grep -q '^dashboard parses' "$tmp/families.out"; then
	tap_ok "contrib/grafana/pcptune.json $(sed -n 's/^dashboard //p' "$tmp/families.out")"
else
	tap_fail "the dashboard" "$(cat "$tmp/families.out")"
fi
grep -qx 'panels without an expression: none' "$tmp/families.out" && tap_ok "every panel has a PromQL expression" ||
	tap_fail "panels without an expression" "$(grep '^panels without' "$tmp/families.out")"
out=$(promtool check rules "$tmp/dashboard.rules.yml" 2>&1) &&
	tap_ok "promtool parses every panel's expression ($(printf '%s' "$out" | grep -o '[0-9]* rules found'))" ||
	tap_fail "a panel expression does not parse" "$out"
grep -qx 'panel ids unique: yes' "$tmp/families.out" && tap_ok "panel ids are unique" || tap_fail "duplicate panel ids"
used=$(sed -n 's/^used \([^ ]*\) .*/\1/p' "$tmp/families.out")
listed=$(sed -n 's/^listed //p' "$tmp/families.out")
unlisted=$(comm -23 <(printf '%s\n' "$used" | sort) <(printf '%s\n' "$listed" | sort))
[ -n "$used" ] && [ -z "$unlisted" ] && tap_ok "the $(printf '%s\n' "$used" | wc -l) families the rules and the dashboard name are in families.txt" ||
	tap_fail "names used but not in families.txt" "$(printf '%s\n' "$unlisted" | while read -r n; do grep "^used $n " "$tmp/families.out"; done)"
unused=$(comm -13 <(printf '%s\n' "$used" | sort) <(printf '%s\n' "$listed" | sort))
[ -z "$unused" ] && tap_ok "every family of families.txt is named by a rule or a panel" || tap_fail "listed, never used" "$unused"
grep -qx 'sorted: yes' "$tmp/families.out" && tap_ok "families.txt is sorted" || tap_fail "families.txt is not sorted"
other=$(printf '%s\n' "$listed" | grep -v -e '^pcptune_' -e '^node_')
[ -z "$other" ] && tap_ok "families.txt holds only pcptune_ and node_exporter (node_) families" || tap_fail "foreign families" "$other"

# --- node_exporter's families of the list: served by this machine's
# prometheus-node-exporter (textfile, meminfo, pressure and uname collectors
# only, on a loopback port, stopped at once).
ne=$(command -v prometheus-node-exporter || command -v node_exporter)
if [ -n "$ne" ] && command -v curl >/dev/null; then
	mkdir -p "$tmp/textfile"
	printf '# HELP pcptune_samples_total samples taken\n# TYPE pcptune_samples_total counter\npcptune_samples_total 1\n' \
		>"$tmp/textfile/pcptune.prom"
	served=""
	for try in 1 2 3; do
		port=$((20000 + RANDOM % 20000))
		"$ne" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults --collector.textfile \
			--collector.textfile.directory="$tmp/textfile" --collector.meminfo --collector.pressure \
			--collector.uname >"$tmp/ne.log" 2>&1 &
		ne_pid=$!
		trap 'kill "$ne_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
		wait_for 50 curl -sf -o "$tmp/ne.out" "http://127.0.0.1:$port/metrics" && served=1
		kill "$ne_pid" 2>/dev/null; wait "$ne_pid" 2>/dev/null
		[ -n "$served" ] && break
	done
	if [ -n "$served" ]; then
		for f in $(printf '%s\n' "$listed" | grep '^node_'); do
			if grep -Eq "^$f[{ ]" "$tmp/ne.out"; then
				tap_ok "$("$ne" --version 2>&1 | head -n 1 | cut -d' ' -f1-3) serves $f"
			elif [ "${f#node_pressure_}" != "$f" ] && [ ! -r /proc/pressure/memory ]; then
				echo "ok $((++tap_n)) - # SKIP $f: this kernel has no PSI"
			else
				tap_fail "node_exporter does not serve $f" "$(grep -c . "$tmp/ne.out") lines served"
			fi
		done
	else
		tap_fail "prometheus-node-exporter did not serve on a loopback port" "$(tail -n 5 "$tmp/ne.log")"
	fi
else
	echo "ok $((++tap_n)) - # SKIP prometheus-node-exporter or curl not installed: node_ families not checked"
fi

# --- pcptune's families against what pcptuned exports.
if [ -x "$PCPTUNED" ]; then
	"$PCPTUNED" --list-metrics | awk -F'\t' '{ print $1, $2 }' >"$tmp/exported"
	for f in $(printf '%s\n' "$listed" | grep '^pcptune_'); do
		todo=""
		case " $(echo $PENDING_NEW $PENDING_TYPE) " in *" $f "*) todo=" # TODO daemon half of issue 22 (docs/health.md)" ;; esac
		if grep -q "^$f " "$tmp/exported"; then
			type=$(sed -n "s/^$f //p" "$tmp/exported")
			if [ "$f" = pcptune_pcp_bulk_free_hold_seconds ] && [ "$type" != histogram ]; then
				echo "not ok $((++tap_n)) - pcptuned exports $f as a histogram (now: $type)$todo"
				[ -z "$todo" ] && tap_failed=$((tap_failed + 1))
			else
				echo "ok $((++tap_n)) - pcptuned exports $f ($type)$todo"
			fi
		else
			echo "not ok $((++tap_n)) - pcptuned exports $f$todo"
			[ -z "$todo" ] && tap_failed=$((tap_failed + 1))
		fi
	done
	for f in $DROPPED; do
		todo=""
		case " $(echo $PENDING_DROP) " in *" $f "*) todo=" # TODO daemon half of issue 22 (docs/health.md)" ;; esac
		if grep -q "^$f " "$tmp/exported"; then
			echo "not ok $((++tap_n)) - pcptuned no longer exports $f$todo"
			[ -z "$todo" ] && tap_failed=$((tap_failed + 1))
		else
			echo "ok $((++tap_n)) - pcptuned no longer exports $f$todo"
		fi
	done
else
	echo "ok $((++tap_n)) - # SKIP pcptuned not built ($PCPTUNED): families not compared with --list-metrics"
fi
tap_done
