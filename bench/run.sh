#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: the toptier kernel against the baseline kernel (stock 6.12.y,
# the same config without the series), in one run.  Every figure is a
# median over BENCH_ROUNDS repetitions; every comparison is a ratio
# measured in this run, with the kernels or configurations alternating
# from round to round.
#
#   BENCH_ROUNDS=N        repetitions (default 5)
#   BENCH_ONLY="a b"      run only these of: fault faulticount
#                         faulticount1 faultprof enforce hardcap protect
#                         pingpong hotset victim threetier workbench
#                         (faulticount1: faulticount on
#                         the 1tier topology, one memory tier; faultprof:
#                         one boot of each kernel on 1tier, v1 and v2, with
#                         the insnprof plugin, for instructions per fault
#                         per kernel function; victim: the late victim of
#                         Hahn's RFC, 3:1 DRAM to CXL, four set-ups;
#                         hotset: a region turning hot in a cgroup at its
#                         top-tier budget, patched, stock and DAMON;
#                         threetier: hot, warm and cold sets with limits
#                         at both boundaries of 3tier, patched only)
#   BENCH_SKIP="a b"      leave these out (workbench takes two make checks,
#                         about an hour, cold and warm)
#   BENCH_ICOUNT_SHIFT=N  faulticount's guest clock: 2^N ns per guest
#                         instruction (default 0)
#
# Writes results/bench-<time>/: data.txt (every BENCH and SERIES line of
# every boot, prefixed with its kernel, config and round), one JSON file
# per benchmark, summary.md and PNG plots (bench/report.py), and each
# boot's console under boots/.
source "$(dirname "$0")/../scripts/lib.sh"

rounds=${BENCH_ROUNDS:-5}
icount_shift=${BENCH_ICOUNT_SHIFT:-0}
all="fault faulticount faulticount1 faultprof enforce hardcap protect pingpong hotset victim threetier workbench"
only=${BENCH_ONLY:-$all}
skip=" ${BENCH_SKIP:-} "
for b in $only; do
	[[ " $all " == *" $b "* ]] || die "no benchmark named '$b' (have: $all)"
done
want() { [[ " $only " == *" $1 "* && $skip != *" $1 "* ]]; }

tt=$("$TOPTIER_ROOT/scripts/build-kernel.sh" toptier | tail -1)
bl=$("$TOPTIER_ROOT/scripts/build-kernel.sh" baseline | tail -1)
test_initramfs
initrd=$INITRD
detect_accel "$tt" "$initrd"

out=$TOPTIER_RESULTS/bench-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out/boots"
data=$out/data.txt
: > "$data"
{
	echo "rounds=$rounds"
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "revision=$(git -C "$TOPTIER_ROOT" rev-parse --short HEAD)"
	echo "toptier=$tt"
	echo "baseline=$bl"
	echo "accel=$TOPTIER_ACCEL"
	echo "host_cpus=$(nproc)"
	echo "host_load=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "icount_shift=$icount_shift"
} > "$out/meta.txt"
msg "bench results in $out"

