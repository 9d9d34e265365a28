#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Snapshot archives (pcptunectl status/plan --root F.tar.gz) are input anyone may hand us: they are
# unpacked with libarchive, capped (members, bytes), only the regular files the sources read are
# written, and a symlink, hard link, device, FIFO, absolute path or '..' refuses the archive with
# a clear error.  Archives are crafted with python3's tarfile.  Prints TAP.
. "$(dirname "$0")/tap.sh"

command -v python3 >/dev/null || tap_skip_all "needs python3"
tmp=$(mktemp -d /tmp/pcptune-test-archive.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# No policies, in a directory of the mode the owner check wants, whatever the checkout's modes.
empty=$tmp/policies && mkdir "$empty" && chmod 0755 "$empty"
status() { "$PCPTUNECTL" --root "$1" --state-dir "$tmp/state" --policy-dir "$empty" status; }

# --- every fixture: status from the archive is status from the snapshot directory (all files the sources read
# are unpacked), but for its first line.
n=0 bad=""
for root in "$FIXTURES"/*/root; do
	name=$(basename "$(dirname "$root")")
	rm -rf "$tmp/dir"
	"$PCPTUNECTL" snapshot --root "$root" -o "$tmp/dir" >/dev/null 2>&1 &&
		"$PCPTUNECTL" snapshot --root "$root" -o "$tmp/$name.tar.gz" >/dev/null 2>&1 || { bad="$bad $name(snapshot)"; continue; }
	status "$tmp/dir" 2>&1 | sed 1d >"$tmp/a"
	status "$tmp/$name.tar.gz" >"$tmp/b" 2>"$tmp/err" || bad="$bad $name(rc)"
	sed -i 1d "$tmp/b"
	cmp -s "$tmp/a" "$tmp/b" && ! [ -s "$tmp/err" ] || bad="$bad $name"
	n=$((n + 1))
done
[ $n -gt 0 ] && [ -z "$bad" ] && tap_ok "status from an archive is status from the directory on all $n fixtures, no warning" ||
	tap_fail "archive vs directory" "differ:$bad" "$(diff "$tmp/a" "$tmp/b")" "$(cat "$tmp/err")"

# --- crafted archives: the good snapshot's members plus one.
good=$tmp/6.1.0-57-amd64-smp2-1G.tar.gz
cd "$tmp" && python3 - "$good" <<'PY' || tap_fail "python3 could not craft the archives"
import io, sys, tarfile
good = tarfile.open(sys.argv[1])
base = [(m, good.extractfile(m).read() if m.isfile() else None) for m in good.getmembers()]
def member(t, name, data=b"", kind=tarfile.REGTYPE, link=""):
    ti = tarfile.TarInfo(name); ti.type = kind; ti.linkname = link; ti.mode = 0o644; ti.size = len(data)
    t.addfile(ti, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
def make(out, extra):
    with tarfile.open(out, "w:gz") as t:
        for m, d in base:
            t.addfile(m, io.BytesIO(d) if d is not None else None)
        extra(t)
make("symlink.tar.gz", lambda t: member(t, "./proc/buddyinfo", kind=tarfile.SYMTYPE, link="/etc/shadow"))
make("hardlink.tar.gz", lambda t: member(t, "./proc/x", kind=tarfile.LNKTYPE, link="./proc/meminfo"))
make("dotdot.tar.gz", lambda t: member(t, "./proc/../../pcptune-escaped", b"x"))
make("absolute.tar.gz", lambda t: member(t, "/tmp/pcptune-test-absolute-member", b"x"))
make("device.tar.gz", lambda t: member(t, "./dev/sda", kind=tarfile.BLKTYPE))
make("fifo.tar.gz", lambda t: member(t, "./proc/fifo", kind=tarfile.FIFOTYPE))
make("twice.tar.gz", lambda t: member(t, "./proc/meminfo", b"MemTotal: 1 kB\n"))
make("unknown.tar.gz", lambda t: member(t, "./etc/passwd", b"root:x:0:0::/root:/bin/sh\n"))
def many(t):
    for i in range(9000):
        member(t, "./x/%d" % i)
make("many.tar.gz", many)
PY
cd - >/dev/null
refused() { # archive rc message
	local out rc
	out=$(status "$tmp/$1.tar.gz" 2>&1); rc=$?
	if [ $rc = "$2" ] && printf '%s' "$out" | grep -qF -- "$3"; then
		tap_ok "$1: refused: $3"
	else
		tap_fail "$1 refused" "exit $rc" "$out"
	fi
}
refused symlink 1 "refusing member './proc/buddyinfo': it is a symlink"
refused hardlink 1 "refusing member './proc/x': it is a hard link"
refused dotdot 1 "refusing member './proc/../../pcptune-escaped': not a relative path without '.', '..'"
refused absolute 1 "refusing member '/tmp/pcptune-test-absolute-member': not a relative path"
refused device 1 "refusing member './dev/sda': it is a device node"
refused fifo 1 "refusing member './proc/fifo': it is a FIFO"
refused twice 1 "refusing member './proc/meminfo': it is there twice"
refused many 1 "holds more than 8192 members"
[ ! -e /tmp/pcptune-test-absolute-member ] && [ ! -e /tmp/pcptune-escaped ] && [ ! -e "$tmp/pcptune-escaped" ] &&
	tap_ok "nothing was written outside the unpack directory" || tap_fail "written outside"
out=$(status "$tmp/unknown.tar.gz" 2>&1); rc=$?
[ $rc = 0 ] && printf '%s' "$out" | grep -qF "ignored 1 member that no source reads (the first: './etc/passwd')" &&
	tap_ok "a regular file no source reads is skipped, with a warning" || tap_fail "unknown member" "exit $rc" "$out"

# --- a gzip bomb: 100 MiB of zeros as proc/zoneinfo (~100 KB compressed) is refused at its header.
mkdir -p "$tmp/bomb/proc" && head -c 100M /dev/zero >"$tmp/bomb/proc/zoneinfo" &&
	tar -czf "$tmp/bomb.tar.gz" -C "$tmp/bomb" . && rm -rf "$tmp/bomb"
refused bomb 1 "refusing member './proc/zoneinfo' of 104857600 bytes: a snapshot unpacks to at most 64 MiB"
# plan reads archives the same way (one archive, and a directory of them).
out=$("$PCPTUNECTL" plan --root "$tmp/bomb.tar.gz" 2>&1); rc=$?
[ $rc != 0 ] && printf '%s' "$out" | grep -qF "at most 64 MiB" && tap_ok "plan --root refuses the bomb too" ||
	tap_fail "plan bomb" "exit $rc" "$out"

tap_done
