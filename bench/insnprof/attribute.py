#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest instructions per page fault, per kernel function, from insnprof.

    attribute.py BASE.map BASE.prof NEW.map NEW.prof [-n N]

Each .prof is what bench/insnprof/insnprof.so wrote for one boot, each .map
the System.map of the kernel that boot ran (built without KASLR, so that
the addresses match).  Every block is credited to the function holding its
first instruction.  The divisor is the number of times the first block of
handle_mm_fault() ran in that boot: page faults of any kind, almost all of
them the benchmark's.  Prints the total per fault of both boots and the N
functions (default 30) whose share differs most, NEW minus BASE.  Work done
once per boot (initialisation) shows up as a small per-fault amount under
its own name.
"""
import argparse
import bisect
import collections


def load(map_path, prof_path):
    syms = []
    for line in open(map_path):
        fields = line.split()
        if len(fields) >= 3 and fields[1] in "tTwW":
            syms.append((int(fields[0], 16), fields[2]))
    syms.sort()
    starts = [a for a, _ in syms]
    insns = collections.Counter()
    entries = collections.Counter()
    for line in open(prof_path):
        addr, count, execs = line.split()
        addr = int(addr, 16)
        i = bisect.bisect_right(starts, addr) - 1
        name = syms[i][1] if i >= 0 else "?"
        insns[name] += int(count)
        if i >= 0 and starts[i] == addr:
            entries[name] += int(execs)
    faults = entries["handle_mm_fault"]
    if not faults:
        raise SystemExit(f"{prof_path}: handle_mm_fault() never ran")
    return insns, entries, faults


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base_map")
    ap.add_argument("base_prof")
    ap.add_argument("new_map")
    ap.add_argument("new_prof")
    ap.add_argument("-n", type=int, default=30)
    a = ap.parse_args()
    bi, be, bf = load(a.base_map, a.base_prof)
    ni, ne, nf = load(a.new_map, a.new_prof)
    bt, nt = sum(bi.values()) / bf, sum(ni.values()) / nf
    print(f"Faults: base {bf}, new {nf}.  Instructions per fault, whole "
          f"boot: base {bt:.1f}, new {nt:.1f}, difference {nt - bt:+.1f}.")
    print()
    print("| function | base | new | new - base | calls per fault, base / new |")
    print("|---|---|---|---|---|")
    rows = [(ni[f] / nf - bi[f] / bf, f) for f in set(bi) | set(ni)]
    rows.sort(key=lambda r: (-abs(r[0]), r[1]))
    for diff, f in rows[:a.n]:
        print(f"| {f} | {bi[f] / bf:.2f} | {ni[f] / nf:.2f} | {diff:+.2f} | "
              f"{be[f] / bf:.2f} / {ne[f] / nf:.2f} |")


if __name__ == "__main__":
    main()