nboot=0
# boot <kernel: toptier|baseline> <config> <round> <program> <kernel args>
# With $icount set, the guest runs in QEMU's icount mode (scripts/vm.sh)
# and its BENCH lines are filed under <bench>_icount; with $topo set, on
# that topology instead of 2tier, and under <bench>_<topo>.  With $prof
# set, QEMU loads the insnprof plugin, which writes the boot's profile to
# <boot dir>/insnprof.txt, and the BENCH lines are not filed: the plugin
# leaves the guest's instruction count as it is, but one boot is no median.
icount= topo= prof= node0_mb= node1_mb= vmtopo=
boot() {
	local k=$1 config=$2 round=$3 prog=$4 args=$5 img=$bl dir
	[[ $k == toptier ]] && img=$tt
	nboot=$((nboot + 1))
	dir=$out/boots/$(printf %03d $nboot)-$k-${prog##*/}-$config-$round${icount:+-icount}${topo:+-$topo}${prof:+-prof}
	BOOT_DIR=$dir
	msg "boot $nboot: $prog on $k ($config), round $round${icount:+, icount}${topo:+, $topo}${prof:+, insnprof}"
	TOPTIER_ICOUNT=$icount TOPTIER_NODE0_MB=$node0_mb TOPTIER_NODE1_MB=$node1_mb \
	TOPTIER_QEMU_ARGS=${prof:+-plugin $prof,out=$dir/insnprof.txt} \
		boot_collect "$dir" 900 -T "$prog" -t "${vmtopo:-${topo:-2tier}}" \
		-a "$args" "$img" "$initrd" || die "the guest failed; see $dir"
	if grep -q '^BENCH-ERROR' "$dir/tap.log" || ! grep -q 'end .* rc=0' "$dir/tap.log"; then
		grep '^BENCH-ERROR' "$dir/tap.log" >&2 || true
		die "the benchmark failed in the guest; see $dir/tap.log"
	fi
	[[ -z $prof ]] || return 0
	sed -n "s/^\(BENCH\|SERIES\) /\1 kernel=$k config=$config round=$round /p" \
		"$dir/tap.log" | sed "${icount:+s/ bench=\([a-z_0-9]*\)/ bench=\1_icount/}" |
		sed "${topo:+s/ bench=\([a-z_0-9]*\)/ bench=\1_$topo/}" >> "$data"
}

# fault_round <round>: faultbench on both kernels, v1 and v2 hierarchies,
# the kernel that goes first alternating from round to round (ABBA).
fault_round() {
	local k order="baseline toptier"
	(($1 % 2)) || order="toptier baseline"
	for k in $order; do
		boot "$k" v1 "$1" bin/faultbench ""
		boot "$k" v2 "$1" bin/faultbench "toptier.fault_cg=v2"
	done
}

for r in $(seq 1 "$rounds"); do
	want fault && fault_round "$r"
	# The same fault benchmark counted in guest instructions (QEMU
	# icount): the boot-to-boot noise of wall time is gone, so a
	# difference of 1% shows.  It does not see what an instruction
	# costs (atomics, cache misses): the wall-clock one above does.
	if want faulticount; then
		icount=$icount_shift
		fault_round "$r"
		icount=
	fi
	if want faulticount1; then
		icount=$icount_shift topo=1tier
		fault_round "$r"
		icount= topo=
	fi
	if want protect; then
		# The three set-ups rotate, so that none is always first.
		cfgs=(patched stock damon)
		for i in 0 1 2; do
			c=${cfgs[$(((i + r) % 3))]}
			k=baseline; [[ $c == patched ]] && k=toptier
			boot "$k" "$c" "$r" bin/tierbench "toptier.bench=protect toptier.bench_config=$c"
		done
	fi
	if want hotset; then
		cfgs=(patched stock damon)
		for i in 0 1 2; do
			c=${cfgs[$(((i + r) % 3))]}
			k=baseline; [[ $c == patched ]] && k=toptier
			boot "$k" "$c" "$r" bin/tierbench "toptier.bench=hotset toptier.bench_config=$c"
		done
	fi
	if want threetier; then
		# Limits at both boundaries exist only on the patched kernel.
		vmtopo=3tier
		boot toptier patched "$r" bin/tierbench "toptier.bench=threetier"
		vmtopo=
	fi
	if want victim; then
		# Hahn's 750 GB DRAM + 250 GB CXL, scaled: node0 1536 MB, node1
		# 512 MB.  Stock and stock + DAMON on the baseline kernel,
		# memory.tiers.low and memory.min + memory_tiers_auto on ours;
		# the order rotates from round to round.
		cfgs=(stock low damon auto)
		node0_mb=1536 node1_mb=512
		for i in 0 1 2 3; do
			c=${cfgs[$(((i + r) % 4))]}
			k=baseline; [[ $c == low || $c == auto ]] && k=toptier
			boot "$k" "$c" "$r" bin/tierbench "toptier.bench=victim toptier.bench_config=$c"
		done
		node0_mb= node1_mb=
	fi
	if want pingpong; then
		order="stock patched"; ((r % 2)) || order="patched stock"
		for c in $order; do
			k=baseline; [[ $c == patched ]] && k=toptier
			boot "$k" "$c" "$r" bin/tierbench "toptier.bench=pingpong toptier.bench_config=$c"
		done
	fi
done
# Where the instructions of a fault go, per kernel function: faultbench on
# one tier, once per kernel and hierarchy, under the insnprof plugin.
if want faultprof; then
	plugin=$TOPTIER_ROOT/build/insnprof.so
	gcc -O2 -Wall -shared -fPIC -o "$plugin" "$TOPTIER_ROOT/bench/insnprof/insnprof.c" ||
		die "cannot build the insnprof plugin"
	icount=$icount_shift topo=1tier prof=$plugin
	for cg in v1 v2; do
		args=""
		[[ $cg == v2 ]] && args="toptier.fault_cg=v2"
		boot baseline "$cg" 1 bin/faultbench "$args"; base_dir=$BOOT_DIR
		boot toptier "$cg" 1 bin/faultbench "$args"; new_dir=$BOOT_DIR
		{
			echo "### faultbench on 1tier, cgroup $cg, per function"
			echo
			"$TOPTIER_ROOT/bench/insnprof/attribute.py" \
				"${bl%/arch/*}/System.map" "$base_dir/insnprof.txt" \
				"${tt%/arch/*}/System.map" "$new_dir/insnprof.txt"
		} > "$out/faultprof-$cg.md" || die "attribute.py failed; see $out/faultprof-$cg.md"
	done
	icount= topo= prof=
fi

# Within one boot: these compare the kernel with move_pages(2) in the same
# VM, or with the limit itself, so they need no baseline boot.
if want enforce; then
	boot toptier v2 1 bin/tierbench "toptier.bench=enforce toptier.bench_reps=$rounds"
	boot toptier v1 1 bin/tierbench "toptier.bench=enforce_v1 toptier.bench_reps=$rounds"
fi
if want hardcap; then
	boot toptier v2 1 bin/tierbench "toptier.bench=hardcap toptier.bench_reps=$rounds"
fi
if want workbench; then
	"$TOPTIER_ROOT/bench/workbench.sh" -o "$out" || warn "a workbench make check failed; see $out"
fi

python3 "$TOPTIER_ROOT/bench/report.py" "$out"
echo "summary: $out/summary.md"
