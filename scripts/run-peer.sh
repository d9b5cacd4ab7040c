#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The peer suite (issue 7): upstream selftests (tests/peer/jobs: cgroup's
# test_memcontrol, test_kmem, test_cpuset; mm's migration,
# split_huge_page_test, compaction_test) on the baseline and on the patched
# kernel, one guest each, compared case by case.
#
#   run-peer.sh [-K patched-bzImage] [-B baseline-bzImage] [-t TOPOLOGY]
#               [-j job,job] [-o DIR] [-r RETRIES] [-s baseline|patched|report]
#               [-g 1|2]
#
# Without -K/-B the kernels are built (scripts/build-kernel.sh).  -j runs
# only some jobs (a name from tests/peer/jobs, or its part before ':').
# Results go to DIR (default results/<run>/peer): baseline/ and patched/
# with each guest's console.log and tap.log, cases.tsv per kernel, and the
# side-by-side table.md and table.tsv.  A job with a regression runs again
# on the patched kernel, up to RETRIES (default 2) more times, in
# patched-retryN/: a case that passes there is reported as flaky, not as a
# regression.
#
# -s runs one stage, so that the two guests can run side by side
# (run-tests.sh -P): "baseline" and "patched" boot one kernel each into DIR
# (-o is then required), "report" compares what they left, with the
# retries.  The patched guest normally gets the baseline's environment; if
# it ran first and its environment differs, the report stage boots it
# again with the baseline's.  Without -s every stage runs in turn.
#
# -g splits a baseline or patched stage over two guests: it boots only the
# jobs of that guest (the job list's guest column), into <kernel>-g1/ or
# -g2/, and the report stage joins the halves into <kernel>/.  make check
# runs the four guests as jobs of its queue, so that each kernel's halves
# can run side by side.
#
# Exits non-zero iff a case passes on the baseline and does not pass (fails,
# skips or is missing) on the patched kernel.  A case that passes on neither
# is listed but does not fail the run: the guest configuration lacks things
# some upstream tests need (see docs/testing.md).  Each binary's exit status
# is a case, "(exit)", and so is "(kernel log)": a WARN, oops or other splat
# on the console while the job ran.
source "$(dirname "$0")/lib.sh"
source "$TOPTIER_ROOT/scripts/peer-parse.sh"

kernel= base_kernel= topo=2tier only= pdir= retries=2 stage=all group=
while getopts "K:B:t:j:o:r:s:g:" opt; do
	case $opt in
	K) kernel=$OPTARG ;;
	B) base_kernel=$OPTARG ;;
	t) topo=$OPTARG ;;
	j) only=$OPTARG ;;
	o) pdir=$OPTARG ;;
	r) retries=$OPTARG ;;
	s) stage=$OPTARG ;;
	g) group=$OPTARG ;;
	*) die "usage: $0 [-K patched-bzImage] [-B baseline-bzImage] [-t topology] [-j jobs] [-o dir] [-r retries] [-s stage] [-g 1|2]" ;;
	esac
done
shift $((OPTIND - 1))
(($# == 0)) || die "unexpected arguments: $*"
case $stage in
all) ;;
baseline|patched|report) [[ -n $pdir ]] || die "-s $stage needs -o DIR" ;;
*) die "no stage '$stage' (baseline, patched or report)" ;;
esac
case $group in
'') ;;
1|2) [[ $stage == baseline || $stage == patched ]] ||
	die "-g needs -s baseline or -s patched" ;;
*) die "no guest '$group' (1 or 2)" ;;
esac
want() { [[ $stage == all || $stage == "$1" ]]; }

if want patched || want report; then
	[[ -n $kernel ]] || kernel=$("$TOPTIER_ROOT/scripts/build-kernel.sh" toptier | tail -1)
	[[ -f $kernel ]] || die "no patched kernel at $kernel"
fi
if want baseline; then
	[[ -n $base_kernel ]] || base_kernel=$("$TOPTIER_ROOT/scripts/build-kernel.sh" baseline | tail -1)
	[[ -f $base_kernel ]] || die "no baseline kernel at $base_kernel"
fi

