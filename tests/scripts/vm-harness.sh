#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/scripts/vm-harness.sh: the fast half of tests/vm/harness's self-test,
# without QEMU, a kernel or the network: the static-ELF check, the private apt
# configuration (mirror taken from deb822 and one-line sources, the host's
# sources never named), build-initramfs (with a stand-in static "busybox"
# built here), vmrun's QEMU command line for NUMA shapes and its option errors,
# the guest's runcmd run on this host (exit status, stdout/stderr, files, the
# kill before the limit), and vmrun's result handling against a stand-in QEMU.
# The VM half (boots) is `make check-harness` (tests/vm/harness/selftest).
. "$(dirname "$0")/tap.sh"
H=$top_srcdir/tests/vm/harness
T=$(mktemp -d "${TMPDIR:-/tmp}/vm-harness.XXXXXX")
trap 'rm -rf "$T"' EXIT
command -v cc >/dev/null || tap_skip_all "no C compiler for the stand-in binaries"
command -v cpio >/dev/null || tap_skip_all "no cpio"

# 1. elf-static
printf 'int main(void){return 0;}\n' >"$T/t.c"
cc -o "$T/dyn" "$T/t.c" 2>/dev/null
if cc -static -o "$T/static" "$T/t.c" 2>/dev/null; then
	tap_check "elf-static: a -static binary is static" "$H/elf-static" "$T/static"
else
	tap_fail "elf-static: cc -static failed (libc6-dev has libc.a)"
fi
tap_check "elf-static: a dynamic binary is not" sh -c "! '$H/elf-static' '$T/dyn'"
tap_check "elf-static: a script is not" sh -c "! '$H/elf-static' '$H/vmrun'"

# 2. the private apt configuration
cat >"$T/debian.sources" <<'SRC'
Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main

Types: deb
# a comment
URIs: http://mirror.example/debian/
Suites: bookworm
Components: main
SRC
printf '# deb http://old.example/debian bookworm main\ndeb [arch=amd64] https://one.example/debian bookworm main\n' >"$T/one.list"
m=$(PCPTUNE_APT_SOURCES="$T/debian.sources" sh -c ". '$H/apt-private.sh'; papt_mirror")
[ "$m" = http://mirror.example/debian ] && tap_ok "mirror from deb822 URIs (the -security archive and the trailing / skipped)" ||
	tap_fail "mirror from deb822" "got '$m'"
m=$(PCPTUNE_APT_SOURCES="$T/one.list" sh -c ". '$H/apt-private.sh'; papt_mirror")
[ "$m" = https://one.example/debian ] && tap_ok "mirror from a one-line deb entry (comments skipped)" ||
	tap_fail "mirror from one-line" "got '$m'"
PCPTUNE_APT=$T/apt PCPTUNE_APT_SOURCES="$T/debian.sources" sh -c ". '$H/apt-private.sh'; papt_init sid sid; echo \"\$PAPT_OPTS\"" >"$T/opts"
grep -qx 'deb \[signed-by=/usr/share/keyrings/debian-archive-keyring.gpg\] http://mirror.example/debian sid main' "$T/apt/sid/sources.list" &&
	tap_ok "papt_init: sources.list for sid, signed by the archive keyring" ||
	tap_fail "papt_init sources.list" "$(cat "$T/apt/sid/sources.list")"
if grep -q "Dir::Etc::sourceparts=/dev/null" "$T/opts" && grep -q "Dir::Etc::sourcelist=$T/apt/sid/sources.list" "$T/opts" &&
	grep -q "Dir::State::Lists=$T/apt/sid/lists" "$T/opts" && ! grep -q /etc/apt "$T/opts"; then
	tap_ok "papt_init: apt options name only the private sources, lists and cache"
else
	tap_fail "papt_init options" "$(cat "$T/opts")"
fi

# 3. build-initramfs with a stand-in static busybox that lists two applets
cat >"$T/bb.c" <<'C'
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
	if (argc > 1 && !strcmp(argv[1], "--list-full")) { puts("bin/ls"); puts("usr/bin/env"); }
	return 0;
}
C
mkdir -p "$T/ovl/usr/local/bin"; echo hello >"$T/ovl/usr/local/bin/tool"
if cc -static -o "$T/bb" "$T/bb.c" 2>/dev/null && "$H/build-initramfs" -b "$T/bb" -d "$T/ovl" -o "$T/img.cpio.gz" 2>"$T/err"; then
	gzip -dc "$T/img.cpio.gz" | cpio -itv --quiet 2>/dev/null >"$T/list"
	ok=1
	for f in init vmtest/runcmd bin/busybox bin/ls usr/bin/env etc/passwd usr/local/bin/tool sys/fs/cgroup; do
		grep -q " $f\( -> .*\)\{0,1\}\$" "$T/list" || { ok=0; tap_fail "initramfs holds $f" "$(head -n 40 "$T/list")"; }
	done
	[ $ok = 1 ] && tap_ok "initramfs: init, runcmd, busybox and its applet links, the overlay"
	grep -q ' bin/ls -> /bin/busybox$' "$T/list" && tap_ok "initramfs: applets link to /bin/busybox" || tap_fail "applet links" "$(grep bin/ls "$T/list")"
	awk '$3 != "root" || $4 != "root" { bad++ } END { exit bad > 0 }' "$T/list" &&
		tap_ok "initramfs: every entry owned by root" || tap_fail "initramfs ownership" "$(awk '$3 != "root"' "$T/list" | head)"
else
	tap_fail "build-initramfs with a static stand-in" "$(cat "$T/err")"
fi
"$H/build-initramfs" -b "$T/dyn" -o "$T/x.cpio.gz" 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q 'not statically linked' "$T/err" && tap_ok "build-initramfs refuses a dynamic busybox" ||
	tap_fail "build-initramfs dynamic busybox" "rc=$rc $(cat "$T/err")"

# 4. vmrun's QEMU command line and option errors (no QEMU run)
: >"$T/kernel"
args=$("$H/vmrun" -k "$T/kernel" -s 3 -m 2G --numa 2 -a quiet --qemu-arg -x --qemu-arg 'a b' --print-qemu | tr '\n' '|')
case "$args" in
*'-smp|3|-m|2048M|'*'memory-backend-ram,id=vmtest-mem0,size=1024M|-numa|node,nodeid=0,cpus=0-0,memdev=vmtest-mem0|'*'node,nodeid=1,cpus=1-2,memdev=vmtest-mem1|-x|a b|')
	tap_ok "vmrun --numa 2 -s 3 -m 2G: nodes 0-0/1-2, 1024M each, extra args last and whole" ;;
