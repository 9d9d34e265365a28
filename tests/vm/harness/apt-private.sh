# tests/vm/harness/apt-private.sh: sourced (POSIX sh).  apt-get/apt-cache
# against a private configuration: its own sources file, package lists and
# cache under $PCPTUNE_APT/<name>, so the host's apt sources, lists and
# preferences are never read for resolution nor changed.
#
#   papt_mirror                 the Debian archive URI of the host's apt sources
#                               (deb822 URIs: or one-line deb), or $PCPTUNE_MIRROR
#   papt_init NAME SUITE...     write $PCPTUNE_APT/NAME/sources.list (main, the
#                               Debian archive keyring) and set PAPT_OPTS
#   papt_update                 apt-get update on it (skipped if the lists are
#                               younger than $PCPTUNE_APT_MAXAGE minutes, 360)
#   papt_get ARGS / papt_cache ARGS   apt-get / apt-cache with PAPT_OPTS
PCPTUNE_APT=${PCPTUNE_APT:-/var/tmp/pcptune-apt}

papt_mirror() {
	if [ -n "${PCPTUNE_MIRROR:-}" ]; then printf '%s\n' "$PCPTUNE_MIRROR"; return 0; fi
	# First http(s) URI ending in /debian, from deb822 "URIs:" or one-line "deb" entries.
	# shellcheck disable=SC2086 # PCPTUNE_APT_SOURCES: a file list (the self-test's)
	cat ${PCPTUNE_APT_SOURCES:-/etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list} 2>/dev/null |
		awk '/^[[:space:]]*#/ { next }
		$1 == "URIs:" || $1 == "deb" {
			for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\/.*\/debian\/?$/) { sub(/\/$/, "", $i); print $i; exit }
		}'
}

papt_init() { # NAME SUITE...
	_pn=$1; shift
	_m=$(papt_mirror)
	[ -n "$_m" ] || { echo "apt-private: no Debian mirror in /etc/apt/sources.list(.d) (set PCPTUNE_MIRROR)" >&2; return 1; }
	PAPT_DIR=$PCPTUNE_APT/$_pn
	mkdir -p "$PAPT_DIR/lists/partial" "$PAPT_DIR/cache/archives/partial" || return 1
	{
		for _s in "$@"; do
			case "$_s" in
			*-security) printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s-security %s main\n' "$_m" "$_s" ;;
			*) printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' "$_m" "$_s" ;;
			esac
		done
	} >"$PAPT_DIR/sources.list.new"
	if ! cmp -s "$PAPT_DIR/sources.list.new" "$PAPT_DIR/sources.list" 2>/dev/null; then
		mv "$PAPT_DIR/sources.list.new" "$PAPT_DIR/sources.list"
		rm -f "$PAPT_DIR/updated"
	else
		rm -f "$PAPT_DIR/sources.list.new"
	fi
	# Dir::State::status stays the host's dpkg status (read only: apt-get
	# download and apt-cache never write it).
	PAPT_OPTS="-o Dir::Etc::sourcelist=$PAPT_DIR/sources.list -o Dir::Etc::sourceparts=/dev/null
 -o Dir::Etc::preferences=/dev/null -o Dir::Etc::preferencesparts=/dev/null
 -o Dir::State::Lists=$PAPT_DIR/lists -o Dir::Cache=$PAPT_DIR/cache
 -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o APT::Sandbox::User=root
 -o Acquire::Languages=none -o APT::Get::List-Cleanup=0"
}

papt_update() {
	if [ -f "$PAPT_DIR/updated" ] &&
		[ -z "$(find "$PAPT_DIR/updated" -mmin +"${PCPTUNE_APT_MAXAGE:-360}" 2>/dev/null)" ]; then
		return 0
	fi
	# shellcheck disable=SC2086 # PAPT_OPTS is a word list
	apt-get -q $PAPT_OPTS update >&2 || return 1
	: >"$PAPT_DIR/updated"
}

# shellcheck disable=SC2086
papt_get() { apt-get -q $PAPT_OPTS "$@"; }
# shellcheck disable=SC2086
papt_cache() { apt-cache $PAPT_OPTS "$@"; }
