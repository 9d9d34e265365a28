#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of `exitstorm-vm -K` (busybox sh, root, a Debian kernel with
# kprobe events, hist triggers and synthetic events): the same exits timed
# three ways, alternating per round, at fraction 0 and at the minimum ($1):
#   none     no tracing: the exit time alone;
#   pages    kmem:mm_page_pcpu_drain + kmem:mm_page_free (what pcptuned and
#            exitstorm trace): a bulk free is a run of drain events on one CPU
#            ended by a free event; its span first..last event, a lower
#            bound of the zone->lock hold inflated by one event per page;
#   kprobe   a kprobe and a kretprobe on free_pcppages_bulk() joined by a hist
#            trigger into one synthetic event per call (lat_ns, count): the
#            whole call, zone->lock wait included (spin_lock_irqsave() is
#            inside it on 6.12), an upper bound of the hold, two probe hits
#            per call whatever its size.
# Exits: $2 processes (busybox dd bs=$3M: a buffer of that size touched and
# freed at exit) at once, on every CPU but 0.  Prints per fraction and method
# the exit time (ms, per round) and p99/max of the holds (us) with the
# number of bulk frees over CPUs 1+.
set -eu
min=$1 n=${2:-15} mib=${3:-64} rounds=${4:-3}
T=/sys/kernel/tracing
knob=/proc/sys/vm/percpu_pagelist_high_fraction
orig=$(cat $knob)
ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }
storm() {
	i=0
	while [ $i -lt "$n" ]; do
		taskset -c 1-$(($(nproc) - 1)) dd if=/dev/zero of=/dev/null bs=${mib}M count=1 2>/dev/null &
		i=$((i + 1))
	done
	wait
}
setup_kprobe() {
	echo 'p:pcpb_in free_pcppages_bulk count=$arg2:s32' >>$T/kprobe_events
	echo 'r:pcpb_out free_pcppages_bulk' >>$T/kprobe_events
	echo 'pcpb_hold u64 lat_ns; s32 count' >>$T/synthetic_events
	echo 'hist:keys=common_pid:ts0=common_timestamp:c0=count' >>$T/events/kprobes/pcpb_in/trigger
	echo 'hist:keys=common_pid:lat=common_timestamp-$ts0:onmatch(kprobes.pcpb_in).trace(pcpb_hold,$lat,$c0)' \
		>>$T/events/kprobes/pcpb_out/trigger
}
arm() { # method
	echo 0 >$T/tracing_on
	echo >$T/trace
	echo 0 >$T/events/enable
	case $1 in
	pages) echo 1 >$T/events/kmem/mm_page_pcpu_drain/enable; echo 1 >$T/events/kmem/mm_page_free/enable ;;
	kprobe) echo 1 >$T/events/synthetic/pcpb_hold/enable ;;
	esac
	echo 1 >$T/tracing_on
}
# trace text -> "bulk p99_us max_us" over CPUs 1+
holds() { # method
	awk -v m="$1" '
	function close_run(c) { if (open[c]) { s[++n] = last[c] - first[c]; open[c] = 0 } }
	/^#/ { next }
	{ if (!match($0, /\[[0-9]+\]/)) next
	  cpu = substr($0, RSTART + 1, RLENGTH - 2) + 0
	  if (!match($0, /[0-9]+\.[0-9]+:/)) next
	  ts = substr($0, RSTART, RLENGTH - 1) * 1e6
	  if (cpu == 0) next }
	m == "kprobe" && /pcpb_hold:/ { if (match($0, /lat_ns=[0-9]+/)) s[++n] = substr($0, RSTART + 7, RLENGTH - 7) / 1000; next }
	m == "pages" && /mm_page_pcpu_drain:/ { if (!open[cpu]) { open[cpu] = 1; first[cpu] = ts } last[cpu] = ts; next }
	m == "pages" && /mm_page_free:/ { close_run(cpu) }
	END {
		if (m == "pages") for (c in open) close_run(c)
		if (n == 0) { print "0 - -"; exit }
		for (i = 1; i <= n; i++) for (j = i; j > 1 && s[j - 1] > s[j]; j--) { t = s[j]; s[j] = s[j - 1]; s[j - 1] = t }
		k = int((n * 99 + 99) / 100); if (k < 1) k = 1
		printf "%d %.0f %.0f\n", n, s[k], s[n] }' $T/trace
}
echo 8192 >$T/buffer_size_kb
setup_kprobe
echo "kprobe-holds: $n exiters x $mib MiB on CPUs 1-$(($(nproc) - 1)), $rounds rounds, fraction 0 and $min"
echo "fraction method exit_ms bulk_frees p99_us max_us"
r=0
while [ $r -lt "$rounds" ]; do
	for f in 0 "$min"; do
		echo "$f" >$knob
		echo 1 >/proc/sys/vm/stat_refresh
		for m in none pages kprobe; do
			arm $m
			t0=$(ms); storm; t1=$(ms)
			echo 0 >$T/tracing_on
			if [ $m = none ]; then h="- - -"; else h=$(holds $m); fi
			echo "$f $m $((t1 - t0)) $h"
		done
	done
	r=$((r + 1))
done
echo 0 >$T/events/enable
echo "$orig" >$knob
