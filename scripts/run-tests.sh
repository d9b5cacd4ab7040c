#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side of the test runner: boot one guest per test program, keep every
# log, parse TAP, fail on any kernel splat, print "N passed, N failed".
#
#   run-tests.sh [-t TOPOLOGY] [-K bzImage] [-D debug-bzImage | -d] [-p] [-j 1|2]
#                [area | area/name]...
#
# Each test source declares where it runs in a header comment:
#   toptier-test: topology=2tier,3tier timeout=300 debug=yes disk_kbps=128
# (disk_kbps: a scratch disk with throttled writes, see scripts/vm.sh -d;
# host_requests=yes: the host plugs memory in when the test asks, -H;
# alone=yes: with -j 2, no other guest runs beside it, for tests whose
# assertions include a deadline or a rate that a shared host would halve).
# -t restricts the run to one topology.  Without arguments every test runs.
# With -D, the tests marked debug=yes run a second time on that kernel (the
# KASAN/lockdep build of config/debug.config), with four times the timeout,
# after every test has run once; their logs go to
# <results>/debug/<topology>/<test>.  -d builds that kernel itself, in the
# background while the first pass runs, at idle priority (chrt --idle):
# the guests, about one core's worth under TCG, keep the CPU they want and
# the build takes the rest.  -p then builds the baseline kernel the same
# way, for the peer suite that make check runs next.  Build output goes to
# <results>/background-builds.log.  -j 2 runs the debug pass alongside the
# first one, one guest each (a TCG guest keeps about one core busy), as
# soon as the debug kernel is there; results print as they come.
#
# TOPTIER_GUEST_ARGS is appended to every guest's kernel command line (make
# stress passes toptier.stress_seconds= and toptier.seed= this way), and
# TOPTIER_TIMEOUT_EXTRA seconds are added to every timeout.
source "$(dirname "$0")/lib.sh"

only_topo= kernel= debug_kernel= debug_build= prebuild_baseline= lanes=1
while getopts "t:K:D:dpj:" opt; do
	case $opt in
	t) only_topo=$OPTARG ;;
	K) kernel=$OPTARG ;;
	D) debug_kernel=$OPTARG ;;
	d) debug_build=1 ;;
	p) prebuild_baseline=1 ;;
	j) lanes=$OPTARG ;;
	*) die "usage: $0 [-t topology] [-K bzImage] [-D debug-bzImage | -d] [-p] [-j 1|2] [tests]" ;;
	esac
done
shift $((OPTIND - 1))
[[ $lanes == 1 || $lanes == 2 ]] || die "-j takes 1 or 2, not '$lanes'"

if [[ -z $kernel ]]; then
	kernel=$("$TOPTIER_ROOT/scripts/build-kernel.sh" toptier | tail -1)
fi
[[ -f $kernel ]] || die "no kernel at $kernel"
[[ -z $debug_kernel || -f $debug_kernel ]] || die "no debug kernel at $debug_kernel"

msg "building the guest test programs"
test_initramfs
initrd=$INITRD

# Select the tests.
mapfile -t all < <(cd "$TOPTIER_ROOT/tests" && ls -1 -- */*.c | grep -v '^lib/' | sed 's/\.c$//' | sort)
sel=()
if (($#)); then
	for a in "$@"; do
		found=
		for t in "${all[@]}"; do
			[[ $t == "$a" || ${t%%/*} == "$a" ]] && { sel+=("$t"); found=1; }
		done
		[[ -n $found ]] || die "no test or area named '$a'"
	done
else
	sel=("${all[@]}")
fi

meta() {	# meta <test> <key> <default>
	local v
	v=$(sed -n "s/.*toptier-test:.*\b$2=\([^ ]*\).*/\1/p" "$TOPTIER_ROOT/tests/$1.c" | head -1)
	echo "${v:-$3}"
}

run_id=$(date +%Y%m%d-%H%M%S)
rdir=$TOPTIER_RESULTS/$run_id
mkdir -p "$rdir"
ln -sfn "$run_id" "$TOPTIER_RESULTS/latest"
msg "results in $rdir"

# The kernels still to build, one after the other, on the CPU the guests
# leave idle.  The toptier tree is prepared by now, so these builds only
# read it.
bg_pid=
# On the way out (also an interrupted run): the builds and the passes.
# Under set -e, so nothing here may fail.
stop_background() {
	local jobs
	[[ -z $bg_pid ]] || kill -- -"$bg_pid" 2>/dev/null || true
	jobs=$(jobs -p)
	[[ -z $jobs ]] || kill $jobs 2>/dev/null || true
}
if [[ -n $debug_build || -n $prebuild_baseline ]]; then
	# Its own session, so that an interrupted run can stop the whole build.
	setsid bash -c '
		set -o pipefail
		if [[ -n $2 ]]; then
			DEBUG=1 chrt --idle 0 "$1/scripts/build-kernel.sh" toptier |
				tail -1 > "$4.tmp" && mv "$4.tmp" "$4" || exit 1
		fi
		[[ -z $3 ]] || chrt --idle 0 "$1/scripts/build-kernel.sh" baseline > /dev/null
	' bg "$TOPTIER_ROOT" "$debug_build" "$prebuild_baseline" "$rdir/debug-kernel.path" \
		< /dev/null 2> "$rdir/background-builds.log" &
	bg_pid=$!
	trap stop_background EXIT
	msg "building $([[ -z $debug_build ]] || echo 'the debug kernel')$([[ -z $debug_build ||
		-z $prebuild_baseline ]] || echo ', then ')$([[ -z $prebuild_baseline ]] ||
		echo 'the baseline kernel') in the background at idle priority" \
	    "(log: $rdir/background-builds.log)"