*) tap_fail "vmrun --print-qemu numa" "$args" ;;
esac
case "$args" in *'no_timer_check rdinit=/init quiet|'*) tap_ok "vmrun -a appends to the kernel command line" ;; *) tap_fail "vmrun -a" "$args" ;; esac
bad() { # name args...: vmrun must exit 125 with a message
	local n=$1; shift
	"$H/vmrun" "$@" --print-qemu >/dev/null 2>"$T/err"; local rc=$?
	[ $rc = 125 ] && [ -s "$T/err" ] && tap_ok "vmrun rejects $n (125)" || tap_fail "vmrun rejects $n" "rc=$rc $(cat "$T/err")"
}
bad "a missing kernel" -k "$T/none"
bad "--numa above -s" -k "$T/kernel" -s 1 --numa 2
bad "memory that does not split evenly" -k "$T/kernel" -s 2 -m 1025M --numa 2
bad "-c with arguments" -k "$T/kernel" -c true -- x
bad "-c with -f" -k "$T/kernel" -c true -f "$H/vmrun"
bad "a bad -m" -k "$T/kernel" -m lots

# 5. guest/runcmd on this host
mkdir -p "$T/g/vmtest"
printf 'echo out; echo err >&2; echo data >"$VMTEST_OUT/f"; exit 7\n' >"$T/g/vmtest/cmd"
HOME=$T/g/root VMTEST_ROOT=$T/g/vmtest VMTEST_EXPORT=$T/g/export.tar VMTEST_CONSOLE=/dev/null sh "$H/guest/runcmd"
mkdir -p "$T/g/x" && tar -xf "$T/g/export.tar" -C "$T/g/x" 2>/dev/null
[ "$(cat "$T/g/x/rc" 2>/dev/null)" = 7 ] && [ "$(cat "$T/g/x/stdout")" = out ] && [ "$(cat "$T/g/x/stderr")" = err ] &&
	[ "$(cat "$T/g/x/files/f")" = data ] && grep -q '^kernel=' "$T/g/x/meta" &&
	tap_ok "runcmd: exit status, stdout, stderr, \$VMTEST_OUT files and meta in the export tar" ||
	tap_fail "runcmd export" "$(ls -R "$T/g/x")"
# The limit: VMTEST_TIMEOUT - uptime - 15 s, at least 5 s (this host's uptime is long: 5 s).
rm -rf "$T/g/vmtest/result" "$T/g/x"; printf 'sleep 60\n' >"$T/g/vmtest/cmd"; echo VMTEST_TIMEOUT=20 >"$T/g/vmtest/env"
s0=$(date +%s)
HOME=$T/g/root VMTEST_ROOT=$T/g/vmtest VMTEST_EXPORT=$T/g/export.tar VMTEST_CONSOLE=/dev/null sh "$H/guest/runcmd"
s1=$(date +%s); mkdir -p "$T/g/x" && tar -xf "$T/g/export.tar" -C "$T/g/x" 2>/dev/null
[ "$(cat "$T/g/x/rc" 2>/dev/null)" = 137 ] && [ $((s1 - s0)) -lt 30 ] &&
	tap_ok "runcmd: a command past the limit is killed (137) and still exported ($((s1 - s0)) s)" ||
	tap_fail "runcmd limit" "rc=$(cat "$T/g/x/rc" 2>/dev/null) after $((s1 - s0)) s"

