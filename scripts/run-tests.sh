#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side of the test runner: boot one guest per test program, keep every
# log, parse TAP, fail on any kernel splat, print "N passed, N failed".
#
#   run-tests.sh [-t TOPOLOGY] [-K bzImage] [-D debug-bzImage | -d] [-p] [-P]
#                [-j 1|2] [area | area/name]...
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
# way, for the peer suite.  Build output goes to
# <results>/background-builds.log.  -P runs the peer suite too
# (scripts/run-peer.sh; logs in <results>/peer-<stage>.log): two
# baseline guests (on the kernel -p builds) and two patched guests, each
# with half of the jobs (run-peer.sh -g), are four more jobs, and its
# report runs when every job is done.
#
# Every guest to boot is a job in one queue: the first pass's tests, the
# debug pass's, and the peer suite's four guests.  -j 2 runs two workers,
# one guest each (a TCG guest keeps about one core busy), that take jobs
# until none is left, so neither waits while the other has work.  The
# first worker prefers the first pass, then the debug pass, then the peer
# guests.  The second starts once the debug kernel is there, so that on a
# cold machine its build has the second core, and prefers the peer guests
# (its longest jobs), then the debug pass.  A job whose kernel is still
# building is passed over.  Results print as they come.
#
# TOPTIER_GUEST_ARGS is appended to every guest's kernel command line (make
# stress passes toptier.stress_seconds= and toptier.seed= this way), and
# TOPTIER_TIMEOUT_EXTRA seconds are added to every timeout.
source "$(dirname "$0")/lib.sh"

only_topo= kernel= debug_kernel= debug_build= prebuild_baseline= lanes=1 peer=
while getopts "t:K:D:dpPj:" opt; do
	case $opt in
	t) only_topo=$OPTARG ;;
	K) kernel=$OPTARG ;;
	D) debug_kernel=$OPTARG ;;
	d) debug_build=1 ;;
	p) prebuild_baseline=1 ;;
	P) peer=1 ;;
	j) lanes=$OPTARG ;;
	*) die "usage: $0 [-t topology] [-K bzImage] [-D debug-bzImage | -d] [-p] [-P] [-j 1|2] [tests]" ;;
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
		if [[ -n $3 ]]; then
			chrt --idle 0 "$1/scripts/build-kernel.sh" baseline |
				tail -1 > "$5.tmp" && mv "$5.tmp" "$5" || exit 1
		fi
	' bg "$TOPTIER_ROOT" "$debug_build" "$prebuild_baseline" "$rdir/debug-kernel.path" \
		"$rdir/baseline-kernel.path" \
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

