#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The daemon's layers (build-aux/layout-daemon): no include cycle between
# modules, no include from a lower layer folder to a higher one, no folder of
# more than 30 .c files (tests/scripts/include-graph), and one caller of the
# policy evaluation, the cycle.  The checker is shown to fail on a copy of the
# tree with a cycle and with a climb put in.  Prints TAP.
. "$(dirname "$0")/tap.sh"

command -v python3 >/dev/null || tap_skip_all "python3 not installed"
graph=$top_srcdir/tests/scripts/include-graph
tmp=$(mktemp -d /tmp/pcptune-layers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

if out=$("$graph" "$top_srcdir" 2>&1); then
	tap_ok "include graph: $(printf '%s\n' "$out" | head -n 1)"
else
	tap_fail "include graph" "$out"
fi

# The checker fails where it must: a copy with the knob table including the snapshot (a cycle) ...
cp -r "$top_srcdir/daemon" "$tmp/daemon"
knob_h=$(ls "$tmp"/daemon/*/knob.h)
sed -i '0,/^#include "model-pcp.h"/s//#include "model-pcp.h"\n#include "snapshot.h"/' "$knob_h"
out=$("$graph" "$tmp" 2>&1) && tap_fail "a cycle is found" "$out" ||
	{ printf '%s\n' "$out" | grep -q "^cycle (.*knob.*snapshot" && tap_ok "a cycle put in (knob.h -> snapshot.h) is found" ||
		tap_fail "a cycle is found" "$out"; }
# ... and the actuator including the metrics exporter (a climb from act to output).
rm -rf "$tmp/daemon" && cp -r "$top_srcdir/daemon" "$tmp/daemon"
actuator_h=$(ls "$tmp"/daemon/*/actuator.h)
sed -i '0,/^#include "act-counters.h"/s//#include "act-counters.h"\n#include "export-prom.h"/' "$actuator_h"
out=$("$graph" "$tmp" 2>&1) && tap_fail "a climb is found" "$out" ||
	{ printf '%s\n' "$out" | grep -q "^climb: act/actuator (act) includes output/export-prom" &&
		tap_ok "a climb put in (actuator.h -> export-prom.h) is found" || tap_fail "a climb is found" "$out"; }

# policy_eval() outside comments: its definition and the cycle only.
callers=$(for f in "$top_srcdir"/daemon/*/*.[ch]; do
	sed -e 's|/\*.*\*/||g' -e '/^[[:space:]]*\*/d' -e '/^[[:space:]]*\/\*/d' "$f" | grep -q 'policy_eval(' &&
		basename "$f"
done | sort | tr '\n' ' ')
[ "$callers" = "cycle.c policy-eval.c policy-eval.h " ] && tap_ok "policy_eval() is named by cycle.c and its definition only" ||
	tap_fail "policy_eval() callers" "$callers"
tap_done
