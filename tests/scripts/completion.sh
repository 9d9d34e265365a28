#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shell-completion/bash/pcptunectl, sourced in bash with Debian's bash-completion
# as an interactive shell would: the commands and long options it offers are
# exactly those of `pcptunectl --help`, each command gets its own options (also
# after other options), and arguments complete to policy files, directories,
# snapshot archives, knobs and --shape keys.  Prints TAP.
. "$(dirname "$0")/tap.sh"

bc=${BASH_COMPLETION:-/usr/share/bash-completion/bash_completion}
[ -r "$bc" ] || tap_skip_all "bash-completion is not installed ($bc)"
comp=$top_srcdir/shell-completion/bash/pcptunectl
tmp=$(mktemp -d /tmp/pcptune-completion.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/work/sub" "$tmp/work/fleet"
: >"$tmp/work/a.yaml"; : >"$tmp/work/b.yml"; : >"$tmp/work/notes.txt"; : >"$tmp/work/host1.tar.gz"

# Complete LINE (the cursor at its end) in a fresh bash; prints the candidates
# sorted, one a line.
complete_line() { # line
	(cd "$tmp/work" && bash --norc --noprofile -c '
		. "$1" || exit 3
		. "$2" || exit 3
		line=$3
		read -r -a COMP_WORDS <<<"$line"
		[[ $line == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) COMP_LINE=$line COMP_POINT=${#line}
		spec=$(complete -p pcptunectl) || exit 4
		fn=${spec#*-F }; fn=${fn%% *}
		"$fn" pcptunectl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sed "/^$/d" | LC_ALL=C sort' _ "$bc" "$comp" "$1" 2>"$tmp/stderr")
	# compopt works only inside a completion that bash started: its complaint
	# here is expected; anything else is shown.
	grep -v 'compopt: not currently executing completion function' "$tmp/stderr" | sed 's/^/# stderr: /'
}
expect() { # name line expected-words...
	local name=$1 line=$2 got want; shift 2
	got=$(complete_line "$line")
	want=$(printf '%s\n' "$@" | sed '/^$/d' | LC_ALL=C sort)
	[ "$got" = "$want" ] && tap_ok "$name" || tap_fail "$name" "line: '$line'" "got: $(echo $got)" "want: $(echo $want)"
}
has() { # name line words... (each must be offered)
	local name=$1 line=$2 got w miss=""; shift 2
	got=$(complete_line "$line")
	for w in "$@"; do printf '%s\n' "$got" | grep -qxF -- "$w" || miss="$miss $w"; done
	[ -z "$miss" ] && tap_ok "$name" || tap_fail "$name" "line: '$line'" "missing:$miss" "got: $(echo $got)"
}
lacks() { # name line words... (none may be offered)
	local name=$1 line=$2 got w extra=""; shift 2
	got=$(complete_line "$line")
	for w in "$@"; do printf '%s\n' "$got" | grep -qxF -- "$w" && extra="$extra $w"; done
	[ -z "$extra" ] && tap_ok "$name" || tap_fail "$name" "line: '$line'" "offered:$extra"
}

help=$("$PCPTUNECTL" --help)
help_cmds=$(printf '%s\n' "$help" | sed -n '/^Commands:/,/^Options:/p' | sed -n 's/^  \([a-z][a-z-]*\)\( .*\)\{0,1\}$/\1/p')
help_opts=$(printf '%s\n' "$help" | sed -n '/^Options:/,$p' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
[ -n "$help_cmds" ] && [ -n "$help_opts" ] || tap_fail "pcptunectl --help lists commands and options" "$help"

# shellcheck disable=SC2086
expect "pcptunectl <TAB>: every command of --help, nothing else" "pcptunectl " $help_cmds
# shellcheck disable=SC2086
expect "pcptunectl --<TAB>: every long option of --help, nothing else" "pcptunectl --" $help_opts
expect "a prefix completes the command" "pcptunectl pl" plan
expect "a prefix that two commands share" "pcptunectl re" repair resume restore
has "plan's options" "pcptunectl plan --" --fraction --shape --managed --containers --memcgs-per-container --measure --csv --json --root
lacks "plan does not offer other commands' options" "pcptunectl plan --" --force --output --since
has "snapshot's options" "pcptunectl snapshot --" --output --root
lacks "snapshot does not offer plan's" "pcptunectl snapshot --" --fraction --json
expect "options before the command (with arguments) do not hide it" "pcptunectl -s /run/pcptune --root / plan --js" --json
expect "an option after the command" "pcptunectl repair --f" --force
expect "resume completes the knobs" "pcptunectl resume " vm.pcp_batch_scale_max vm.percpu_pagelist_high_fraction
expect "resume takes one knob" "pcptunectl resume vm.pcp_batch_scale_max "
expect "validate completes policy files and directories" "pcptunectl validate " a.yaml b.yml fleet sub
expect "--state-dir completes directories" "pcptunectl --state-dir " fleet sub
expect "--root completes directories and snapshot archives" "pcptunectl plan --root " fleet host1.tar.gz sub
expect "--shape completes its keys after a comma" "pcptunectl plan --shape cpus=4,n" cpus=4,nodes=
expect "--fraction takes a number: no candidates" "pcptunectl plan --fraction "
has "history's options" "pcptunectl history --" --since --until --json --directory
lacks "history does not offer plan's" "pcptunectl history --" --fraction --shape
tap_done
