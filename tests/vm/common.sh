# Sourced by tests/vm scripts (POSIX sh).  Paths shared with other engineers:
# keep them stable.
PCPTUNE_SRC=${PCPTUNE_SRC:-/var/tmp/pcptune-src}
PCPTUNE_KERNELS=${PCPTUNE_KERNELS:-/var/tmp/pcptune-kernels}
PCPTUNE_KBUILD=${PCPTUNE_KBUILD:-/var/tmp}          # build dirs: $PCPTUNE_KBUILD/pcptune-kbuild-*
# The VM harness is the tree's own (tests/vm/harness); VMTEST overrides it
# (any directory with the same vmrun/fetch-kernel/build-kernel interface).
# Sourced from tests/vm, tests/bench and contrib/kernel: $here is the caller's directory.
if [ -z "${VMTEST:-}" ]; then
	for VMTEST in "$here/harness" "$here/../vm/harness" "$here/../../tests/vm/harness"; do
		[ -x "$VMTEST/vmrun" ] && break
	done
fi
[ -x "$VMTEST/vmrun" ] || { echo "tests/vm: no VM harness at $VMTEST" >&2; exit 2; }
VMTEST=$(CDPATH= cd -- "$VMTEST" && pwd)

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# debian_kernel SERIES: path of the fetched Debian vmlinuz of that series
# (6.1 -> vmlinuz-6.1.0-*, 6.12 -> vmlinuz-6.12.*, 7.2 -> vmlinuz-7.2.*), the
# newest; fails if none (harness/fetch-kernel SERIES fetches it).
debian_kernel() {
	case "$1" in
	6.1) pat='vmlinuz-6.1.0-*-amd64' ;;
	*) pat="vmlinuz-$1.*-amd64" ;;
	esac
	k=$(ls "$PCPTUNE_KERNELS"/$pat 2>/dev/null | sort -V | tail -n 1)
	[ -n "$k" ] && [ -f "$k" ] && printf '%s\n' "$k"
}
