#!/bin/sh
# Guest side of tests/vm/capture-shapes (busybox sh; run by vmrun -f).
# Writes root trees usable with pcptunectl --root into $VMTEST_OUT:
#   root-boot/        state right after boot, before any sysctl write: the
#                     pcp limits the kernel computed before it freed the
#                     initrd and init sections (managed grew since)
#   root/             the same boot fraction after min_free_kbytes was
#                     written with its own value: setup_per_zone_wmarks()
#                     recomputes every zone's pcp limits from the final
#                     managed pages (zone_pcp_update(), 6.7+), as any later
#                     watermark change would
#   root-frac-F/      state right after writing F to percpu_pagelist_high_fraction
#                     (zoneinfo is read first, immediately after the write)
#   capture.txt       fractions written, write results, the computed minimum
#                     fraction, uptimes
# Fractions: 8 100 1000 4096 FMIN, then 0 (back to the default), where FMIN is
# the smallest F at which every populated zone still gets high above the
# batch<<2 floor, computed from the live zoneinfo:
#   per populated zone: F = managed / (cpus_of_node * (4*batch + 1)) + 1
#   (cpus_of_node = online CPUs listed for its node, or all online CPUs for a
#   CPU-less node, as the kernel splits those), max over zones, at least 8.
O=${VMTEST_OUT:?}
FR=/proc/sys/vm/percpu_pagelist_high_fraction
L=$O/capture.txt

ncpus() { # ncpus CPULIST-FILE: number of CPUs in a list such as 0-3,6
	awk -F, '{ for (i = 1; i <= NF; i++) { if ($i == "") continue
		n = split($i, r, "-"); c += (n == 2) ? r[2] - r[1] + 1 : 1 } }
		END { print c + 0 }' "$1"
}

cp1() { # cp1 SRC DEST-TREE: copy one kernel file into the tree, same path
	[ -r "$1" ] || return 0
	mkdir -p "$2${1%/*}"
	cat "$1" >"$2$1"
}

snap() { # snap TREE: everything but zoneinfo (the caller reads that first)
	tree=$O/$1
	for src in /proc/meminfo /proc/vmstat $FR /proc/sys/vm/min_free_kbytes \
		/proc/sys/vm/watermark_scale_factor /proc/sys/kernel/osrelease \
		/sys/devices/system/node/online /sys/devices/system/node/possible \
		/sys/devices/system/node/has_cpu /sys/devices/system/node/has_memory \
		/sys/devices/system/cpu/online /sys/devices/system/cpu/possible \
		/sys/kernel/mm/transparent_hugepage/enabled; do
		cp1 "$src" "$tree"
	done
	for nd in /sys/devices/system/node/node[0-9]*; do
		[ -d "$nd" ] || continue
		cp1 "$nd/cpulist" "$tree"
		cp1 "$nd/meminfo" "$tree"
	done
}

up() { cut -d' ' -f1 /proc/uptime; }

# 1. Boot state, then the same after a watermark recompute.
mkdir -p "$O/root-boot/proc"
cat /proc/zoneinfo >"$O/root-boot/proc/zoneinfo"
snap root-boot
boot_frac=$(cat $FR)
echo "uptime_boot_capture=$(up) boot_fraction=$boot_frac" >"$L"
mfk=$(cat /proc/sys/vm/min_free_kbytes)
err=$( { echo "$mfk" >/proc/sys/vm/min_free_kbytes; } 2>&1 ); rc=$?
mkdir -p "$O/root/proc"
cat /proc/zoneinfo >"$O/root/proc/zoneinfo"
snap root
echo "rewrite min_free_kbytes=$mfk rc=$rc uptime=$(up) err=$err" >>"$L"

# 2. Minimum fraction from the live zoneinfo.
online=$(ncpus /sys/devices/system/cpu/online)
nodecpus=""
for n in /sys/devices/system/node/node[0-9]*; do
	[ -d "$n" ] || continue
	nodecpus="$nodecpus ${n##*node}:$(ncpus "$n/cpulist")"
done
fmin=$(awk -v nodecpus="$nodecpus" -v online="$online" '
	BEGIN { k = split(nodecpus, a, " ")
		for (i = 1; i <= k; i++) { split(a[i], p, ":"); nc[p[1]] = p[2] }
		f = 8 }
	/^Node / { node = $2; sub(",", "", node); managed = 0; batch = -1; inpcp = 0; next }
	$1 == "managed" { managed = $2; next }
	$1 == "pagesets" { inpcp = 1; next }
	inpcp && $1 == "batch:" && batch < 0 {
		batch = $2
		if (managed > 0) {
			c = nc[node] + 0; if (c == 0) c = online
			x = int(managed / (c * (4 * batch + 1))) + 1
			if (x > f) f = x
		}
	}
	END { print f }' /proc/zoneinfo)
echo "online_cpus=$online node_cpus=$nodecpus fmin=$fmin" >>"$L"

# 3. Each fraction: write it, read zoneinfo at once, then the rest.
fracs=""
for f in 8 100 1000 4096 "$fmin" 0; do
	case " $fracs " in *" $f "*) ;; *) fracs="$fracs $f" ;; esac
done
echo "fractions=$fracs" >>"$L"
for f in $fracs; do
	t=$O/root-frac-$f
	mkdir -p "$t/proc"
	err=$( { echo "$f" >$FR; } 2>&1 ); rc=$?
	cat /proc/zoneinfo >"$t/proc/zoneinfo"
	snap "root-frac-$f"
	echo "write=$f rc=$rc now=$(cat $FR) uptime=$(up) err=$err" >>"$L"
done
echo "uptime_end=$(up)" >>"$L"
