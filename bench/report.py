#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn a make bench run (bench/run.sh) into JSON, Markdown and PNG plots.

    report.py DIR

Reads DIR/data.txt (BENCH and SERIES lines, prefixed by run.sh with the
kernel, config and round of their boot) and DIR/meta.txt; writes
DIR/<benchmark>.json, DIR/summary.md and DIR/<benchmark>.png (gnuplot).
Every figure is a median with its range (min..max) over the rounds.
"""
import collections
import glob
import json
import os
import statistics as st
import subprocess
import sys

out = sys.argv[1]


def parse(line):
    kind, *rest = line.split()
    return kind, dict(x.split("=", 1) for x in rest if "=" in x)


meta = {}
for line in open(os.path.join(out, "meta.txt")):
    k, _, v = line.strip().partition("=")
    meta[k] = v
bench = collections.defaultdict(list)
series = collections.defaultdict(list)
for line in open(os.path.join(out, "data.txt")):
    kind, kv = parse(line)
    (bench if kind == "BENCH" else series)[kv["bench"]].append(kv)


def num(kv, key):
    return float(kv[key])


def stats(xs):
    xs = list(xs)
    if not xs:
        return None
    return {"median": st.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def fmt(s, f="%.3f"):
    if not s:
        return "n/a"
    return (f + " (" + f + ".." + f + ")") % (s["median"], s["min"], s["max"])


def table(*cols):
    md.append("| " + " | ".join(cols) + " |")
    md.append("|" + "---|" * len(cols))


def rows_of(name, key, val):
    return [kv for kv in bench[name] if kv[key] == val]


def verdict(ok):
    return "**met**" if ok else "**not met**"


def dump(name, obj):
    obj = dict(benchmark=name, rounds=int(meta.get("rounds", 0)), date=meta.get("date"),
               revision=meta.get("revision"), accel=meta.get("accel"), **obj)
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(obj, f, indent=2, sort_keys=True)
        f.write("\n")


def gnuplot(name, script):
    path = os.path.join(out, name + ".gp")
    with open(path, "w") as f:
        f.write('set terminal pngcairo size 900,520 font ",10"\n')
        f.write('set output "%s.png"\nset key outside bottom center horizontal\n' % name)
        f.write("set grid\n" + script)
    r = subprocess.run(["gnuplot", name + ".gp"], cwd=out, capture_output=True, text=True)
    if r.returncode:
        print("gnuplot failed for %s: %s" % (name, r.stderr.strip()), file=sys.stderr)
        return ""
    return "![%s](%s.png)\n" % (name, name)


md = []
md.append("# make bench, %s\n" % meta.get("date"))
md.append("Revision %s, %s rounds, accelerator %s, host load at start %s.  "
          "Figures: median (min..max) over rounds.  Every comparison is a ratio "
          "measured in this run, the kernels or set-ups alternating from round to round.\n"
          % (meta.get("revision"), meta.get("rounds"), meta.get("accel"), meta.get("host_load")))

# ---- 1. fault-path overhead ----------------------------------------------------
def fault_section(name, heading, intro, title, yrange, ns_per_insn=None):
    # per (kernel, round, phase, workload): median of the boot's reps
    boot = collections.defaultdict(list)
    for kv in bench[name]:
        boot[(kv["kernel"], int(kv["round"]), kv["cg"], kv["phase"], kv["workload"])].append(
            num(kv, "faults_per_s"))
    boot = {k: st.median(v) for k, v in boot.items()}
    rounds = sorted({k[1] for k in boot})
    res = {}
    md.append(heading)
    md.append(intro + "`bench/faultbench.c`: 4 processes in a three-level cgroup hierarchy (`bench/mid/leaf`) "
              "fault in 32 MB at a time for 2 s per measurement, anonymous and tmpfs (punched "
              "after each pass); first no limit, then limits set on all three levels but never "
              "reached: the v1 soft limit (64G, 32G, 16G), or the fastest tier's line of v2 "
              "`memory.tiers.high` and `.max` (the same values).  Three of each per boot, "
              "alternating, after a warm-up.  Each kernel boots once per hierarchy per round, "
              "the kernels in ABBA order.  "
              "Goal: toptier/baseline >= 0.99 without limits, >= 0.98 with.\n")
    table("cgroup", "workload", "baseline faults/s", "toptier, no limit", "toptier, limits",
          "toptier/baseline, no limit", "toptier with limits/baseline",
          "limits/no limit, same boot", "goal",
          *(["instructions per fault: baseline, +no limit, +limits"] if ns_per_insn else []))
    plot_rows = []
    for cg in ("v1", "v2"):
        for load in ("anon", "tmpfs"):
            b = {r: boot.get(("baseline", r, cg, "nolimit", load)) for r in rounds}
            t = {r: boot.get(("toptier", r, cg, "nolimit", load)) for r in rounds}
            tl = {r: boot.get(("toptier", r, cg, "limit", load)) for r in rounds}
            rr = [r for r in rounds if b[r] and t[r] and tl[r]]
            if not rr:
                continue
            ratio = stats(t[r] / b[r] for r in rr)
            ratio_l = stats(tl[r] / b[r] for r in rr)
            same = stats(tl[r] / t[r] for r in rr)
            ok = ratio["median"] >= 0.99 and ratio_l["median"] >= 0.98
            key = cg + "_" + load
            res[key] = dict(baseline=stats(b[r] for r in rr), toptier_nolimit=stats(t[r] for r in rr),
                            toptier_limit=stats(tl[r] for r in rr), ratio_nolimit=ratio,
                            ratio_limit=ratio_l, limit_over_nolimit_same_boot=same,
                            per_round={r: dict(baseline=b[r], toptier=t[r], toptier_limit=tl[r])
                                       for r in rr},
                            goal_met=bool(ok))
            row = "| %s | %s | %.0f | %.0f | %.0f | %s | %s | %s | %s |" % (
                cg, load, res[key]["baseline"]["median"], res[key]["toptier_nolimit"]["median"],
                res[key]["toptier_limit"]["median"], fmt(ratio), fmt(ratio_l), fmt(same), verdict(ok))
            if ns_per_insn:
                # guest ns per fault / guest ns per instruction
                ipf = {w: 1e9 / (res[key][w]["median"] * ns_per_insn)
                       for w in ("baseline", "toptier_nolimit", "toptier_limit")}
                res[key]["instructions_per_fault"] = ipf
                row += " %.0f, %+.0f, %+.0f |" % (
                    ipf["baseline"], ipf["toptier_nolimit"] - ipf["baseline"],
                    ipf["toptier_limit"] - ipf["baseline"])
            md.append(row)
            for r in rr:
                plot_rows.append((key, r, t[r] / b[r], tl[r] / b[r]))
    md.append("")
    dump(name, dict(goal="toptier/baseline >= 0.99 no limits, >= 0.98 limits",
                       workloads=res))
    keys = [k for k in ("v1_anon", "v1_tmpfs", "v2_anon", "v2_tmpfs") if k in res]
    with open(os.path.join(out, name + ".dat"), "w") as f:
        for key in keys:
            f.write("# %s\n" % key)
            for row in plot_rows:
                if row[0] == key:
                    f.write("%d %.4f %.4f\n" % row[1:])
            f.write("\n\n")
    plots = []
    for i, key in enumerate(keys):
        plots.append('"%s.dat" index %d u 1:2 w lp t "%s, no limit"' % (name, i, key.replace("_", " ")))
        plots.append('"%s.dat" index %d u 1:3 w lp dt 2 t "%s, limits"' % (name, i, key.replace("_", " ")))
    md.append(gnuplot(name, 'set title "%s, toptier / baseline, per round"\n'
                      'set xlabel "round"\nset ylabel "ratio"\nset yrange [%s]\n' % (title, yrange) +
                      'plot ' + ", ".join(plots) + ', 1 w l lc rgb "black" t ""\n'))


if bench["fault"]:
    fault_section("fault", "## 1. Fault-path overhead\n", "",
                  "Fault throughput", "0.6:1.4")
if bench["fault_icount"]:
    fault_section("fault_icount", "## 1b. Fault-path overhead in guest instructions\n",
                  "The same program in boots of its own, QEMU running the guest in icount mode "
                  "(`-icount shift=0,sleep=off`, one vCPU thread): the guest's clock advances "
                  "1 ns per guest instruction, so faults per guest second are faults per "
                  "10^9 instructions, and the host's noise is gone.  This resolves a 1% "
                  "difference in the instructions the fault path executes; it does not weigh "
                  "what they cost (atomics, cache misses), which the wall-clock figures above do.  ",
                  "Faults per 10^9 guest instructions", "0.9:1.1",
                  ns_per_insn=2 ** int(meta.get("icount_shift", 0)))


def fault_one_tier_section(name, ns_per_insn):
    """faultbench on one memory tier, no limits: the series must cost nothing."""
    boot = collections.defaultdict(list)
    for kv in bench[name]:
        if kv["phase"] == "nolimit":
            boot[(kv["kernel"], int(kv["round"]), kv["cg"], kv["workload"])].append(
                num(kv, "faults_per_s"))
    boot = {k: st.median(v) for k, v in boot.items()}
    rounds = sorted({k[1] for k in boot})
    res = {}
    md.append("## 1c. One memory tier, in guest instructions\n")
    md.append("The benchmark of 1b on the 1tier topology (one node, so one memory tier: "
              "the tier controls have no line and their hooks sit behind a static key), "
              "no limits.  Goal: toptier/baseline >= 0.998.\n")
    table("cgroup", "workload", "baseline faults/s", "toptier faults/s",
          "toptier/baseline", "goal", "instructions per fault: baseline, +toptier")
    for cg in ("v1", "v2"):
        for load in ("anon", "tmpfs"):
            b = {r: boot.get(("baseline", r, cg, load)) for r in rounds}
            t = {r: boot.get(("toptier", r, cg, load)) for r in rounds}
            rr = [r for r in rounds if b[r] and t[r]]
            if not rr:
                continue
            ratio = stats(t[r] / b[r] for r in rr)
            ok = ratio["median"] >= 0.998
            key = cg + "_" + load
            ipf = {w: 1e9 / (m * ns_per_insn) for w, m in
                   (("baseline", stats(b[r] for r in rr)["median"]),
                    ("toptier", stats(t[r] for r in rr)["median"]))}
            res[key] = dict(baseline=stats(b[r] for r in rr), toptier=stats(t[r] for r in rr),
                            ratio=ratio, goal_met=bool(ok), instructions_per_fault=ipf,
                            per_round={r: dict(baseline=b[r], toptier=t[r]) for r in rr})
            md.append("| %s | %s | %.0f | %.0f | %s | %s | %.0f, %+.0f |" % (
                cg, load, res[key]["baseline"]["median"], res[key]["toptier"]["median"],
                fmt(ratio), verdict(ok), ipf["baseline"], ipf["toptier"] - ipf["baseline"]))
    md.append("")
    dump(name, dict(goal="toptier/baseline >= 0.998, one tier, no limits", workloads=res))


if bench["fault_icount_1tier"]:
    fault_one_tier_section("fault_icount_1tier", 2 ** int(meta.get("icount_shift", 0)))

# ---- 2. enforcement speed --------------------------------------------------------
if bench["enforce"]:
    md.append("## 2. Enforcement speed\n")
    md.append("`tierbench enforce` and `enforce_v1`: a cgroup holding twice its limit on node0 "
              "(2 x 96 MB, freshly written) is brought down to the limit: the fastest tier's line "
              "of `memory.tiers.high` or `memory.tiers.max` lowered (v2), or the v1 soft limit set "
              "while node0 is below its toptier watermark (an mlocked filler).  Timed from the "
              "write until the usage "
              "file reads at most the limit.  Right before each, move_pages(2) moves another "
              "freshly written 96 MB from node0 to node1 in the same VM: the reference.  "
              "Goal: enforcement >= 80% of move_pages.\n")
    table("mode", "enforcement MB/s", "move_pages MB/s", "ratio (same boot)", "goal")
    res = {}
    with open(os.path.join(out, "enforce.dat"), "w") as f:
        for i, mode in enumerate(("v2_high", "v2_max", "v1_soft")):
            rows = rows_of("enforce", "mode", mode)
            if not rows:
                continue
            ratio = stats(num(kv, "ratio") for kv in rows)
            res[mode] = dict(enforce_mbps=stats(num(kv, "enforce_mbps") for kv in rows),
                             raw_mbps=stats(num(kv, "raw_mbps") for kv in rows),
                             ratio=ratio, goal_met=ratio["median"] >= 0.8,
                             reps=[{k: kv[k] for k in ("rep", "raw_mbps", "enforce_mbps", "ratio")}
                                   for kv in rows])
            md.append("| %s | %s | %s | %s | %s |" % (
                mode, fmt(res[mode]["enforce_mbps"], "%.1f"), fmt(res[mode]["raw_mbps"], "%.1f"),
                fmt(ratio), verdict(res[mode]["goal_met"])))
            f.write("%d %s %.4f %.4f %.4f\n" % (i, mode, ratio["median"], ratio["min"], ratio["max"]))
    md.append("")
    dump("enforce", dict(goal="enforcement MB/s >= 0.8 x move_pages MB/s", modes=res))
    md.append(gnuplot("enforce", 'set title "Enforcement speed / move_pages(2) speed"\n'
                      'set style fill solid 0.5\nset boxwidth 0.5\nset yrange [0:1.5]\n'
                      'set xrange [-0.5:2.5]\n'
                      'plot "enforce.dat" u 1:3:xtic(2) w boxes t "median", '
                      '"" u 1:3:4:5 w yerrorbars t "min..max", 0.8 w l t "goal 0.8"\n'))

# ---- 3. hard-cap accuracy -----------------------------------------------------------
if bench["hardcap"]:
    md.append("## 3. Hard-cap accuracy\n")
    md.append("`tierbench hardcap`: 4 processes in one cgroup with `memory.tiers.max` 64M on "
              "the fastest tier's line each write 64 MB at once; that line of "
              "`memory.tiers.current` is read every 10 ms (absolute clock) until all are done, "
              "and of `memory.tiers.peak` at the end.  "
              "The documented bound (README) is one folio in flight per allocating task: "
              "4 x 4 KB, or 4 x 2 MB with THP.  Goal: overshoot within that bound.\n")
    table("pages", "largest sampled overshoot (KB)", "peak overshoot (KB)", "bound (KB)", "samples per burst", "goal")
    res = {}
    for thp in ("0", "1"):
        rows = rows_of("hardcap", "thp", thp)
        if not rows:
            continue
        name = "thp" if thp == "1" else "4k"
        worst = max(max(num(kv, "overshoot_kb"), num(kv, "peak_overshoot_kb")) for kv in rows)
        bound = num(rows[0], "bound_kb")
        res[name] = dict(sampled_overshoot_kb=stats(num(kv, "overshoot_kb") for kv in rows),
                         peak_overshoot_kb=stats(num(kv, "peak_overshoot_kb") for kv in rows),
                         bound_kb=bound, worst_kb=worst, goal_met=worst <= bound,
                         samples=stats(num(kv, "samples") for kv in rows),
                         fallback_pages=stats(num(kv, "fallback_pages") for kv in rows))
        md.append("| %s | %s | %s | %.0f | %s | %s |" % (
            name, fmt(res[name]["sampled_overshoot_kb"], "%.0f"),
            fmt(res[name]["peak_overshoot_kb"], "%.0f"), bound,
            fmt(res[name]["samples"], "%.0f"), verdict(worst <= bound)))
    md.append("")
    dump("hardcap", dict(goal="overshoot <= tasks x folio size", pages=res))
    with open(os.path.join(out, "hardcap.dat"), "w") as f:
        for i, thp in enumerate(("0", "1")):
            for kv in bench["hardcap"]:
                if kv["thp"] == thp:
                    f.write("%s %s %s %s\n" % (kv["rep"], kv["overshoot_kb"],
                                               kv["peak_overshoot_kb"], kv["bound_kb"]))
            f.write("\n\n")
    md.append(gnuplot("hardcap", 'set title "Overshoot over memory.tiers.max (64 MB), per burst"\n'
                      'set xlabel "repetition"\nset ylabel "KB"\nset yrange [-100:*]\n'
                      'plot "hardcap.dat" index 0 u 1:2 w lp t "4k sampled", '
                      '"" index 0 u 1:3 w lp t "4k peak", '
                      '"" index 1 u 1:2 w lp t "THP sampled", "" index 1 u 1:3 w lp t "THP peak", '
                      '"" index 1 u 1:4 w l t "THP bound"\n'))

# ---- 4. protection quality --------------------------------------------------------------
if bench["protect"]:
    md.append("## 4. Protection quality\n")
    md.append("`tierbench protect`: a protected cgroup reads every page of its 128 MB hot set "
              "once a second; a greedy neighbour bound to node0 writes 1280 MB (more than "
              "node0's 1 GB) 8 MB at a time and keeps reading all it has.  numa_balancing=2 and "
              "demotion on everywhere.  *patched*: `memory.tiers.low` = 128M on the fastest "
              "tier's line of the protected cgroup.  *stock*: stock 6.12, no controls exist.  "
              "*damon*: stock 6.12 with two kdamonds (paddr): migrate_cold to node1 on node0 "
              "excluding the protected memcg, "
              "migrate_hot to node0 on node1 for the protected memcg only.  The share of the hot "
              "set on node0 is read with move_pages(2) every 0.5 s for 40 s from the neighbour's "
              "start: *mean* over all samples, *end* the median of the last 10 s.  Goal: mean "
              ">= 95% on the patched kernel.\n")
    table("set-up", "mean share", "share at the end", "lowest share", "demoted MB (all)", "promoted MB", "goal")
    res = {}
    for cfg in ("patched", "stock", "damon"):
        rows = rows_of("protect", "config", cfg)
        if not rows:
            continue
        end = stats(num(kv, "share_end") for kv in rows)
        mean = stats(num(kv, "share_mean") for kv in rows)
        res[cfg] = dict(share_mean=mean, share_end=end, share_min=stats(num(kv, "share_min") for kv in rows),
                        demoted_mb=stats(num(kv, "demoted_mb") for kv in rows),
                        promoted_mb=stats(num(kv, "promoted_mb") for kv in rows))
        if cfg == "patched":
            res[cfg]["goal_met"] = mean["median"] >= 0.95
        md.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            cfg, fmt(mean), fmt(end), fmt(res[cfg]["share_min"]), fmt(res[cfg]["demoted_mb"], "%.0f"),
            fmt(res[cfg]["promoted_mb"], "%.0f"),
            verdict(res[cfg]["goal_met"]) if cfg == "patched" else "(reference)"))
    damon = [kv for kv in bench["protect_damon"]]
    if damon:
        res["damon_sz_applied_mb"] = {kd: stats(num(kv, "sz_applied_mb") for kv in damon
                                                if kv["kdamond"] == kd) for kd in ("0", "1")}
        md.append("\nDAMON applied its schemes to %s MB (migrate_cold) and %s MB (migrate_hot) "
                  "per run." % (fmt(res["damon_sz_applied_mb"]["0"], "%.0f"),
                                fmt(res["damon_sz_applied_mb"]["1"], "%.0f")))
    md.append("")
    dump("protect", dict(goal="patched share_mean >= 0.95", setups=res,
                         series={cfg: [dict(round=kv["round"], t=num(kv, "t"), share=num(kv, "share"))
                                       for kv in series["protect"] if kv["config"] == cfg]
                                 for cfg in res if cfg in ("patched", "stock", "damon")}))
    with open(os.path.join(out, "protect.dat"), "w") as f:
        for cfg in ("patched", "stock", "damon"):
            f.write("# %s\n" % cfg)
            for r in sorted({kv["round"] for kv in series["protect"]}, key=int):
                for kv in series["protect"]:
                    if kv["config"] == cfg and kv["round"] == r:
                        f.write("%s %s\n" % (kv["t"], kv["share"]))
                f.write("\n")
            f.write("\n")
    md.append(gnuplot("protect", 'set title "Share of the protected hot set on node0 (every round)"\n'
                      'set xlabel "seconds since the neighbour started"\nset ylabel "share"\n'
                      'set yrange [-0.05:1.05]\n'
                      'plot "protect.dat" index 0 u 1:2 w l lw 2 t "patched (tiers.low)", '
                      '"" index 1 u 1:2 w l lw 2 t "stock 6.12", '
                      '"" index 2 u 1:2 w l lw 2 t "stock 6.12 + DAMON", 0.95 w l dt 2 t "goal"\n'))

# ---- hot set in budget ---------------------------------------------------------------------
if bench["hotset"]:
    md.append("## Hot set in budget\n")
    md.append("`tierbench hotset`: a cgroup writes 64 MB on node0 and never reads it again; the "
              "rest of node0 is mlocked down to its low watermark + 72 MB on both kernels.  A 32 MB "
              "region of the same cgroup, written on node1, is then read back to back with "
              "numa_balancing=2.  *patched*: `memory.tiers.max` 64M on the fastest tier, so the "
              "budget is full of cold data; *stock*: no cap, its own reclaim makes room; *damon*: "
              "stock with DAMON migrate_cold/migrate_hot filtered to the cgroup.  The share is the "
              "hot region's pages on node0 (move_pages), sampled every second.  Goal: patched >= 90% "
              "within 30 s.\n")
    table("set-up", "share at 30 s", "share at 60 s", "90% reached after s", "cgroup on node0 MB",
          "promoted MB", "demoted MB", "goal")
    res = {}
    for cfg in ("patched", "stock", "damon"):
        rows = rows_of("hotset", "config", cfg)
        if not rows:
            continue
        r = {k: stats(num(kv, k) for kv in rows) for k in
             ("share_at_30s", "share_end", "cg_node0_mb", "promoted_mb", "demoted_mb")}
        t90 = [num(kv, "t90_s") for kv in rows]
        r["t90_s"] = stats(t for t in t90 if t >= 0)
        r["reached_rounds"] = sum(1 for t in t90 if 0 <= t <= 30)
        r["goal_met"] = r["share_at_30s"]["median"] >= 0.9 and r["reached_rounds"] == len(rows)
        res[cfg] = r
        md.append("| %s | %s | %s | %s (%d of %d rounds by 30 s) | %s | %s | %s | %s |" % (
            cfg, fmt(r["share_at_30s"], "%.2f"), fmt(r["share_end"], "%.2f"),
            fmt(r["t90_s"], "%.0f"), r["reached_rounds"], len(rows), fmt(r["cg_node0_mb"], "%.0f"),
            fmt(r["promoted_mb"], "%.0f"), fmt(r["demoted_mb"], "%.0f"),
            verdict(r["goal_met"]) if cfg == "patched" else "(reference)"))
    md.append("")
    dump("hotset", dict(goal="patched: >= 90% of the hot region on the top tier within 30 s",
                        setups=res))
    with open(os.path.join(out, "hotset.dat"), "w") as f:
        for cfg in ("patched", "stock", "damon"):
            f.write("# %s, round 1\n" % cfg)
            for kv in series["hotset"]:
                if kv["config"] == cfg and kv["round"] == "1":
                    f.write("%s %s\n" % (kv["t"], kv["share"]))
            f.write("\n\n")
    md.append(gnuplot("hotset", 'set title "Share of the hot region on the top tier (round 1)"\n'
                      'set xlabel "seconds since the region turned hot"\nset ylabel "share"\n'
                      'set yrange [-0.05:1.05]\n'
                      'plot "hotset.dat" index 0 u 1:2 w l lw 2 t "patched (tiers.max 64M)", '
                      '"" index 1 u 1:2 w l lw 2 t "stock 6.12", '
                      '"" index 2 u 1:2 w l lw 2 t "stock 6.12 + DAMON", 0.9 w l dt 2 t "goal"\n'))

# ---- three tiers ------------------------------------------------------------------------------
if bench["threetier"]:
    md.append("## Three tiers\n")
    md.append("`tierbench threetier` on 3tier (HMAT: node0 10 ns, node1 30 ns, node2 90 ns): one "
              "cgroup with `memory.tiers.max` 64M on node0's line and 192M on node1's (node0 and "
              "node1 together).  It writes a 192 MB cold set (never read again), a 96 MB warm set "
              "(read every 2 s) and a 48 MB hot set (read back to back), in that order, so the hot "
              "set starts at the bottom; then numa_balancing=2 for 90 s.  Where each set is at the "
              "end (MB per node, median over rounds), and the largest reading of each line against "
              "its limit (sampled every second, 4 MB tolerance).  Goal: both limits hold; the hot "
              "set ends on node0.\n")
    rows = bench["threetier"]
    table("set", "node0 MB", "node1 MB", "node2 MB")
    res = {}
    for name in ("hot", "warm", "cold"):
        res[name] = {"n%d" % n: stats(num(kv, "%s_n%d_mb" % (name, n)) for kv in rows)
                     for n in range(3)}
        md.append("| %s | %s |" % (name, " | ".join(fmt(res[name]["n%d" % n], "%.0f")
                                                    for n in range(3))))
    res["line0_max_mb"] = stats(num(kv, "line0_max_mb") for kv in rows)
    res["line1_max_mb"] = stats(num(kv, "line1_max_mb") for kv in rows)
    res["held_rounds"] = sum(int(kv["held"]) for kv in rows)
    hot_top = res["hot"]["n0"]["median"] >= 0.9 * 48
    res["goal_met"] = res["held_rounds"] == len(rows) and hot_top
    md.append("\nLargest reading: node0's line %s MB against 64, node1's line %s MB against 192; "
              "both held in %d of %d rounds; hot set on node0 at the end: %s.  %s\n" % (
                  fmt(res["line0_max_mb"], "%.1f"), fmt(res["line1_max_mb"], "%.1f"),
                  res["held_rounds"], len(rows), "yes" if hot_top else "no",
                  verdict(res["goal_met"])))
    dump("threetier", dict(goal="both limits hold (4 MB tolerance); the hot set ends on node0",
                           result=res))
    with open(os.path.join(out, "threetier.dat"), "w") as f:
        for kv in series["threetier"]:
            if kv["round"] == "1":
                f.write("%s %s\n" % (kv["t"], " ".join(kv["%s_n%d_mb" % (s_, n)]
                                                      for s_ in ("hot", "warm", "cold")
                                                      for n in range(3))))
    md.append(gnuplot("threetier", 'set title "Each set on node0 (solid) and node2 (dashed), round 1"\n'
                      'set xlabel "seconds since NUMA balancing was switched on"\nset ylabel "MB"\n'
                      'plot "threetier.dat" u 1:2 w l lw 2 t "hot on node0", '
                      '"" u 1:5 w l lw 2 t "warm on node0", "" u 1:8 w l lw 2 t "cold on node0", '
                      '"" u 1:4 w l dt 2 t "hot on node2", "" u 1:7 w l dt 2 t "warm on node2", '
                      '"" u 1:10 w l dt 2 t "cold on node2"\n'))

# ---- late victim (Hahn's experiment) ----------------------------------------------------
VICTIM_CFGS = (("stock", "stock 6.12, numa_balancing=2"),
               ("damon", "stock 6.12 + DAMON migrate_hot/cold, memcg filters"),
               ("low", "this series, memory.tiers.low = fair share"),
               ("auto", "this series, memory.min only + memory_tiers_auto"))
VICTIM_CGS = ("hog1", "hog2", "hog3", "victim")
if bench["victim"]:
    md.append("## Late victim\n")
    md.append("`tierbench victim`, Joshua Hahn's experiment (tier-aware memcg limits RFC v2: "
              "750 GB DRAM + 250 GB CXL, four cgroups of 220 GB, three hogs first, the victim "
              "later, numa_balancing=2) scaled to the guest: node0 1536 MB, node1 512 MB (3:1), "
              "four cgroups of 22% of all memory each, reading their working sets at random; "
              "the hogs fill theirs and run 20 s alone, then the victim starts and everything "
              "runs 90 s.  Fair share: a quarter of node0's free memory above its high watermark "
              "before the start.  Shares are top-tier bytes (memory.numa_stat on node0) over the "
              "fair share, the median of the last 10 s.  Converged: the victim at >= 90% of its "
              "fair share from that second to the end.  Goal: victim >= 0.9 within 60 s, every "
              "hog within 0.9..1.1.\n")
    md.append("The *model* column is not measured: TCG gives both nodes the same speed.  It is "
              "the victim's mean cost of a random read from its placement at the end and the "
              "topology's HMAT read latencies (node0 %s ns, node1 %s ns, from sysfs in the guest), and "
              "the victim's modelled throughput against stock's, 1/cost over 1/cost(stock).  "
              "Hahn measured 12.3 -> 17.0 Mops/s (x1.38) on real CXL.\n"
              % (bench["victim"][0].get("lat0_ns", "?"), bench["victim"][0].get("lat1_ns", "?")))
    table("set-up", "victim share", "hog shares (1, 2, 3)", "converged after s",
          "victim model ns/read", "model throughput vs stock", "goal")
    res = {}
    stock_cost = None
    rows0 = rows_of("victim", "config", "stock")
    if rows0:
        stock_cost = st.median(num(kv, "model_ns_per_read") for kv in rows0)
    for cfg, label in VICTIM_CFGS:
        rows = rows_of("victim", "config", cfg)
        if not rows:
            continue
        r = {c: stats(num(kv, c + "_share") for kv in rows) for c in VICTIM_CGS}
        conv = [num(kv, "converge_s") for kv in rows]
        r["converge_s"] = stats(c for c in conv if c >= 0)
        r["converged_rounds"] = sum(1 for c in conv if 0 <= c <= 60)
        r["model_ns_per_read"] = stats(num(kv, "model_ns_per_read") for kv in rows)
        r["fair_mb"] = stats(num(kv, "fair_mb") for kv in rows)
        r["ws_mb"] = stats(num(kv, "ws_mb") for kv in rows)
        if stock_cost:
            r["model_throughput_vs_stock"] = stock_cost / r["model_ns_per_read"]["median"]
        ok = (r["victim"]["median"] >= 0.9 and r["converged_rounds"] == len(rows) and
              all(0.9 <= r[h]["median"] <= 1.1 for h in VICTIM_CGS[:3]))
        r["goal_met"] = ok
        res[cfg] = r
        md.append("| %s | %s | %s | %s (%d of %d rounds by 60 s) | %s | %s | %s |" % (
            label, fmt(r["victim"], "%.2f"),
            ", ".join("%.2f" % r[h]["median"] for h in VICTIM_CGS[:3]),
            fmt(r["converge_s"], "%.0f"), r["converged_rounds"], len(rows),
            fmt(r["model_ns_per_read"], "%.1f"),
            "%.2f" % r["model_throughput_vs_stock"] if stock_cost else "n/a",
            verdict(ok) if cfg in ("low", "auto") else "(reference)"))
    damon = bench["victim_damon"]
    if damon:
        res["damon_sz_applied_mb"] = {kd: stats(num(kv, "sz_applied_mb") for kv in damon
                                                if kv["kdamond"] == kd) for kd in ("0", "1")}
        md.append("\nDAMON applied migrate_cold (the hogs' memory on node0) to %s MB and "
                  "migrate_hot (the victim's on node1) to %s MB per run." % (
                      fmt(res["damon_sz_applied_mb"]["0"], "%.0f"),
                      fmt(res["damon_sz_applied_mb"]["1"], "%.0f")))
    md.append("")
    dump("victim", dict(goal="victim >= 0.9 of its fair share within 60 s, every hog 0.9..1.1",
                        setups=res,
                        series={cfg: [{k: (num(kv, k) if k != "round" else kv[k])
                                       for k in ("round", "t") + tuple(c + "_mb" for c in VICTIM_CGS)}
                                      for kv in series["victim"] if kv["config"] == cfg]
                                for cfg in res if cfg in dict(VICTIM_CFGS)}))
    with open(os.path.join(out, "victim.dat"), "w") as f:
        for cfg, _ in VICTIM_CFGS:
            f.write("# %s, round 1\n" % cfg)
            for kv in series["victim"]:
                if kv["config"] == cfg and kv["round"] == "1":
                    f.write("%s %s\n" % (kv["t"], " ".join(kv[c + "_mb"] for c in VICTIM_CGS)))
            f.write("\n\n")
    fair = res.get("stock", res.get("low", {})).get("fair_mb")
    plots = []
    for idx, (cfg, label) in enumerate(VICTIM_CFGS):
        plots.append('set title "%s"\nplot "victim.dat" index %d u 1:2 w l t "hog1", '
                     '"" index %d u 1:3 w l t "hog2", "" index %d u 1:4 w l t "hog3", '
                     '"" index %d u 1:5 w l lw 3 t "victim"%s\n'
                     % (label, idx, idx, idx, idx,
                        ', %.0f w l dt 2 t "fair share"' % fair["median"] if fair else ""))
    md.append(gnuplot("victim", 'set terminal pngcairo size 1100,800 font ",9" noenhanced\nset output "victim.png"\n'
                      'set multiplot layout 2,2 title "Top-tier MB per cgroup after the victim starts (round 1)"\n'
                      'set xlabel "s"\nset ylabel "MB on node0"\nset key bottom right\n'
                      + "".join(plots) + "unset multiplot\n"))

# ---- 5. ping-pong (thrashing) -------------------------------------------------------------
if bench["pingpong"]:
    md.append("## 5. Ping-pong (thrashing)\n")
    md.append("`tierbench pingpong`: node0 is filled with mlocked memory down to its low "
              "watermark + 64 MB on both kernels (stock's budget is the patched cap); a cgroup's "
              "128 MB hot set, written on node1, is "
              "read back to back with numa_balancing=2 for 60 s.  *patched*: `memory.tiers.max` "
              "64M on the fastest tier's line, so the hot set is twice the budget.  "
              "pgpromote_success and pgdemote_* are counted from the moment NUMA balancing is "
              "switched on, per minute; the steady columns only from 20 s on.  Every second the "
              "run also reads where each page of the hot set is (move_pages): a page back on a "
              "node it left less than a minute before is a *round trip* (a lower bound: a page "
              "that goes and comes back between two samples is not seen).  *hot on node0*: the "
              "hot set's MB on node0 at the end, against the 64 MB budget.  Goal: the patched "
              "kernel's round trips at most a tenth of stock's, with its budget still full of "
              "the hot set (>= 90% of 64 MB).\n")
    keys = ("sampled_roundtrip_mb_per_min", "sampled_up_mb_per_min", "sampled_down_mb_per_min",
            "promoted_mb_per_min", "demoted_mb_per_min", "steady_promoted_mb_per_min",
            "steady_demoted_mb_per_min", "hot_on_node0_mb")
    table("kernel", "round trips MB/min", "up MB/min (sampled)", "down MB/min (sampled)",
          "promoted MB/min", "demoted MB/min", "steady promoted MB/min", "steady demoted MB/min",
          "hot on node0 MB", "goal")
    res = {}
    for cfg in ("stock", "patched"):
        rows = rows_of("pingpong", "config", cfg)
        if not rows:
            continue
        res[cfg] = {k: stats(num(kv, k) for kv in rows if k in kv) for k in keys}
        ok = None
        if cfg == "patched" and res[cfg]["sampled_roundtrip_mb_per_min"]:
            base = res.get("stock", {}).get("sampled_roundtrip_mb_per_min")
            ok = (base is not None and
                  res[cfg]["sampled_roundtrip_mb_per_min"]["median"] <= base["median"] / 10 and
                  res[cfg]["hot_on_node0_mb"]["median"] >= 0.9 * 64)
            res[cfg]["goal_met"] = ok
        md.append("| %s | %s | %s |" % (
            cfg, " | ".join(fmt(res[cfg][k], "%.1f") for k in keys),
            verdict(ok) if cfg == "patched" else "(reference)"))
    md.append("")
    dump("pingpong", dict(goal="patched: round trips <= stock's / 10, budget >= 90% full of the hot set",
                          kernels=res))
    with open(os.path.join(out, "pingpong.dat"), "w") as f:
        for cfg in ("patched", "stock"):
            f.write("# %s\n" % cfg)
            for kv in series["pingpong"]:
                if kv["config"] == cfg and kv["round"] == "1":
                    f.write("%s %s %s %s\n" % (kv["t"], kv["promoted_mb"], kv["demoted_mb"], kv["node0_mb"]))
            f.write("\n\n")
    md.append(gnuplot("pingpong", 'set title "Capped hot set: cumulative promotions and demotions (round 1)"\n'
                      'set xlabel "seconds since NUMA balancing was switched on"\nset ylabel "MB"\n'
                      'plot "pingpong.dat" index 0 u 1:2 w l lw 2 t "patched promoted", '
                      '"" index 0 u 1:3 w l lw 2 t "patched demoted", '
                      '"" index 1 u 1:2 w l lw 2 t "stock promoted", '
                      '"" index 1 u 1:3 w l lw 2 t "stock demoted", '
                      '"" index 0 u 1:4 w l dt 2 t "patched on node0", '
                      '"" index 1 u 1:4 w l dt 2 t "stock on node0"\n'))

# ---- 6. workbench -------------------------------------------------------------------------------
wb = os.path.join(out, "workbench.json")
src = "this run"
if not os.path.exists(wb):
    older = sorted(glob.glob(os.path.join(os.path.dirname(out), "bench-*", "workbench.json")))
    wb = older[-1] if older else None
    src = "an earlier run, %s" % os.path.relpath(wb, os.path.dirname(out)) if wb else None
md.append("## 6. Cost of the workbench\n")
if wb:
    w = json.load(open(wb))
    installed = w["cold"].get("installed")
    md.append("`bench/workbench.sh`: `make check` on a clean clone of %s, first with an empty "
              "cache (cold: kernel tree, three kernels, selftests, ccache all built anew; %s), "
              "then again (warm).  From %s (%s).\n"
              % (w["revision"], "the cold run installed " + installed if installed else
                 "the Debian packages were already installed", src, w["date"]))
    table("", "wall time", "exit status")
    for kind in ("cold", "warm"):
        md.append("| %s make check | %d min %02d s | %d |" % (
            kind, w[kind]["wall_seconds"] // 60, w[kind]["wall_seconds"] % 60, w[kind]["exit_status"]))
    md.append("")
else:
    md.append("Not measured in this run and no earlier measurement found (BENCH_SKIP=workbench).\n")

profiles = sorted(glob.glob(os.path.join(out, "faultprof-*.md")))
if profiles:
    md.append("## Fault path per kernel function (faultprof)\n")
    md.append("One boot of each kernel under the insnprof plugin "
              "(bench/insnprof): guest instructions per page fault by "
              "function, toptier minus baseline.  Exact counts of one boot, "
              "not medians: what the fault path runs, not how fast.\n")
    for path in profiles:
        md.append(open(path).read())

with open(os.path.join(out, "summary.md"), "w") as f:
    f.write("\n".join(md) + "\n")
print("\n".join(l for l in md if not l.startswith("![")))
