#!/bin/sh
# churn-percpu.sh - container-style memcg churn, scaled, with pinned children (busybox sh, vmtest guest, cgroup v2)
#
#   P parents x C children: /sys/fs/cgroup/churn/p<i>/c<j>
#   ORDER=interleaved: p1, its C children, p2, its children, ... (container-host like:
#                      every parent's percpu data sits between children's)
#   ORDER=grouped:     all parents first, then all children (what allocating
#                      long- and short-lived memcgs from separate chunks would give)
#   Each child is charged one tmpfs page (a 4 KiB file written by a process
#   running in it), so after rmdir it stays dying until the page is freed.
#   Stages: baseline, create, remove (dying), release (pins freed, lazy
#   balance work done), depopulate (only on a kernel with the patch).
#
# Output: a table on stdout, percpu_stats dumps in $VMTEST_OUT.
P=${P:-1000}
C=${C:-10}
ORDER=${ORDER:-interleaved}
PIN=${PIN:-1}
D=/sys/kernel/mm/percpu
STATS=/sys/kernel/debug/percpu_stats
OUT=${VMTEST_OUT:-/tmp}
R=/sys/fs/cgroup
CG=$R/churn
PINS=/tmp/pins

pc() { awk '$1 == "Percpu:" { print $2 }' /proc/meminfo; }
memcgs() { awk '$1 == "memory" { print $3 }' /proc/cgroups; }
dying() { awk '$1 == "nr_dying_descendants" { print $2 }' $R/cgroup.stat; }
up() { awk '{ print $1 }' /proc/uptime; }
sysv() { [ -r $D/$1 ] && cat $D/$1 || echo -; }

stats_line() { # chunks, live allocations, empty pages (all chunks), sidelined
	[ -r $STATS ] || { echo "- - - -"; return; }
	awk '/^Global Stats:/ { g = 1 } /^Per Chunk Stats:/ { g = 0; c = 1 }
	g && $1 == "nr_chunks" { n = $3 } g && $1 == "nr_cur_alloc" { a = $3 }
	c && $1 == "empty_pop_pages" { e += $3 } /sidelined/ { s++ }
	END { print n, a, e, s + 0 }' $STATS
}

hdr() {
	printf '%-11s %8s %8s %6s %7s %7s %7s %7s %6s %6s %6s %9s %7s\n' \
		stage t_s Percpu_kB memcg dying chunks allocs empty pool used side frag_B sysfs
}
row() { # $1 stage
	set -- "$1" $(stats_line)
	printf '%-11s %8s %8s %6s %7s %7s %7s %7s %6s %6s %6s %9s %7s\n' \
		"$1" "$(up)" "$(pc)" "$(memcgs)" "$(dying)" "$2" "$3" "$4" \
		"$(sysv nr_empty_pop_pages)" "$(sysv nr_used_pop_pages)" "$5" \
		"$(sysv frag_free_bytes)" "$(sysv nr_populated_pages)"
	[ -r $STATS ] && cat $STATS >"$OUT/stats-$1.txt"
	[ -d $D ] && for f in $D/*; do [ "${f##*/}" != depopulate ] && echo "$(basename $f) $(cat $f)"; done >"$OUT/sysfs-$1.txt"
}

# wait for no dying memcg below the root, nothing queued for depopulation,
# and Percpu steady for 3 s (max $1 s)
settle() {
	w=0 s=0 last=""
	while [ $w -lt "$1" ]; do
		cur="$(dying) $(memcgs) $(pc) $(sysv nr_to_depopulate)"
		case "$cur" in "0 "*) ok=1 ;; *) ok=0 ;; esac
		[ "$(sysv nr_to_depopulate)" = 0 ] || [ "$(sysv nr_to_depopulate)" = - ] || ok=0
		if [ $ok = 1 ] && [ "$cur" = "$last" ]; then s=$((s + 1)); [ $s -ge 3 ] && break; else s=0; fi
		last=$cur; sleep 1; w=$((w + 1))
	done
	echo "settled after ${w}s" >&2
}

echo +memory >$R/cgroup.subtree_control
mkdir -p $CG $PINS
echo +memory >$CG/cgroup.subtree_control
echo "P=$P C=$C ORDER=$ORDER PIN=$PIN kernel $(uname -r) cpus $(nproc) units $(sysv nr_units) unit_pages $(sysv unit_pages)"
hdr
settle 30
row baseline

# charge one tmpfs page to each child of parent $1 (one process per parent,
# moving itself from child to child; it exits when done)
charge() {
	[ "$PIN" = 1 ] || return 0
	sh -c 'i=$1 C=$2; j=1; while [ $j -le $C ]; do echo $$ >'"$CG"'/p$i/c$j/cgroup.procs &&
		printf "%4096s" x >'"$PINS"'/$i.$j; j=$((j + 1)); done' sh "$1" "$C"
}

t0=$(up)
if [ "$ORDER" = grouped ]; then
	i=1; while [ $i -le $P ]; do mkdir $CG/p$i && echo +memory >$CG/p$i/cgroup.subtree_control; i=$((i + 1)); done
	i=1; while [ $i -le $P ]; do
		j=1; while [ $j -le $C ]; do mkdir $CG/p$i/c$j; j=$((j + 1)); done
		charge $i; i=$((i + 1))
	done
else
	i=1; while [ $i -le $P ]; do
		mkdir $CG/p$i && echo +memory >$CG/p$i/cgroup.subtree_control
		j=1; while [ $j -le $C ]; do mkdir $CG/p$i/c$j; j=$((j + 1)); done
		charge $i; i=$((i + 1))
	done
fi
echo "create: $(awk -v a=$t0 -v b=$(up) 'BEGIN { print b - a }') s" >&2
row create

t0=$(up)
i=1; while [ $i -le $P ]; do j=1; while [ $j -le $C ]; do rmdir $CG/p$i/c$j; j=$((j + 1)); done; i=$((i + 1)); done
echo "remove: $(awk -v a=$t0 -v b=$(up) 'BEGIN { print b - a }') s" >&2
sleep 10
row remove

# release the pins: memory.reclaim cannot reclaim tmpfs pages without swap
# (this guest has no disk), so first show that, then delete the files,
# which uncharges them exactly as reclaim of page cache would
if [ "$PIN" = 1 ]; then
	t0=$(up)
	echo 64M >$CG/p1/memory.reclaim 2>/dev/null && r=ok || r="failed($?)"
	echo "memory.reclaim on p1: $r; dying now $(dying)" >&2
	rm -f $PINS/*
	echo "unpin: $(awk -v a=$t0 -v b=$(up) 'BEGIN { print b - a }') s" >&2
fi
settle 300
row release

if [ -w $D/depopulate ] || [ -e $D/depopulate ]; then
	t0=$(up)
	echo 1 >$D/depopulate
	echo "depopulate: $(awk -v a=$t0 -v b=$(up) 'BEGIN { print (b - a) * 1000 }') ms" >&2
	row depopulate
fi

# the survivors' live data: allocations of the parents (stats diff) in bytes per unit
if [ -r $OUT/stats-baseline.txt ] && [ -r $STATS ]; then
	for s in baseline release; do
		awk -v s=$s '/^Allocation Info:/ { a = 1 } a && $1 == "unit_size" { u = $3; a = 0 }
		/^Chunk/ { k = ($0 ~ /First|Reserved/) ? "fixed" : "dyn" }
		$1 == "free_bytes" && k == "dyn" { live += u - $3; n++ }
		END { printf "%s: dynamic chunks %d, live bytes per unit in them %d\n", s, n, live }' $OUT/stats-$s.txt
	done >&2
fi
