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

# The peer suite's parser (scripts/peer-parse.sh): every kselftest result
# form, a guest that died inside a job, and a splat blamed on its job.
source "$TOPTIER_ROOT/scripts/peer-parse.sh"
peer_check() {	# peer_check <name> <want> <got>
	[[ $2 == "$3" ]] && return
	printf 'runner selftest: peer %s:\n  want %s\n  got  %s\n' "$1" "$2" "$3" >&2
	errors=$((errors + 1))
}
d=$tmp/peer/patched
mkdir -p "$d"
printf '%b' '# toptier-guest: kernel 6.12\n# peer-env: swap=0\n# toptier-guest: begin a/one\n' \
'TAP version 13\n1..7\nok 1 plain\nok 2 # SKIP prefix_skip\nnot ok 3 failed\n' \
'ok 4 h.harness_skip # SKIP Not enough\nnot ok 5 # error erred\nok 6 xf # XFAIL known\nok 7 plain\n' \
'# toptier-guest: end a/one rc=1\n# toptier-guest: begin b/two\n# peer: b/two killed after its 9s timeout\n' \
'# toptier-guest: end b/two rc=137\n# toptier-guest: begin c/three\nok 1 half\n' > "$d/tap.log"
printf '%b' '[ 1.0] toptier-peer: begin a/one\r\n[ 2.0] toptier-peer: begin b/two\n' \
'[ 2.5] WARNING: CPU: 0 PID: 1 at mm/x.c:1\n[ 3.0] toptier-peer: begin c/three\n' > "$d/console.log"
cases "$d"
peer_check cases "$(printf '%s|' 'a/one	plain	pass' 'a/one	prefix_skip	skip' \
	'a/one	failed	fail' 'a/one	h.harness_skip	skip' 'a/one	erred	fail' 'a/one	xf	pass' \
	'a/one	plain [7]	pass' 'a/one	(exit)	fail (rc=1)' 'a/one	(kernel log)	pass' \
	'b/two	(exit)	fail (timeout)' 'b/two	(kernel log)	fail (splat)' 'c/three	half	pass' \
	'c/three	(exit)	fail (no end: guest died or was killed)' 'c/three	(kernel log)	pass')" \
	"$(tr '\n' '|' < "$d/cases.tsv")"
# compare: baseline, patched, one retry of the patched kernel.
printf '%s\n' 'j/1	same	pass' 'j/1	regr	pass' 'j/1	flaky	pass' 'j/1	both	fail' \
	'j/1	gone	pass' 'j/1	better	fail' 'j/1	skips	skip' 'j/1	mixed	fail' 'j/0	first	pass' > "$tmp/peer/b.tsv"
printf '%s\n' 'j/1	same	pass' 'j/1	regr	fail' 'j/1	flaky	fail' 'j/1	both	fail' \
	'j/1	better	pass' 'j/1	skips	skip' 'j/1	mixed	skip' 'j/1	new	pass' 'j/0	first	pass' > "$tmp/peer/p.tsv"
printf '%s\n' 'j/1	regr	skip' 'j/1	flaky	pass' > "$tmp/peer/r.tsv"
peer_check compare "$(printf '%s|' 'j/0	first	pass	pass	' 'j/1	same	pass	pass	' \
	'j/1	regr	pass	fail, retry 1: skip	REGRESSION' 'j/1	flaky	pass	fail, retry 1: pass	flaky on patched' \
	'j/1	both	fail	fail	fails on both' 'j/1	gone	pass	missing	REGRESSION' \
	'j/1	better	fail	pass	better on patched' 'j/1	skips	skip	skip	skipped on both' \
	'j/1	mixed	fail	skip	passes on neither' 'j/1	new	missing	pass	better on patched')" \
	"$(compare "$(printf 'j/0\nj/1')" "$tmp/peer/b.tsv" "$tmp/peer/p.tsv" "$tmp/peer/r.tsv" | tr '\n' '|')"

((errors == 0)) || die "the test runner's own checks failed ($errors)"
msg "runner selftest: 15 verdicts and the peer parser as expected"