# run_one <test> <topology> <kernel> <dir> <timeout> <label> <alone>
run_one() {
	local t=$1 topo=$2 k=$3 dir=$4 tmo=$5 label=$6 alone=$7 start=$SECONDS
	local args=()

	[[ -z ${TOPTIER_GUEST_ARGS:-} ]] || args=(-a "$TOPTIER_GUEST_ARGS")
	local kbps
	kbps=$(meta "$t" disk_kbps "")
	[[ -z $kbps ]] || args+=(-d "$kbps")
	[[ $(meta "$t" host_requests no) != yes ]] || args+=(-H)
	guest_slot_take "$alone"
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

# The queue: one line per guest to boot, "<pass> <test> <topology>
# <timeout> <alone>", pass by pass, each pass's longest timeouts first
# (ties in the order the tests are listed): the long guests start early,
# and the short ones fill in at the end, when one worker would otherwise
# idle while the other runs a long one.  The line numbers of the jobs
# taken go to .taken, both under .queue-lock.
queue=$rdir/.jobs taken=$rdir/.taken
: > "$taken"
{
	for pass in first debug; do
		[[ $pass == first || -n $debug_kernel || -n $debug_build ]] || continue
		for t in "${sel[@]}"; do
			[[ $pass == first || $(meta "$t" debug no) == yes ]] || continue
			tmo=$(($(meta "$t" timeout 300) + ${TOPTIER_TIMEOUT_EXTRA:-0}))
			[[ $pass == first ]] || tmo=$((4 * tmo))
			topos=$(meta "$t" topology 2tier)
			for topo in ${topos//,/ }; do
				[[ -z $only_topo || $only_topo == "$topo" ]] || continue
				printf '%s\t%s\t%s\t%s\t%s\n' "$pass" "$t" "$topo" "$tmo" \
					"$(meta "$t" alone no)"
			done
		done | sort -s -t $'\t' -k4,4nr
	done
	# Each kernel's peer jobs in two guests (run-peer.sh -g), so that on a
	# cold machine the baseline's, the last jobs to become ready, run side
	# by side instead of one guest alone at the end.
	[[ -z $peer ]] ||
		printf 'peer-%s\tpeer suite\t2tier\t0\tno\n' patched-1 patched-2 baseline-1 baseline-2
} > "$queue"

# kernel_state <pass>: the state of the kernel a pass boots:
# ready, building, or failed (its background build exited without it).
kernel_state() {
	local f
	case $1 in
	debug) [[ -n $debug_build ]] || { echo ready; return; }
	       f=$rdir/debug-kernel.path ;;
	peer-baseline-*) [[ -n $prebuild_baseline ]] || { echo ready; return; }
	      f=$rdir/baseline-kernel.path ;;
	*) echo ready; return ;;	# the first pass's kernel, built already
	esac
	if [[ -s $f ]]; then
		echo ready
	elif [[ -n $bg_pid ]] && kill -0 "$bg_pid" 2>/dev/null; then
		echo building
	elif [[ -s $f ]]; then	# written since the first look
		echo ready
	else
		echo failed
	fi
}

# slot_free: no guest runs now (always true with one worker).
slot_free() {
	local fd rc=0
	((lanes == 2)) || return 0
	exec {fd}>> "$rdir/.guest-slot"
	flock -n -x "$fd" || rc=1
	exec {fd}>&-
	return $rc
}

# claim <pass>...: take the first job not yet taken of the first of these
# passes that has one and whose kernel is ready.  While the other worker's
# guest runs, a test marked alone=yes is passed over for the next one that
# is not, so that this worker does not idle until that guest ends; it is
# taken when nothing else is left.  Prints the job's line number, "wait"
# while what is left waits for a kernel, "failed <pass>" (once) when that
# kernel's build failed, or nothing when the queue is empty.
claim() {
	local lock pass n shared alone_ok= pick= fallback=
	exec {lock}>> "$rdir/.queue-lock"
	flock -x "$lock"
	! slot_free || alone_ok=1
	for pass; do
		read -r n shared < <(awk -F'\t' -v p="$pass" -v taken="$taken" '
			BEGIN { while ((getline l < taken) > 0) t[l] = 1; n = s = "-" }
			$1 == p && !(FNR in t) {
				if (n == "-") n = FNR
				if (s == "-" && $5 != "yes") s = FNR
			}
			END { print n, s }' "$queue")
		[[ $n != - ]] || continue
		case $(kernel_state "$pass") in
		building) continue ;;
		failed) awk -F'\t' -v p="$pass" '$1 == p { print NR }' "$queue" >> "$taken"
			echo "failed $pass"
			exec {lock}>&-
			return ;;
		esac
		if [[ -n $alone_ok ]]; then
			pick=$n
		elif [[ $shared != - ]]; then
			pick=$shared
		else
			fallback=${fallback:-$n}
			continue
		fi
		break
	done
	pick=${pick:-$fallback}
	if [[ -n $pick ]]; then
		echo "$pick" >> "$taken"
		echo "$pick"
	elif (($(sort -u "$taken" | wc -l) < $(wc -l < "$queue"))); then
		echo wait
	fi
	exec {lock}>&-
}

