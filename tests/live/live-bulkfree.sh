#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The behaviour behind the `batched bulk frees:` probe (probe-kernel.c), on
# the live kernel (root): a process pinned to one CPU faults in anonymous
# memory (dd's buffer; more than the pcp lists absorb) and exits;
# exit_mmap() frees the pages through that CPU's pcp list, and whenever the list passes high a bulk free
# moves pages to the buddy allocator under zone->lock, one
# kmem:mm_page_pcpu_drain event per page.  A bulk free is a run of drain
# events with no kmem:mm_page_free between them (as tests/bench/exitstorm
# groups them; free_frozen_page_commit() drains only after a freed page
# joined the list).
#  - Not batched (free_frozen_page_commit() before mainline 6.19): runs up to
#    min(batch << scale_max, high - batch) pages, more than batch.
#  - Batched: each step is batch pages and the loop stops once the list is
#    below high, so no run is longer than batch.
# The largest run must not exceed the bulk_free_max_pages `pcptunectl plan
# --json` gives for the current fraction, and it must be longer than batch
# exactly when the probe says the exit path is not batched.  Uses a private
# trace instance (the global buffer and events are not touched); mounts
# tracefs if it is not mounted and unmounts it again.  Where the kernel offers
# kprobe events, a probe on free_pcppages_bulk() (its own name, removed at
# exit) also ends a run: a batched exit path (6.19+) frees batch-sized calls
# back to back with no page free between them, which the two tracepoints
# alone would count as one bulk free.  Prints TAP.
. "$(dirname "$0")/../scripts/tap.sh"
[ "$(id -u)" = 0 ] || tap_skip_all "needs root"
[ "$(nproc)" -ge 1 ] || tap_skip_all "no CPU?"
live_lock
TR=/sys/kernel/tracing mounted=""
if [ ! -e $TR/instances ]; then
	mount -t tracefs nodev $TR 2>/dev/null && mounted=1 || tap_skip_all "no tracefs"