# The host's deadline: the limit counted from boot is far off, the deadline 7 s away decides.
rm -rf "$T/g/vmtest/result" "$T/g/x"
up=$(cut -d. -f1 /proc/uptime)
printf 'VMTEST_TIMEOUT=%s\nVMTEST_DEADLINE=%s\n' $((up + 1000)) $(( $(date +%s) + 7 )) >"$T/g/vmtest/env"
s0=$(date +%s)
HOME=$T/g/root VMTEST_ROOT=$T/g/vmtest VMTEST_EXPORT=$T/g/export.tar VMTEST_CONSOLE=/dev/null sh "$H/guest/runcmd"
s1=$(date +%s); mkdir -p "$T/g/x" && tar -xf "$T/g/export.tar" -C "$T/g/x" 2>/dev/null
[ "$(cat "$T/g/x/rc" 2>/dev/null)" = 137 ] && [ $((s1 - s0)) -ge 5 ] && [ $((s1 - s0)) -le 12 ] &&
	tap_ok "runcmd: VMTEST_DEADLINE (the host's clock) stops the command first ($((s1 - s0)) s)" ||
	tap_fail "runcmd deadline" "rc=$(cat "$T/g/x/rc" 2>/dev/null) after $((s1 - s0)) s"

# 6. vmrun against a stand-in QEMU: it writes a result tar to the second -serial file
mkdir -p "$T/res/files"; echo 3 >"$T/res/rc"; echo guest-out >"$T/res/stdout"; echo guest-err >"$T/res/stderr"
echo payload >"$T/res/files/p"; echo 'uptime_cmd_start=1.0' >"$T/res/meta"
tar -C "$T/res" -cf "$T/res.tar" .
cat >"$T/fakeqemu" <<FQ
#!/bin/sh
n=0
while [ \$# -gt 0 ]; do
	case "\$1" in -serial) n=\$((n + 1)); [ \$n = 2 ] && f=\${2#file:}; shift 2 ;; -initrd) cp "\$2" "$T/initrd.seen"; shift 2 ;; *) shift ;; esac
done
[ -n "\${FAKE_SLEEP:-}" ] && sleep "\$FAKE_SLEEP"
[ -n "\${FAKE_NORESULT:-}" ] || cp "$T/res.tar" "\$f"
exit 0
FQ
chmod +x "$T/fakeqemu"
out=$(VMTEST_QEMU=$T/fakeqemu "$H/vmrun" -k "$T/kernel" -i "$T/img.cpio.gz" -o "$T/o" -c 'echo hi' 2>"$T/err"); rc=$?
[ $rc = 3 ] && [ "$out" = guest-out ] && grep -qx guest-err "$T/err" && [ "$(cat "$T/o/p" 2>/dev/null)" = payload ] &&
	tap_ok "vmrun: the guest's status, stdout, stderr and -o files come back" ||
	tap_fail "vmrun result handling" "rc=$rc out=$out $(cat "$T/err")"
# The per-run archive is appended to the image, 4-byte aligned, and holds the command.
if [ -f "$T/initrd.seen" ]; then
	isz=$(wc -c <"$T/img.cpio.gz"); pad=$(( (4 - isz % 4) % 4 ))
	tail -c +$((isz + pad + 1)) "$T/initrd.seen" | (mkdir -p "$T/run" && cd "$T/run" && cpio -id --quiet 2>/dev/null)
	[ "$(cat "$T/run/vmtest/cmd" 2>/dev/null)" = 'echo hi' ] && grep -qx VMTEST_CGROUP=v2 "$T/run/vmtest/env" &&
		grep -q '^VMTEST_DEADLINE=[0-9][0-9]*$' "$T/run/vmtest/env" &&
		tap_ok "vmrun: /vmtest/cmd and env in an aligned archive after the image" ||
		tap_fail "vmrun per-run archive" "$(ls -R "$T/run" | head)"
else
	tap_fail "vmrun passed no -initrd"
fi
VMTEST_QEMU=$T/fakeqemu FAKE_NORESULT=1 "$H/vmrun" -k "$T/kernel" -i "$T/img.cpio.gz" -c true >/dev/null 2>"$T/err"; rc=$?
[ $rc = 125 ] && grep -q 'no exit status from the guest' "$T/err" && tap_ok "vmrun: no result from the guest is 125" ||
	tap_fail "vmrun no result" "rc=$rc $(cat "$T/err")"
VMTEST_QEMU=$T/fakeqemu FAKE_SLEEP=5 "$H/vmrun" -k "$T/kernel" -i "$T/img.cpio.gz" -t 1 -c true >/dev/null 2>"$T/err"; rc=$?
[ $rc = 124 ] && tap_ok "vmrun: a VM past -t is 124" || tap_fail "vmrun limit" "rc=$rc $(cat "$T/err")"
tap_done
