#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tap.sh's knob_save/knob_write/knob_ours/knob_restore, which the live tests use to restore only what
# they changed (issue 21, item 9), on a regular file standing for a sysctl: the saved value comes back
# when the file holds a value of the test's; another writer's value is left, with a diagnostic.  Prints TAP.
. "$(dirname "$0")/tap.sh"

tmp=$(mktemp -d /tmp/pcptune-live-restore.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
f=$tmp/percpu_pagelist_high_fraction

# The test wrote 1000 and nobody else wrote: its cleanup puts 0 back.
echo 0 >"$f"
knob_save "$f"; knob_write "$f" 1000
out=$(knob_restore "$f")
[ "$(cat "$f")" = 0 ] && [ -z "$out" ] && tap_ok "the file holds the test's value: the saved value (0) is restored" ||
	tap_fail "restore own value" "file $(cat "$f")" "$out"

# Another writer changed it after the test's write: left as it is, and said.
echo 0 >"$f"
knob_save "$f"; knob_write "$f" 1000
echo 500 >"$f" # another writer
out=$(knob_restore "$f")
if [ "$(cat "$f")" = 500 ] && printf '%s\n' "$out" | grep -q "^# $f holds 500, which this test did not write (its values: 0 1000): another writer changed it; left as it is, not restored to 0$"; then
	tap_ok "another writer's 500: left, with a TAP diagnostic"
else
	tap_fail "another writer" "file $(cat "$f")" "$out"
fi

# A value the test saw its own pcptuned write is the test's too.
echo 0 >"$f"
knob_save "$f"; knob_write "$f" 0
echo 4242 >"$f" # the test's daemon
knob_ours "$f" 4242
out=$(knob_restore "$f")
[ "$(cat "$f")" = 0 ] && [ -z "$out" ] && tap_ok "a value of the test's own daemon (knob_ours): restored to 0" ||
	tap_fail "daemon's value" "file $(cat "$f")" "$out"

# Still at the saved value: nothing written (the file's mtime does not move).
echo 7 >"$f"; knob_save "$f"; touch -d @1000000000 "$f"
knob_restore "$f"
[ "$(stat -c %Y "$f")" = 1000000000 ] && tap_ok "a file still at its saved value is not written" || tap_fail "no-op restore" "$(stat -c %Y "$f")"

# A file never saved is never written.
echo 9 >"$tmp/other"; touch -d @1000000000 "$tmp/other"
knob_restore "$tmp/other"
[ "$(stat -c %Y "$tmp/other")" = 1000000000 ] && tap_ok "a file the test did not save is left alone" || tap_fail "unsaved file"
tap_done
