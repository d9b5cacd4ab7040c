#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: page-fault throughput of the toptier kernel against the
# baseline kernel (same config, no series), alternating boots in one run.
#   BENCH_ROUNDS=N   boots of each kernel (default 5)
# Prints per-workload medians, the toptier/baseline ratio of medians and the
# spread (min..max) of the per-round ratios, and keeps every log under
# results/bench-<time>/.
source "$(dirname "$0")/../scripts/lib.sh"

rounds=${BENCH_ROUNDS:-5}
tt=$("$TOPTIER_ROOT/scripts/build-kernel.sh" toptier | tail -1)
bl=$("$TOPTIER_ROOT/scripts/build-kernel.sh" baseline | tail -1)
make -s -C "$TOPTIER_ROOT/tests" O="$TOPTIER_ROOT/build/tests" >&2
initrd=$TOPTIER_ROOT/build/initramfs.cpio.gz
"$TOPTIER_ROOT/scripts/mkinitramfs.sh" "$TOPTIER_ROOT/build/tests" "$initrd"
detect_accel "$tt" "$initrd"

out=$TOPTIER_RESULTS/bench-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
data=$out/data.txt
: > "$data"
for r in $(seq 1 "$rounds"); do
	# ABBA order, so that drift within a round favours neither kernel.
	order="baseline toptier"
	((r % 2)) || order="toptier baseline"
	for k in $order; do
		img=$bl; [[ $k == toptier ]] && img=$tt
		msg "round $r/$rounds: $k"
		"$TOPTIER_ROOT/scripts/vm.sh" -T bin/faultbench -o "$out/$k-$r" -k 300 "$img" "$initrd" ||
			die "the $k guest failed; see $out/$k-$r"
		tr -d '\r' < "$out/$k-$r/tap.log" | sed -n "s/^BENCH /$k round=$r /p" >> "$data"
	done
done

python3 - "$data" <<'PY' | tee "$out/summary.txt"
import sys, statistics as st, collections
# runs[kernel][round][(phase, load)] = [faults/s of each rep]
runs = collections.defaultdict(lambda: collections.defaultdict(lambda: collections.defaultdict(list)))
for line in open(sys.argv[1]):
    f = line.split()
    kv = dict(x.split("=") for x in f[1:])
    runs[f[0]][int(kv["round"])][(kv["phase"], kv["workload"])].append(float(kv["faults_per_s"]))
def med(r, key):
    return st.median(r[key])
def spread(xs):
    return "%.3f (%.3f..%.3f)" % (st.median(xs), min(xs), max(xs))
rounds = sorted(set(runs["baseline"]) & set(runs["toptier"]))
print("%d rounds, alternating boots; faults/s are medians over rounds of the per-boot medians" % len(rounds))
for load in ("anon", "tmpfs"):
    b = [med(runs["baseline"][r], ("nolimit", load)) for r in rounds]
    t = [med(runs["toptier"][r], ("nolimit", load)) for r in rounds]
    tl = [med(runs["toptier"][r], ("limit", load)) for r in rounds]
    print("%-5s baseline %8.0f  toptier %8.0f  toptier+limits %8.0f" % (load, st.median(b), st.median(t), st.median(tl)))
    print("      toptier/baseline, no limits, per round: %s" % spread([x / y for x, y in zip(t, b)]))
    print("      limits/no limits on toptier, same boot:  %s" % spread([x / y for x, y in zip(tl, t)]))
PY