jobs_file=$TOPTIER_ROOT/tests/peer/jobs
# The selected jobs, in the order of the job list: name and timeout.
mapfile -t jobs < <(awk -v only="${only//,/ }" -v group="$group" '
	!/^#/ && NF >= 5 {
		if (group != "" && $4 != group) next
		if (only != "") {
			n = split(only, o, " "); hit = 0
			for (i = 1; i <= n; i++) {
				base = $1; sub(/:.*/, "", base)
				if ($1 == o[i] || base == o[i]) hit = 1
			}
			if (!hit) next
		}
		print $1 "\t" $2
	}' "$jobs_file")
((${#jobs[@]})) || die "no job in $jobs_file matches '$only'${group:+ in guest $group}"

# The peer initramfs holds the selftests and their runner only: mkinitramfs
# copies the staging directory to /tests.  Made once per results directory
# (the stages of one run share it), under a lock.
stage_dir=$TOPTIER_ROOT/build/peer/root
initrd=$TOPTIER_ROOT/build/peer/initramfs.cpio.gz
prepare() {
	local seldir lock
	mkdir -p "$TOPTIER_ROOT/build/peer"
	exec {lock}>> "$TOPTIER_ROOT/build/peer/.lock"
	flock -x "$lock"
	if [[ ! -f $pdir/.initramfs-made ]]; then
		seldir=$("$TOPTIER_ROOT/scripts/build-selftests.sh" | tail -1)
		rm -rf "$stage_dir"
		mkdir -p "$stage_dir/bin" "$stage_dir/peer" "$stage_dir/selftests"
		cp -a "$seldir"/. "$stage_dir/selftests/"
		rm -f "$stage_dir/selftests/build.log" "$stage_dir/selftests/.built"
		install -m 755 "$TOPTIER_ROOT/scripts/peer-guest.sh" "$stage_dir/bin/peer-guest.sh"
		cp "$jobs_file" "$stage_dir/peer/jobs"
		"$TOPTIER_ROOT/scripts/mkinitramfs.sh" "$stage_dir" "$initrd"
		touch "$pdir/.initramfs-made"
	fi
	exec {lock}>&-
}

if [[ -z $pdir ]]; then
	run_id=$(date +%Y%m%d-%H%M%S)
	pdir=$TOPTIER_RESULTS/$run_id/peer
	mkdir -p "$pdir"
	ln -sfn "$run_id" "$TOPTIER_RESULTS/latest-peer"
fi
mkdir -p "$pdir"
msg "peer results in $pdir"
[[ $stage == report ]] || prepare
detect_accel "${kernel:-$base_kernel}" "$initrd"
# mm/migration needs two threads besides its main one (numa_num_task_cpus()
# - 1 >= 2), or it skips every case: three vCPUs, for both kernels alike.
export TOPTIER_GUEST_CPUS=${TOPTIER_GUEST_CPUS:-3}

# guest_timeout <job>...: a guest's time limit, the jobs' own timeouts plus
# boot and setup.
guest_timeout() {
	local t=180 j n
	for n in "$@"; do
		for j in "${jobs[@]}"; do
			[[ ${j%%$'\t'*} == "$n" ]] && t=$((t + ${j#*$'\t'}))
		done
	done
	echo $t
}

# boot <label> <kernel> <extra kernel args> <job>...
boot() {
	local label=$1 k=$2 args=$3 dir=$pdir/$1 start=$SECONDS tmo
	shift 3
	tmo=$(guest_timeout "$@")
	args+=" toptier.peer_jobs=$(IFS=,; echo "$*")"
	msg "booting the $label kernel ($k), $# jobs, timeout ${tmo}s"
	boot_collect "$dir" "$tmo" -t "$topo" -m peer -a "$args" "$k" "$initrd" || true
	grep -q '^# peer-env:' "$dir/tap.log" ||
		{ [[ $label != baseline* ]] || die "the $label guest ran no job; see $dir/console.log"; }
	cases "$dir"
	msg "$label: $(wc -l < "$dir/cases.tsv") cases in $((SECONDS - start)) s"
}

# env_of <kernel>: the environment its guest reported, or either half's.
env_of() {
	local d
	for d in "$pdir/$1" "$pdir/$1-g1" "$pdir/$1-g2"; do
		[[ -f $d/tap.log ]] && grep -q '^# peer-env: ' "$d/tap.log" || continue
		sed -n 's/^# peer-env: //p' "$d/tap.log" | head -1
		return
	done
}
env_val() { env_of "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

order=$(printf '%s\n' "${jobs[@]}" | cut -f1)

# A brd ram disk for the page-cache cases, if the kernel has brd and ext2.
common="brd.rd_size=262144"
mapfile -t names < <(printf '%s\n' "${jobs[@]}" | cut -f1)
base_args="$common toptier.peer_swap=1 toptier.peer_blockfs=1"
blabel=baseline${group:+-g$group} plabel=patched${group:+-g$group}

# The baseline guest's results depend only on what it boots: the baseline
# kernel, the initramfs contents, the jobs, the topology and QEMU.  They are
# kept under $TOPTIER_CACHE/peer-baseline/<key> and reused while all of
# that is unchanged, which saves one guest (five minutes) per warm check.
# TOPTIER_PEER_FRESH=1 boots the baseline anyway.
if want baseline; then
	base_key=$( {
		sha256sum < "$base_kernel"
		(cd "$stage_dir" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
		sha256sum < /bin/busybox
		cat "$TOPTIER_ROOT/scripts/guest-init" "$TOPTIER_ROOT/scripts/vm.sh" \
			"$TOPTIER_ROOT/scripts/mkinitramfs.sh"
		echo "$topo $TOPTIER_GUEST_CPUS $TOPTIER_ACCEL $base_args ${names[*]}"
		qemu-system-x86_64 --version | head -1
	} | sha256sum | cut -c1-16)
	base_cache=$TOPTIER_CACHE/peer-baseline/$base_key
	if [[ -z ${TOPTIER_PEER_FRESH:-} && -f $base_cache/cases.tsv ]]; then
		mkdir -p "$pdir/$blabel"
		cp -a "$base_cache"/. "$pdir/$blabel/"
		msg "$blabel: $(wc -l < "$pdir/$blabel/cases.tsv") cases reused from $base_cache" \
		    "(run of $(date -u -r "$base_cache/cases.tsv" '+%Y-%m-%d %H:%M UTC'); TOPTIER_PEER_FRESH=1 reruns it)"
	else
		boot "$blabel" "$base_kernel" "$base_args" "${names[@]}"
		# Only a run that finished is worth keeping.
		if ! grep -q '^# guest killed' "$pdir/$blabel/tap.log" &&
		   grep -q '^# peer: all jobs took' "$pdir/$blabel/tap.log"; then
			rm -rf "$base_cache"
			mkdir -p "$base_cache"
			cp -a "$pdir/$blabel"/. "$base_cache/"
		fi
	fi
fi

# The patched guest gets what the baseline had, no more: a zram swap device
# that only the patched config has must not make a case differ.  A patched
# stage that starts before the baseline has finished asks for what the
# baseline asks for; the report stage checks that both got the same.
penv_args() {
	echo "$common toptier.peer_swap=$(env_val baseline swap) toptier.peer_blockfs=$(env_val baseline blockfs)"
}
if want patched; then
	if [[ -n $(env_of baseline) ]]; then
		boot "$plabel" "$kernel" "$(penv_args)" "${names[@]}"
	else
		boot "$plabel" "$kernel" "$base_args" "${names[@]}"
	fi
fi
want report || exit 0

# join_halves <kernel>: a kernel's two halves (-g 1 and -g 2) as one guest's
# results: logs and cases one after the other, the times summed.
join_halves() {
	local k=$1 g secs=0 f
	[[ ! -d $pdir/$k ]] || return 0
	[[ -d $pdir/$k-g1 || -d $pdir/$k-g2 ]] || return 0
	mkdir -p "$pdir/$k"
	for g in 1 2; do
		[[ -d $pdir/$k-g$g ]] || { warn "no results of the $k kernel's guest $g"; continue; }
		for f in console.log tap.log qemu.log cases.tsv; do
			[[ ! -f $pdir/$k-g$g/$f ]] || cat "$pdir/$k-g$g/$f" >> "$pdir/$k/$f"
		done
		[[ ! -s $pdir/$k-g$g/wall-seconds ]] || secs=$((secs + $(cat "$pdir/$k-g$g/wall-seconds")))
	done
	touch "$pdir/$k/cases.tsv"
	echo "$secs" > "$pdir/$k/wall-seconds"
}
join_halves baseline
join_halves patched
[[ -n $(env_of baseline) ]] || die "the baseline guest left no environment line; see $pdir/baseline"
penv_args=$(penv_args)
if [[ $(env_of patched) != "$(env_of baseline)" ]]; then
	msg "the patched guest's environment ($(env_of patched)) is not the baseline's" \
	    "($(env_of baseline)): booting it again with the baseline's"
	boot patched "$kernel" "$penv_args" "${names[@]}"
fi

# Upstream tests are not all deterministic under TCG (test_kmem_basic on
# the initramfs root passed or failed by chance, see docs/testing.md): the
# jobs with a regression run again on the patched kernel, up to $retries
# times, before it counts.
runs=("$pdir/baseline/cases.tsv" "$pdir/patched/cases.tsv")
for ((r = 1; r <= retries; r++)); do
	mapfile -t again < <(compare "$order" "${runs[@]}" | awk -F'\t' '$5 == "REGRESSION" { print $1 }' | uniq)
	((${#again[@]})) || break
	msg "regressions in ${again[*]}: retry $r of $retries on the patched kernel"
	boot "patched-retry$r" "$kernel" "$penv_args" "${again[@]}"
	runs+=("$pdir/patched-retry$r/cases.tsv")
done
compare "$order" "${runs[@]}" > "$pdir/table.tsv.tmp"
{
	printf 'job\tcase\tbaseline\tpatched\tverdict\n'
	cat "$pdir/table.tsv.tmp"
} > "$pdir/table.tsv"

benv=$(env_of baseline) penv=$(env_of patched)
[[ $benv == "$penv" ]] || warn "the guests' environments differ: baseline '$benv', patched '$penv'"

count() { awk -F'\t' -v v="$1" '$5 == v' "$pdir/table.tsv.tmp" | wc -l; }
ncases=$(wc -l < "$pdir/table.tsv.tmp")
nreg=$(count REGRESSION)
nflaky=$(count "flaky on patched")
nboth=$(count "fails on both")
nskip=$(count "skipped on both")
nneither=$(count "passes on neither")
nbetter=$(count "better on patched")

guest_time() {	# summed over the guests of a split stage
	sed -n 's/^# peer: all jobs took \([0-9]*\)s$/\1/p' "$pdir/$1/tap.log" |
		awk '{ s += $1 } END { print s + 0 }'
}
kernel_of() { sed -n 's/^# toptier-guest: kernel //p' "$pdir/$1/tap.log" | head -1; }
{
	echo "# Peer suite: upstream selftests, baseline vs patched"
	echo
	echo "Generated by scripts/run-peer.sh on $(date -u '+%Y-%m-%d %H:%M UTC'), topology $topo, $TOPTIER_GUEST_CPUS vCPUs."
	echo "A regression is a case that passes on the baseline and does not pass"
	echo "(fails, skips or is missing) on the patched kernel, in its run nor in"
	echo "up to $retries retries of the job.  (exit) is the program's exit status,"
	echo "(kernel log) a splat on the console while the job ran."
	echo
	echo "| | baseline | patched |"
	echo "|---|---|---|"
	echo "| kernel | $(kernel_of baseline) | $(kernel_of patched) |"
	echo "| guest environment | $benv | $penv |"
	echo "| jobs' time in the guests | $(guest_time baseline)s | $(guest_time patched)s |"
	echo "| boot to power-off (host, summed over the guests) | $(cat "$pdir/baseline/wall-seconds")s | $(cat "$pdir/patched/wall-seconds")s |"
	echo
	echo "$ncases cases: $nreg regressions, $nflaky flaky on patched, $nbetter better on patched," \
		"$nboth fail on both, $nskip skipped on both, $nneither pass on neither (mixed)."
	echo
	echo "| job | case | baseline | patched | verdict |"
	echo "|---|---|---|---|---|"
	awk -F'\t' '{ v = $5 == "REGRESSION" ? "**REGRESSION**" : $5
		printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, v }' "$pdir/table.tsv.tmp"
} > "$pdir/table.md"
rm -f "$pdir/table.tsv.tmp"

if ((nreg + nflaky)); then
	echo "Regressions and flaky cases (logs: $pdir/<kernel>/tap.log, console.log):"
	awk -F'\t' '$5 == "REGRESSION" || $5 == "flaky on patched" {
		printf "  %s %s: baseline %s, patched %s: %s\n", $1, $2, $3, $4, $5 }' "$pdir/table.tsv"
fi
echo "table: $pdir/table.md"
echo "peer: $ncases cases, $nreg regressions ($nflaky flaky on patched, $nboth fail on both, $nskip skipped on both, $nbetter better on patched)"
((nreg == 0))