fi
detect_accel "$kernel" "$initrd"

passed=0 failed=0 skipped=0
summary=$rdir/summary.txt
: > "$summary"

source "$TOPTIER_ROOT/scripts/tap-parse.sh"

# run_one <test> <topology> <kernel> <dir> <timeout> <label>
run_one() {
	local t=$1 topo=$2 k=$3 dir=$4 tmo=$5 label=$6 start=$SECONDS
	local args=()

	[[ -z ${TOPTIER_GUEST_ARGS:-} ]] || args=(-a "$TOPTIER_GUEST_ARGS")
	local kbps
	kbps=$(meta "$t" disk_kbps "")
	[[ -z $kbps ]] || args+=(-d "$kbps")
	[[ $(meta "$t" host_requests no) != yes ]] || args+=(-H)
	guest_slot_take "$(meta "$t" alone no)"
	start=$SECONDS
	msg "running $t on $label (timeout ${tmo}s)"
	boot_collect "$dir" "$tmo" -t "$topo" -T "$t" "${args[@]}" "$k" "$initrd" || rc=$?
	guest_slot_give
	parse_tap "$dir" "$t [$label] $((SECONDS - start))s"
}

# With two lanes, every guest holds the slot lock shared, and a test marked
# alone=yes holds it exclusively.  The gate in front of it keeps a lane
# that wants the slot alone from waiting for ever behind the other lane's
# next guest and the next (flock prefers no one).
slot_fd= gate_fd=
guest_slot_take() {	# guest_slot_take yes|no
	((lanes == 2)) || return 0
	exec {gate_fd}>> "$rdir/.guest-gate" {slot_fd}>> "$rdir/.guest-slot"
	flock -x "$gate_fd"
	if [[ $1 == yes ]]; then
		flock -x "$slot_fd"
	else
		flock -s "$slot_fd"
	fi
	flock -u "$gate_fd"
	exec {gate_fd}>&-
}
guest_slot_give() {
	[[ -n $slot_fd ]] || return 0
	flock -u "$slot_fd"
	exec {slot_fd}>&-
	slot_fd=
}

# run_pass <debug>: every selected test on each of its topologies, on the
# normal kernel, or (debug=1) those marked debug=yes on the debug kernel.
run_pass() {
	local t topos tmo topo
	for t in "${sel[@]}"; do
		[[ $1 == 0 || $(meta "$t" debug no) == yes ]] || continue
		topos=$(meta "$t" topology 2tier)
		tmo=$(($(meta "$t" timeout 300) + ${TOPTIER_TIMEOUT_EXTRA:-0}))
		for topo in ${topos//,/ }; do
			[[ -z $only_topo || $only_topo == "$topo" ]] || continue
			if [[ $1 == 0 ]]; then
				run_one "$t" "$topo" "$kernel" "$rdir/$topo/$t" "$tmo" "$topo"
			else
				run_one "$t" "$topo" "$debug_kernel" "$rdir/debug/$topo/$t" \
					$((4 * tmo)) "$topo debug"
			fi
		done
	done
}

# The debug kernel, once the background build has made it (polled: the
# build is not this subshell's child when the passes run side by side).
debug_kernel_ready() {
	local start=$SECONDS
	[[ -n $debug_build ]] || return 0
	msg "waiting for the debug kernel's background build"
	while [[ ! -s $rdir/debug-kernel.path ]]; do
		kill -0 "$bg_pid" 2>/dev/null || [[ -s $rdir/debug-kernel.path ]] || {
			tail -20 "$rdir/background-builds.log" >&2
			die "the debug kernel's background build failed; see" \
			    "$rdir/background-builds.log"; }
		sleep 2
	done
	debug_kernel=$(cat "$rdir/debug-kernel.path")
	[[ -f $debug_kernel ]] || die "no debug kernel at '$debug_kernel'"
	msg "debug kernel ready ($((SECONDS - start)) s waited)"
}

# lane <name> <pass>: a pass whose counts are left in <results>/lane-<name>.
lane() {
	passed=0 failed=0 skipped=0 known=0
	if [[ $2 == 1 ]]; then
		debug_kernel_ready
	fi
	[[ $2 == 0 || -n $debug_kernel ]] && run_pass "$2"
	echo "$passed $failed $skipped $known" > "$rdir/lane-$1"
}

if ((lanes == 2)); then
	lane first 0 &
	first=$!
	lane debug 1 &
	second=$!
	wait "$first" || true
	wait "$second" || true
else
	lane first 0
	lane debug 1
fi
passed=0 failed=0 skipped=0 known=0
for l in first debug; do
	[[ -f $rdir/lane-$l ]] || { echo "the $l pass did not finish" | tee -a "$summary"
		failed=$((failed + 1)); continue; }
	read -r p f s k < "$rdir/lane-$l"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s)) known=$((known + k))
done
if [[ -n $bg_pid ]]; then
	msg "waiting for the background builds"
	wait "$bg_pid" || { tail -20 "$rdir/background-builds.log" >&2
		die "a background kernel build failed; see $rdir/background-builds.log"; }
	bg_pid=
fi

echo
((${known:-0} == 0)) || echo "$known known failures (TAP TODO, tracked in open issues), listed above"
echo "$passed passed, $failed failed"
((failed == 0))
