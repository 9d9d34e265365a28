#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of `exitstorm-vm -K` (busybox sh, root, a Debian kernel with
# kprobe events, hist triggers and synthetic events): the same exits timed
# two ways, alternating per round, at fraction 0 and at the minimum ($1):
#   none     no tracing: the exit time alone;
#   kprobe   a kprobe and a kretprobe on free_pcppages_bulk() joined by a hist
#            trigger into one synthetic event per call (lat_ns, count): the
#            whole call, zone->lock wait included (spin_lock_irqsave() is
#            inside it on 6.12), an upper bound of the hold, two probe hits
#            per call whatever its size.
# (The per-page events pcptuned traces are exitstorm's: exitstorm-vm without
# -K, same guest shape.)
# Exits: $2 processes (busybox dd bs=$3M: a buffer of that size touched and
# freed at exit) at once, on every CPU but 0; $4 rounds.  Prints per round,
# fraction and method the exit time (ms) and, for kprobe, the calls on CPUs
# 1+: their number, p99 and max (us) and the sum of their count argument
# (pages asked for); kprobe_profile (hits, misses) before and after.
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
	[ "$1" = kprobe ] && echo 1 >$T/events/synthetic/pcpb_hold/enable
	echo 1 >$T/tracing_on
}
# trace text -> "calls p99_us max_us pages" over CPUs 1+
holds() {
	awk '
	/^#/ { next }
	{ if (!match($0, /\[[0-9]+\]/)) next
	  if (substr($0, RSTART + 1, RLENGTH - 2) + 0 == 0) next }
	/pcpb_hold:/ {
		if (match($0, /lat_ns=[0-9]+/)) s[++n] = substr($0, RSTART + 7, RLENGTH - 7) / 1000
		if (match($0, /count=[0-9]+/)) pages += substr($0, RSTART + 6, RLENGTH - 6) }
	END {
		if (n == 0) { print "0 - - -"; exit }
		for (i = 1; i <= n; i++) for (j = i; j > 1 && s[j - 1] > s[j]; j--) { t = s[j]; s[j] = s[j - 1]; s[j - 1] = t }
		k = int((n * 99 + 99) / 100); if (k < 1) k = 1
		printf "%d %.0f %.0f %d\n", n, s[k], s[n], pages }' $T/trace
}
echo 8192 >$T/buffer_size_kb
setup_kprobe
echo "kprobe-holds: $n exiters x $mib MiB on CPUs 1-$(($(nproc) - 1)), $rounds rounds, fraction 0 and $min"
grep . $T/kprobe_profile || true
echo "fraction method exit_ms calls p99_us max_us pages"
r=0
while [ $r -lt "$rounds" ]; do
	for f in 0 "$min"; do
		echo "$f" >$knob
		echo 1 >/proc/sys/vm/stat_refresh
		for m in none kprobe; do
			arm $m
			t0=$(ms); storm; t1=$(ms)
			echo 0 >$T/tracing_on
			if [ $m = none ]; then h="- - - -"; else h=$(holds); fi
			echo "$f $m $((t1 - t0)) $h"
		done
	done
	r=$((r + 1))
done
echo 0 >$T/events/enable
cat $T/kprobe_profile
echo "$orig" >$knob
