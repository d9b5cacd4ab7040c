#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side of the test runner: boot one guest per test program, keep every
# log, parse TAP, fail on any kernel splat, print "N passed, N failed".
#
#   run-tests.sh [-t TOPOLOGY] [-K bzImage] [-D debug-bzImage] [area | area/name]...
#
# Each test source declares where it runs in a header comment:
#   toptier-test: topology=2tier,3tier timeout=300 debug=yes disk_kbps=128
# (disk_kbps: a scratch disk with throttled writes, see scripts/vm.sh -d;
# host_requests=yes: the host plugs memory in when the test asks, -H).
# -t restricts the run to one topology.  Without arguments every test runs.
# With -D, the tests marked debug=yes run a second time on that kernel (the
# KASAN/lockdep build of config/debug.config), with four times the timeout;
# their logs go to <results>/debug/<topology>/<test>.
#
# TOPTIER_GUEST_ARGS is appended to every guest's kernel command line (make
# stress passes toptier.stress_seconds= and toptier.seed= this way), and
# TOPTIER_TIMEOUT_EXTRA seconds are added to every timeout.
source "$(dirname "$0")/lib.sh"

only_topo= kernel= debug_kernel=
while getopts "t:K:D:" opt; do
	case $opt in
	t) only_topo=$OPTARG ;;
	K) kernel=$OPTARG ;;
	D) debug_kernel=$OPTARG ;;
	*) die "usage: $0 [-t topology] [-K bzImage] [-D debug-bzImage] [tests]" ;;
	esac
done
shift $((OPTIND - 1))

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
	msg "running $t on $label (timeout ${tmo}s)"
	boot_collect "$dir" "$tmo" -t "$topo" -T "$t" "${args[@]}" "$k" "$initrd" || rc=$?
	parse_tap "$dir" "$t [$label] $((SECONDS - start))s"
}

for t in "${sel[@]}"; do
	topos=$(meta "$t" topology 2tier)
	tmo=$(($(meta "$t" timeout 300) + ${TOPTIER_TIMEOUT_EXTRA:-0}))
	for topo in ${topos//,/ }; do
		[[ -z $only_topo || $only_topo == "$topo" ]] || continue
		run_one "$t" "$topo" "$kernel" "$rdir/$topo/$t" "$tmo" "$topo"
		[[ -n $debug_kernel && $(meta "$t" debug no) == yes ]] || continue
		run_one "$t" "$topo" "$debug_kernel" "$rdir/debug/$topo/$t" $((4 * tmo)) \
			"$topo debug"
	done
done

echo
((${known:-0} == 0)) || echo "$known known failures (TAP TODO, tracked in open issues), listed above"
echo "$passed passed, $failed failed"
((failed == 0))