# run_peer <baseline-N|patched-N|report>: a stage of the peer suite, N
# the guest of the kernel's two (run-peer.sh -g); its output goes to
# peer-<stage>.log.  The four guests are jobs of the queue, the report
# (with any retries) runs once they are done.
run_peer() {
	local log=$rdir/peer-$1.log start=$SECONDS rc=0 args=() verdict=PASS line
	local stage=${1%-[12]} label
	case $1 in
	baseline-*) [[ -z $prebuild_baseline ]] ||
			args=(-B "$(cat "$rdir/baseline-kernel.path")") ;;
	*) args=(-K "$kernel") ;;
	esac
	label=$stage
	[[ $1 == "$stage" ]] || { args+=(-g "${1##*-}"); label=$stage-g${1##*-}; }
	guest_slot_take no
	msg "running the peer suite's $1 stage (log: $log)"
	"$TOPTIER_ROOT/scripts/run-peer.sh" -s "$stage" "${args[@]}" -o "$rdir/peer" \
		> "$log" 2>&1 || rc=$?
	guest_slot_give
	if [[ $1 == report ]]; then
		ln -sfn "$run_id" "$TOPTIER_RESULTS/latest-peer"
		line=$(sed -n 's/^peer: //p' "$log" | tail -1)
	else
		line=$(sed -n "s/^>>> $label: //p" "$log" | tail -1)
	fi
	((rc == 0)) || { verdict=FAIL; failed=$((failed + 1)); }
	printf '%-4s %-40s %s\n' "$verdict" "peer suite, ${1/-/ } [2tier] $((SECONDS - start))s" \
		"${line:-no result}" | tee -a "$summary"
	[[ $verdict == PASS ]] || { tail -15 "$log" | sed 's/^/       /'
		echo "       logs: $log, $rdir/peer"; } | tee -a "$summary"
}

# worker <name> <pass>...: take jobs, preferring the passes in this order,
# until none is left; the counts go to <results>/lane-<name>.
worker() {
	local name=$1 job pass t topo tmo alone
	shift
	passed=0 failed=0 skipped=0 known=0
	while :; do
		job=$(claim "$@")
		case $job in
		'') break ;;
		wait) sleep 2; continue ;;
		failed\ *)
			pass=${job#failed }
			tail -20 "$rdir/background-builds.log" >&2
			echo "FAIL the $pass pass's kernel did not build; see $rdir/background-builds.log" |
				tee -a "$summary"
			failed=$((failed + 1))
			continue ;;
		esac
		IFS=$'\t' read -r pass t topo tmo alone < <(sed -n "${job}p" "$queue")
		case $pass in
		first) run_one "$t" "$topo" "$kernel" "$rdir/$topo/$t" "$tmo" "$topo" "$alone" ;;
		debug) [[ -n $debug_kernel ]] || debug_kernel=$(cat "$rdir/debug-kernel.path")
		       run_one "$t" "$topo" "$debug_kernel" "$rdir/debug/$topo/$t" "$tmo" \
			       "$topo debug" "$alone" ;;
		peer-*) run_peer "${pass#peer-}" ;;
		esac
	done
	echo "$passed $failed $skipped $known" > "$rdir/lane-$name"
}

workers=(first)
if ((lanes == 2)); then
	workers+=(second)
	worker first first debug peer-patched-1 peer-patched-2 peer-baseline-1 peer-baseline-2 &
	first=$!
	(
		# The second core is the debug kernel's build's until it is done.
		if [[ -n $debug_build ]]; then
			msg "the second worker waits for the debug kernel's build"
			while [[ $(kernel_state debug) == building ]]; do sleep 2; done
		fi
		worker second peer-baseline-1 peer-baseline-2 peer-patched-2 peer-patched-1 debug first
	) &
	second=$!
	wait "$first" || true
	wait "$second" || true
else
	worker first first debug peer-patched-1 peer-patched-2 peer-baseline-1 peer-baseline-2
fi
# The peer suite's report, on what its two guests left.
if [[ -n $peer ]]; then
	workers+=(report)
	passed=0 failed=0 skipped=0 known=0
	run_peer report
	echo "$passed $failed $skipped $known" > "$rdir/lane-report"
fi
passed=0 failed=0 skipped=0 known=0
for l in "${workers[@]}"; do
	[[ -f $rdir/lane-$l ]] || { echo "the $l worker did not finish" | tee -a "$summary"
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
grep -h '^.... peer suite, report' "$summary" || true
echo "$passed passed, $failed failed"
((failed == 0))
