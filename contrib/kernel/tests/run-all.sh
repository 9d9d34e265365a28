#!/bin/sh
# run-all.sh - in the vmtest guest: run every contrib kernel test and print
# one "RESULT <test> <exit status> <seconds>" line each (77 = skipped: the
# kernel lacks that patch).  Exit status 0 unless a test failed.
dir=$(dirname "$0")
failed=0
for t in test-pcp-minimum.sh test-batch-scale-max.sh test-percpu-depopulate.sh test-memcg-reclaim-dying.sh test-memcg-reparent.sh test-daemon.sh; do
	echo "=== $t"
	start=$(date +%s)
	sh "$dir/$t"
	rc=$?
	echo "RESULT $t $rc $(( $(date +%s) - start ))"
	[ $rc = 0 ] || [ $rc = 77 ] || failed=1
done
exit $failed
