#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every contrib/kernel/<version>/NNNN-*.patch applies, in order and without
# fuzz, to Debian's linux-source of that version.  The files the patches
# touch are taken from /var/tmp/pcptune-src/linux-source-<version> when it is
# unpacked there, else from /usr/src/linux-source-<version>.tar.xz (apt-get
# install linux-source-6.1 linux-source-6.12), else from a cached
# /var/tmp/pcptune-kernels/debs/linux-source-<version>_*.deb.  A version
# whose source is in none of them is skipped (a TAP "# SKIP" line per patch
# saying why), never downloaded: 7.x comes from sid, which a bookworm host or
# CI does not have in its apt sources, and a moving suite would make this
# test's result depend on the day it runs.  contrib/kernel/fetch-source 7.2
# (private apt configuration, about 165 MB, once) provides it; make
# check-kernel does that itself.  Fast: no build.  Prints TAP.
. "$(dirname "$0")/tap.sh"
tmp=$(mktemp -d /tmp/pcptune-kpatch.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# source_deb VERSION: the newest cached Debian linux-source-VERSION .deb, if any
source_deb() {
	ls "${PCPTUNE_KERNELS:-/var/tmp/pcptune-kernels}/debs/linux-source-$1_"*_all.deb 2>/dev/null | sort -V | tail -n 1
}

for dir in "$top_srcdir"/contrib/kernel/[0-9]*/; do
	v=$(basename "$dir")
	# 0000-cover-letter.patch holds no diff: the series starts at 0001.
	patches=$(ls "$dir"/[0-9][0-9][0-9][1-9]-*.patch 2>/dev/null)
	[ -n "$patches" ] || continue
	files=$(sed -n 's|^diff --git a/\([^ ]*\) b/.*|\1|p' $patches | sort -u)
	src=${PCPTUNE_SRC:-/var/tmp/pcptune-src}/linux-source-$v
	tree=$tmp/$v
	mkdir -p "$tree"
	if [ -d "$src" ]; then
		(cd "$src" && for f in $files; do [ -e "$f" ] && { mkdir -p "$tree/$(dirname "$f")"; cp "$f" "$tree/$f"; }; done)
		from=$src
	elif [ -f /usr/src/linux-source-$v.tar.xz ] || [ -n "$(source_deb "$v")" ]; then
		members=$(for f in $files; do printf 'linux-source-%s/%s ' "$v" "$f"; done)
		# Files a patch creates are not in the tarball: tar reports them, which is fine.
		if [ -f /usr/src/linux-source-$v.tar.xz ]; then
			from=/usr/src/linux-source-$v.tar.xz
			tar -xJf "$from" -C "$tmp" $members 2>/dev/null
		else
			from=$(source_deb "$v")
			dpkg-deb --fsys-tarfile "$from" | tar -xO "./usr/src/linux-source-$v.tar.xz" |
				tar -xJ -C "$tmp" $members 2>/dev/null
		fi
		[ -d "$tmp/linux-source-$v" ] && { rm -rf "$tree"; mv "$tmp/linux-source-$v" "$tree"; }
	else
		why="no linux-source-$v here"
		case "$v" in
		6.*) why="$why (apt-get install linux-source-$v)" ;;
		*) why="$why: Debian has it in sid only; contrib/kernel/fetch-source $v provides it" ;;
		esac
		for p in $patches; do
			tap_n=$((tap_n + 1)); echo "ok $tap_n - $v/$(basename "$p") # SKIP $why"
		done
		continue
	fi
	for p in $patches; do
		name=$(basename "$p")
		if out=$(patch -p1 -F0 --no-backup-if-mismatch -d "$tree" <"$p" 2>&1) && ! printf '%s' "$out" | grep -qi "fuzz\|offset"; then
			tap_ok "$v/$name applies without fuzz or offset to $from"
		elif printf '%s' "$out" | grep -qi "offset" && ! printf '%s' "$out" | grep -qi "fuzz\|FAILED"; then
			tap_ok "$v/$name applies without fuzz (with line offsets) to $from"
		else
			tap_fail "$v/$name does not apply cleanly to $from" "$out"
		fi
	done
done
[ "$tap_n" -gt 0 ] || tap_skip_all "no kernel source or no patch to check"
tap_done
