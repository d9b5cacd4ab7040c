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
	for k in baseline toptier; do
		img=$bl; [[ $k == toptier ]] && img=$tt
		msg "round $r/$rounds: $k"
		"$TOPTIER_ROOT/scripts/vm.sh" -T bin/faultbench -o "$out/$k-$r" -k 300 "$img" "$initrd" ||
			die "the $k guest failed; see $out/$k-$r"
		tr -d '\r' < "$out/$k-$r/tap.log" | sed -n "s/^BENCH /$k round=$r /p" >> "$data"
	done
done

python3 - "$data" <<'PY' | tee "$out/summary.txt"
import sys, statistics as st, collections
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = line.split()
    kv = dict(x.split("=") for x in f[1:])
    rows[(kv["phase"], kv["workload"])].setdefault(f[0], {})[int(kv["round"])] = float(kv["faults_per_s"])
print("%-8s %-6s %12s %12s %8s %s" % ("phase", "load", "baseline/s", "toptier/s", "ratio", "per-round ratios min..max"))
for (phase, load), k in sorted(rows.items()):
    base = rows[("nolimit", load)]["baseline"]
    tt = k.get("toptier", {})
    if not tt:
        continue
    ratios = [tt[r] / base[r] for r in tt if r in base]
    print("%-8s %-6s %12.0f %12.0f %8.3f %.3f..%.3f" % (phase, load, st.median(base.values()),
          st.median(tt.values()), st.median(tt.values()) / st.median(base.values()),
          min(ratios), max(ratios)))
print("(limit phase compared with the baseline's nolimit phase: the baseline has no limits)")
PY
