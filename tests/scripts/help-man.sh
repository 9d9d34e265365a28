#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --help and the man pages agree: every option pcptuned --help and pcptunectl --help show has an entry
# under OPTIONS of pcptuned(8) / pcptunectl(8), and every entry there is in --help; `pcptunectl COMMAND
# --help` shows that command's usage and options (and not other commands'), each in the global help and
# offered by the bash completion for that command; every --help fits 80 columns.  Prints TAP.
. "$(dirname "$0")/tap.sh"

# Long options in --help text, and the OPTIONS entries (the line after .TP) of a man page.
help_opts() { grep -oE -- '(^|[ ,])--[a-z][a-z-]*' | grep -oE -- '--[a-z-]+' | sort -u; }
man_opts() {
	awk '/^\.SH /{ o = ($0 ~ /^\.SH OPTIONS/) } o && prev == ".TP" { print } { prev = $0 }' "$1" |
		grep -oE -- '\\-\\-[a-z][a-z\\-]*' | sed 's/\\//g' | sort -u
}
for prog in pcptuned pcptunectl; do
	bin=$PCPTUNED; [ $prog = pcptunectl ] && bin=$PCPTUNECTL
	h=$("$bin" --help | help_opts) m=$(man_opts "$top_srcdir/man/$prog.8")
	only_help=$(comm -23 <(printf '%s\n' "$h") <(printf '%s\n' "$m"))
	only_man=$(comm -13 <(printf '%s\n' "$h") <(printf '%s\n' "$m"))
	[ -n "$h" ] && [ -z "$only_help" ] && tap_ok "$prog(8) has every option of $prog --help" ||
		tap_fail "$prog(8) lacks options of --help" "$only_help"
	[ -n "$m" ] && [ -z "$only_man" ] && tap_ok "$prog --help shows every option of $prog(8)" ||
		tap_fail "$prog --help lacks options of the man page" "$only_man"
done

for prog in pcptuned pcptunectl; do
	missing=$(for sec in DESCRIPTION OPTIONS FILES EXAMPLES; do grep -q "^\.SH $sec\$" "$top_srcdir/man/$prog.8" || echo "$sec"; done)
	[ -z "$missing" ] && tap_ok "$prog(8) has DESCRIPTION, OPTIONS, FILES and EXAMPLES" || tap_fail "$prog(8) lacks" "$missing"
done

global=$("$PCPTUNECTL" --help | help_opts)
cmds=$("$PCPTUNECTL" --help | sed -n '/^Commands:/,/^Options:/p' | sed -n 's/^  \([a-z][a-z-]*\)\( .*\)\{0,1\}$/\1/p')
completion=$top_srcdir/shell-completion/bash/pcptunectl
for c in $cmds; do
	out=$("$PCPTUNECTL" "$c" --help 2>&1); rc=$?
	own=$(printf '%s\n' "$out" | sed -n '/^Options:/,$p' | help_opts | grep -vxE -- '--help')
	comp=$(sed -n "s/^ *\[$c\]='\([^']*\)'*\$/\1/p" "$completion" | tr ' ' '\n' | grep -- '^--' | sort -u)
	[ "$c" = plan ] && comp=$(sed -n "/^ *\[plan\]='/,/'\$/p" "$completion" | grep -oE -- '--[a-z-]+' | sort -u)
	extra=$(comm -23 <(printf '%s\n' "$own") <(printf '%s\n' "$global"))
	if [ $rc = 0 ] && printf '%s\n' "$out" | head -1 | grep -q "^Usage: pcptunectl \[OPTIONS\] $c" && [ -z "$extra" ] &&
		[ "$own" = "$comp" ]; then
		tap_ok "pcptunectl $c --help: its usage and its options ($(echo $own))"
	else
		tap_fail "pcptunectl $c --help" "rc=$rc" "not in the global help: $extra" "completion: $(echo $comp)" "help: $(echo $own)" "$out"
	fi
done
out=$("$PCPTUNECTL" plan --help)
printf '%s\n' "$out" | grep -q -- "--fraction" && ! printf '%s\n' "$out" | grep -q -- "--since" &&
	printf '%s\n' "$out" | grep -q "min_free_kbytes=" && tap_ok "plan --help: plan's options (with --shape min_free_kbytes=), not history's" ||
	tap_fail "plan --help" "$out"
"$PCPTUNECTL" frobnicate --help >/dev/null 2>&1; [ $? = 2 ] && tap_ok "--help after an unknown command: exit 2" ||
	tap_fail "unknown command --help"
"$PCPTUNECTL" --help | grep -q "^Usage: pcptunectl \[OPTIONS\] COMMAND" && tap_ok "pcptunectl --help: the global help" ||
	tap_fail "global help"
# Every --help fits a terminal of 80 columns: both programs' and each command's; a description never
# runs into its option or command (a word of it right after a word of the head, one space between).
for help in "pcptuned" "pcptunectl" $(for c in $cmds; do echo "pcptunectl:$c"; done); do
	prog=${help%%:*} cmd=${help#*:}; [ "$cmd" = "$help" ] && cmd=
	bin=$PCPTUNED; [ $prog = pcptunectl ] && bin=$PCPTUNECTL
	out=$("$bin" $cmd --help)
	wide=$(printf '%s\n' "$out" | awk 'length > 80 { print length ": " $0 }')
	# A head line (an option or a command) with its description: the description starts at column 26;
	# a head alone on its line is an option or a command and at most one argument.
	runon=$(printf '%s\n' "$out" | grep -E '^  +[^ ]' | grep -vE '^ {25}' | awk 'length > 25' |
		grep -vE '^.{24} [^ ]' | grep -vE '^ +(-[a-zA-Z], )?--[a-z-]+(\[?=[A-Z]+\]?)?( [A-Z][A-Z.:=_]*)?$' |
		grep -vE '^  [a-z]+( -[a-z] [^ ]+| [A-Z.]+)?$')
	[ -n "$out" ] && [ -z "$wide" ] && [ -z "$runon" ] && tap_ok "$prog${cmd:+ $cmd} --help fits 80 columns, descriptions from column 26" ||
		tap_fail "$prog${cmd:+ $cmd} --help: lines wider than 80 columns or run into their head" "$wide" "$runon"
done
tap_done
