#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Check the runner's verdicts on canned guest logs, so that a broken test,
# a crashed guest or a kernel WARN can never pass unnoticed.
source "$(dirname "$0")/lib.sh"
source "$TOPTIER_ROOT/scripts/tap-parse.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
summary=$tmp/summary
errors=0

# case <name> <want-failed> <tap> <console>
case_() {
	local name=$1 want=$2 d=$tmp/$1
	mkdir -p "$d"
	printf '%b' "$3" > "$d/tap.log"
	printf '%b' "$4" > "$d/console.log"
	passed=0 failed=0 skipped=0
	parse_tap "$d" "$name" > /dev/null
	if (( (failed > 0) != (want > 0) )); then
		echo "runner selftest: $name: $failed failures, want $want" >&2
		errors=$((errors + 1))
	fi
}

good='TAP version 13\n1..2\nok 1 a\nok 2 b # SKIP why\n# toptier-guest: end x/y rc=0\n'
case_ clean 0 "$good" '[ 1.0] booted\n'
case_ not_ok 1 'TAP version 13\n1..2\nok 1 a\nnot ok 2 b\n# toptier-guest: end x/y rc=1\n' ''
case_ warn 1 "$good" '[ 2.0] ------------[ cut here ]------------\n[ 2.0] WARNING: CPU: 0 PID: 1 at mm/x.c:1\n'
case_ oops 1 "$good" '[ 2.0] BUG: kernel NULL pointer dereference\n'
case_ lockdep 1 "$good" '[ 2.0] WARNING: possible circular locking dependency detected\n'
case_ hung 1 "$good" '[ 2.0] INFO: task x:1 blocked for more than 120 seconds.\n'
case_ panic 1 "$good" '[ 2.0] Kernel panic - not syncing: Fatal exception\n'
case_ softlockup 1 "$good" '[ 2.0] watchdog: BUG: soft lockup - CPU#0 stuck for 22s!\n'
case_ kasan 1 "$good" '[ 2.0] KASAN: slab-use-after-free in x\n'
case_ kmemleak 1 "$good" '[ 9.0] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)\n'
case_ no_end 1 'TAP version 13\n1..2\nok 1 a\n' ''
case_ short_plan 1 'TAP version 13\n1..3\nok 1 a\nok 2 b\n# toptier-guest: end x/y rc=0\n' ''
case_ bad_exit 1 'TAP version 13\n1..1\nok 1 a\n# toptier-guest: end x/y rc=139\n' ''
case_ todo_only 0 'TAP version 13\n1..2\nok 1 a\nnot ok 2 b # TODO known bug\n# toptier-guest: end x/y rc=0\n' ''
case_ todo_and_fail 1 'TAP version 13\n1..2\nnot ok 1 a\nnot ok 2 b # TODO known bug\n# toptier-guest: end x/y rc=1\n' ''
case_ no_plan 1 'ok 1 a\n# toptier-guest: end x/y rc=0\n' ''

((errors == 0)) || die "the test runner's own checks failed ($errors)"
msg "runner selftest: 15 verdicts as expected"
