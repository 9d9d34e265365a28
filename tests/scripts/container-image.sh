#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The container image's configuration (contrib/container/build-image
# --print-changes), fast, without building the image: one LABEL per key with
# the title and configure's version, the entry point pcptuned; and, where
# podman runs (root), `podman import` of a one-file tree with exactly these
# changes gives an image whose labels and entry point are these (and the old
# one-line LABEL's reading is printed as a diagnostic).
# The image made here is removed.  make check-container builds the real one.
# Prints TAP.
. "$(dirname "$0")/tap.sh"

bi=$top_srcdir/contrib/container/build-image
version=$(sed -n 's/^AC_INIT(\[pcptune\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")
changes=$(bash "$bi" --print-changes "$version") || { tap_fail "build-image --print-changes $version"; tap_done; exit; }
labels=$(printf '%s\n' "$changes" | sed -n 's/^LABEL //p')
bad=$(printf '%s\n' "$labels" | grep -Ev '^[a-z0-9.]+=[^ =]+$')
[ -n "$labels" ] && [ -z "$bad" ] && tap_ok "every LABEL change sets one key ($(printf '%s\n' "$labels" | wc -l) labels)" ||
	tap_fail "LABEL changes with more than one key=value or a blank" "$bad"
printf '%s\n' "$labels" | grep -qx 'org.opencontainers.image.title=pcptune' && tap_ok "label org.opencontainers.image.title=pcptune" ||
	tap_fail "no title label" "$labels"
printf '%s\n' "$labels" | grep -qxF "org.opencontainers.image.version=$version" &&
	tap_ok "label org.opencontainers.image.version=$version (configure.ac)" || tap_fail "no version label $version" "$labels"
printf '%s\n' "$changes" | grep -qxF 'ENTRYPOINT ["/usr/sbin/pcptuned"]' && tap_ok "entry point /usr/sbin/pcptuned" ||
	tap_fail "entry point" "$changes"
bash "$bi" --print-changes '0.1 x' >/dev/null 2>&1 && tap_fail "a version with a blank is accepted" ||
	tap_ok "a version with a blank (it would split the label) is refused"

if [ "$(id -u)" = 0 ] && command -v podman >/dev/null && podman info >/dev/null 2>&1; then
	tmp=$(mktemp -d /tmp/pcptune-image-labels.XXXXXX)
	tag=localhost/pcptune-label-test:$$
	trap 'podman rmi -f "$tag" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
	echo test >"$tmp/file"
	tar -C "$tmp" -cf "$tmp/tree.tar" file
	args=()
	while IFS= read -r c; do args+=(--change "$c"); done <<<"$changes"
	if podman import "${args[@]}" "$tmp/tree.tar" "$tag" >/dev/null 2>"$tmp/err"; then
		got=$(podman image inspect --format '{{range $k, $v := .Labels}}{{$k}}={{$v}}{{"\n"}}{{end}}' "$tag" | grep . | sort)
		want=$(printf '%s\n' "$labels" | sort)
		[ "$got" = "$want" ] && tap_ok "podman import: the image's labels are exactly these ($(echo $got))" ||
			tap_fail "the imported image's labels" "got: $got" "want: $want"
		ep=$(podman image inspect --format '{{json .Config.Entrypoint}} {{.Config.StopSignal}}' "$tag")
		case $ep in '["/usr/sbin/pcptuned"] SIGTERM' | '["/usr/sbin/pcptuned"] 15') true ;; *) false ;; esac && tap_ok "podman import: entry point and stop signal ($ep)" ||
			tap_fail "entry point/stop signal" "$ep"
		podman rmi -f "$tag" >/dev/null 2>&1
		# Why one LABEL per key: the old form.
		podman import --change "LABEL org.opencontainers.image.title=pcptune org.opencontainers.image.version=$version" \
			"$tmp/tree.tar" "$tag" >/dev/null 2>&1
		old=$(podman image inspect --format '{{index .Labels "org.opencontainers.image.title"}}' "$tag" 2>&1)
		echo "# for the record, podman import reads 'LABEL k1=v1 k2=v2' as title='$old' (issue 22 item 6)"
		podman rmi -f "$tag" >/dev/null 2>&1
	else
		tap_fail "podman import of a one-file tree" "$(cat "$tmp/err")"
	fi
else
	echo "ok $((++tap_n)) - # SKIP podman import (needs root and a working podman)"
fi
tap_done