fi
[ -d $TR/events/kmem/mm_page_pcpu_drain ] || tap_skip_all "no kmem:mm_page_pcpu_drain event"
I=$TR/instances/pcptune-bulkfree-$$
tmp=$(mktemp -d /tmp/pcptune-live-bulkfree.XXXXXX)
nopol=$tmp/policies; mkdir "$nopol" # no policies: plan and status only report
# dd's buffer must be order-0 pages (the pcp lists' common case): with THP "always" (Debian's
# default) it would be freed as a few order-9 folios.  Back to the original value on any exit.
THP=/sys/kernel/mm/transparent_hugepage/enabled thp0=""
if [ -w $THP ] && grep -q '\[always\]' $THP; then thp0=always; echo madvise >$THP; fi
KP=pcptune_pcpb_$$ kp=""
cleanup() {
	# Only what this test set: another writer's choice meanwhile is left (and said).
	if [ -n "$thp0" ]; then
		if grep -q '\[madvise\]' $THP; then echo "$thp0" >$THP
		else echo "# $THP is now '$(cat $THP)', not the madvise this test set: another writer changed it; left as it is"; fi
	fi
	[ -d "$I" ] && { echo 0 >"$I/tracing_on"; echo 0 >"$I/events/enable"; rmdir "$I"; }
	[ -n "$kp" ] && echo "-:$KP" >>$TR/kprobe_events
	[ -n "$mounted" ] && umount $TR
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cpu=$(awk -F'[-,]' '{ print $NF }' /sys/devices/system/cpu/online)
# More than the lists may absorb: at fraction 0 a CPU's list grows up to high_max in every zone
# before it drains (189 MiB in a 3 GiB zone), so the exit frees the sum of the zones' high_max
# (the model's) plus 256 MiB, within 60% of MemAvailable.
json=$("$PCPTUNECTL" plan --json --no-owner-check --policy-dir "$nopol" 2>/dev/null)
absorb=$(printf '%s' "$json" | awk '/"high_max":/ { gsub(/,/, "", $2); s += $2 } END { printf "%d", s * 4 / 1024 }')
avail=$(awk '/^MemAvailable:/ { printf "%d", $2 * 0.6 / 1024 }' /proc/meminfo)
mib=$((absorb + 256)); [ "$mib" -gt "$avail" ] && mib=$avail
echo "# the zones' high_max add up to ${absorb} MiB per CPU: the exit frees ${mib} MiB"
mkdir "$I" || tap_skip_all "cannot create a trace instance"
echo 32768 >"$I/buffer_size_kb"
printf '%x\n' $((1 << cpu)) >"$I/tracing_cpumask" 2>/dev/null
echo 1 >"$I/events/kmem/mm_page_pcpu_drain/enable"
echo 1 >"$I/events/kmem/mm_page_free/enable"
method="tracepoints (a run: drains between page frees)"
if [ -w $TR/kprobe_events ] && echo "p:$KP free_pcppages_bulk" >>$TR/kprobe_events 2>/dev/null; then
	kp=1
	if echo 1 >"$I/events/kprobes/$KP/enable" 2>/dev/null; then
		method="tracepoints + a kprobe on free_pcppages_bulk() (a run: one call)"
	fi
fi
echo "# method: $method"
: >"$I/trace"
echo 1 >"$I/tracing_on"
# The exiting process only: set_event_pid holds the shell, which execs dd (same pid).
taskset -c "$cpu" sh -c "echo \$\$ >'$I/set_event_pid'; exec dd if=/dev/zero of=/dev/null bs=${mib}M count=1 status=none"
sleep 0.2
echo 0 >"$I/tracing_on"
cat "$I/trace" >"$tmp/trace"
# Runs of drain events (order < 4: the exit path's pages; a THP would be one order-9 event).  A
# batch of freed folios may hold pages of two zones, whose bulk frees then follow each other with
# no mm_page_free between: a run also ends where the zone (by pfn, /proc/zoneinfo) changes.
zones=$(awk '$1 == "spanned" { sp = $2 } $1 == "start_pfn:" { printf "%d:%d ", $2, $2 + sp }' /proc/zoneinfo)
awk -v zones="$zones" '
	BEGIN { n = split(zones, z, " "); for (i = 1; i <= n; i++) { split(z[i], b, ":"); lo[i] = b[1]; hi[i] = b[2] } }
	function zone_of(pfn,   i) { for (i = 1; i <= n; i++) if (pfn >= lo[i] && pfn < hi[i]) return i; return 0 }
	function hex(h,   v, i) { v = 0; h = tolower(h); for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
	/mm_page_free:/ || /pcptune_pcpb_[0-9]+:/ { if (run) print run; run = 0; next }
	/mm_page_pcpu_drain:/ {
		o = $0; sub(/.*order=/, "", o); o += 0
		p = $0; sub(/.*pfn=0x/, "", p); sub(/ .*/, "", p); zn = zone_of(hex(p))
		if (run && zn != last) { print run; run = 0 }
		last = zn
		if (o < 4) run += 2 ^ o
	}
	END { if (run) print run }' "$tmp/trace" | sort -n >"$tmp/runs"
n=$(wc -l <"$tmp/runs"); largest=$(tail -n 1 "$tmp/runs"); largest=${largest:-0}
drains=$(grep -c "mm_page_pcpu_drain:" "$tmp/trace")
lost=$(awk '/entries-in-buffer/ { print $0 }' "$tmp/trace" | head -n 1)
echo "# CPU $cpu, $(uname -r): $drains drain events, $n bulk frees at exit, largest $largest pages; $lost"

# The zone the pages came from is the largest one (Normal, or DMA32 on a small guest): its batch and figure.
read -r batch model < <(printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
z = max(d["zones"], key=lambda z: z["managed_pages"])
p = z["plans"][0]
print(p["batch"], p["bulk_free_max_pages"])' 2>/dev/null ||
	printf '%s' "$json" | awk '/"managed_pages"/ { m = $2 + 0 } /"batch"/ && m > best { b = $2 + 0 } /"bulk_free_max_pages"/ && m > best { best = m; print b, $2 + 0 }' | tail -n 1 | tr -d ',')
st=$("$PCPTUNECTL" status --json --no-owner-check --policy-dir "$nopol" 2>/dev/null)
answer=$(printf '%s' "$st" | awk '/"label": "batched bulk frees"/ { f = 1 } f && /"answer"/ { gsub(/[",]/, "", $2); print $2; exit }')
evidence=$(printf '%s' "$st" | awk '/"label": "batched bulk frees"/ { f = 1 } f && /"evidence"/ { print; exit }')
exit_batched=no
case "$evidence" in *"at most batch pages"*) exit_batched=yes ;; esac
echo "# plan: batch $batch, bulk_free_max_pages $model; probe: $answer (exit path batched: $exit_batched)"

if [ "$n" -ge 1 ]; then tap_ok "the exit drained through $n bulk frees"; else tap_fail "too few bulk frees: $n" "$(tail -n 20 "$tmp/trace")"; fi
# A high-order last page may end a bulk free past the count (free_pcppages_bulk() stops once it freed that many).
if [ -n "$model" ] && [ "$largest" -le $((model + 8)) ]; then
	tap_ok "no bulk free moved more than the model's $model pages (largest $largest)"
else
	tap_fail "largest bulk free $largest pages, model $model"
fi
if [ "$exit_batched" = no ] && [ "$largest" -gt "${batch:-0}" ]; then
	tap_ok "not batched at exit, as the probe says ($answer): $largest pages under one zone->lock hold > batch $batch"
elif [ "$exit_batched" = yes ] && [ "$largest" -le "${batch:-0}" ]; then
	tap_ok "batched at exit, as the probe says ($answer): largest $largest <= batch $batch"
else
	tap_fail "probe ($answer, exit batched: $exit_batched) against the largest bulk free $largest, batch $batch"
fi
tap_done
