#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Host tests for tierstat against generated fixture trees; prints TAP.
# Usage: tests/run.sh [path/to/tierstat]   (default: ../tierstat)
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${1:-$HERE/../tierstat}
[ -x "$BIN" ] || { echo "Bail out! no tierstat binary at $BIN"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/tierstat-test.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
sh "$HERE/fixtures.sh" "$T" || { echo "Bail out! fixtures.sh failed"; exit 1; }
unset TIERSTAT_SYSFS TIERSTAT_PROCFS TIERSTAT_CGROUPFS
PS=$(getconf PAGESIZE)
N=0
FAILED=0

# ok NAME COMMAND...: one TAP line from the command's exit status
ok() {
	name=$1
	shift
	N=$((N + 1))
	if "$@" > "$T/last.log" 2>&1; then
		echo "ok $N - $name"
	else
		echo "not ok $N - $name"
		sed 's/^/# /' "$T/last.log"
		FAILED=$((FAILED + 1))
	fi
}

# ts FIXTURE [ARGS...]: tierstat on a fixture, output in $T/out, $T/err
ts() {
	f=$1
	shift
	"$BIN" --sysfs "$T/$f/sys" --procfs "$T/$f/proc" --cgroupfs "$T/$f/cg" "$@" \
		> "$T/out" 2> "$T/err"
}

# js FIXTURE 'python expression on d' [ARGS...]: JSON output checked by python
js() {
	f=$1
	e=$2
	shift 2
	ts "$f" --json "$@" || { cat "$T/err"; return 1; }
	PS=$PS python3 -c '
import json, os, sys
PS = int(os.environ["PS"])
d = json.load(open(sys.argv[1]))
cg = {(c["path"][1:] or "/"): c for c in d["cgroups"]}
r = eval(sys.argv[2])
if r is not True:
    print("false:", sys.argv[2]); print(json.dumps(d, indent=1)[:3000]); sys.exit(1)
' "$T/out" "$e"
}

# fails STATUS PATTERN COMMAND...: exits with STATUS and stderr matches PATTERN
fails() {
	st=$1
	pat=$2
	shift 2
	"$@" > "$T/out" 2> "$T/err"
	rc=$?
	cat "$T/err"
	[ "$rc" -eq "$st" ] && grep -q -- "$pat" "$T/err" && [ ! -s "$T/out" ]
}

has() { grep -q -- "$1" "$T/out" || { cat "$T/out"; false; }; }
hasnt() { ! grep -q -- "$1" "$T/out" || { cat "$T/out"; false; }; }

# --- basics
ok "--help exits 0 and documents --json" sh -c '"$0" --help | grep -q -- --json' "$BIN"
ok "man page exists and is troff" grep -q '^\.TH TIERSTAT 1' "$HERE/../tierstat.1"

# --- cgroup v1 fixture
ok "v1: runs" ts v1
ok "v1: headers even when not a terminal" sh -c "head -1 '$T/out' | grep -q '^TIER  *NODES  *TOTAL' && grep -q '^CGROUP .*SOFTLIMIT' '$T/out'"
ok "v1: human units for /a" has '^/a  *1000.0K  *800.0K  *80%  *200.0K  *1.0M '
ok "v1: unlimited soft limit shown as max" has '^/a/b .* max '
ok "v1: -H forces headers" sh -c "'$BIN' -H --sysfs '$T/v1/sys' --procfs '$T/v1/proc' --cgroupfs '$T/v1/cg' | grep -q '^CGROUP .*SOFTLIMIT'"
ok "v1: -r prints bytes" sh -c "'$BIN' -r --sysfs '$T/v1/sys' --procfs '$T/v1/proc' --cgroupfs '$T/v1/cg' | grep -q '^/a  *1024000  *819200  *80%  *204800  *1048576 '"
ok "v1: --bytes is -r" sh -c "'$BIN' --bytes --sysfs '$T/v1/sys' --procfs '$T/v1/proc' --cgroupfs '$T/v1/cg' | grep -q '^/a  *1024000  *819200 '"
ok "v1: json cgroup values" js v1 'd["cgroup_version"] == 1 and cg["a"]["toptier_bytes"] == 819200 and cg["a"]["lower_bytes"] == 50 * PS and cg["a"]["usage_bytes"] == 1024000 and cg["a"]["toptier_source"] == "kernel" and cg["a"]["limits"] == {"low": None, "high": None, "max": None, "soft": 1048576} and cg["a/b"]["limits"]["soft"] == "max" and cg["/"]["limits"]["soft"] is None and cg["c"]["lower_bytes"] == 90 * PS'
ok "v1: json tiers and nodes" js v1 'd["toptier_nodes"] == [0] and d["toptier_source"] == "is_toptier" and d["tiers"] == [{"tier": 4, "nodes": [0], "toptier": True, "total_bytes": 1073741824, "used_bytes": 805306368, "free_bytes": 268435456}, {"tier": 22, "nodes": [1], "toptier": False, "total_bytes": 2147483648, "used_bytes": 536870912, "free_bytes": 1610612736}] and d["nodes"][1] == {"node": 1, "tier": 22, "toptier": False, "total_bytes": 2147483648, "used_bytes": 536870912, "free_bytes": 1610612736}'
ok "v1: json vmstat keeps demote/promote/numa/migrate counters only" js v1 'd["vmstat"] == {"pgdemote_kswapd": 1000, "pgdemote_direct": 20, "pgdemote_khugepaged": 3, "pgpromote_success": 400, "pgpromote_candidate": 500, "numa_pte_updates": 7, "numa_pages_migrated": 300, "pgmigrate_success": 1300, "pgmigrate_fail": 5} and set(d["vmstat_rates"].values()) == {None} and d["interval"] is None'
ok "v1: counters missing from memory.stat are null" js v1 'all(v is None for c in d["cgroups"] for v in c["counters"].values())'
ok "v1: restrict to a subtree" js v1 '[c["path"] for c in d["cgroups"]] == ["/a", "/a/b"]' /a/
ok "v1: overlapping arguments, no duplicates" js v1 '[c["path"] for c in d["cgroups"]] == ["/a", "/a/b", "/c"]' c a/b a
ok "v1: --sort toptier" js v1 '[c["path"] for c in d["cgroups"]] == ["/", "/a", "/a/b", "/c"]' --sort toptier
ok "v1: --sort lower" js v1 '[c["path"] for c in d["cgroups"]] == ["/", "/c", "/a", "/a/b"]' --sort lower
ok "v1: --sort name" js v1 '[c["path"] for c in d["cgroups"]] == ["/", "/a", "/a/b", "/c"]' -s name

# --- cgroup v2 fixture
ok "v2: json values" js v2 'd["cgroup_version"] == 2 and cg["x"]["toptier_bytes"] == 6291456 and cg["x"]["lower_bytes"] == 1048576 and cg["x"]["usage_bytes"] == 7340032 and cg["x"]["limits"] == {"low": 1048576, "high": "max", "max": 268435456, "soft": None} and cg["x"]["counters"] == {"pgdemote_kswapd": 50, "pgdemote_direct": 5, "pgdemote_khugepaged": 1, "pgpromote_success": 30, "pgdemote_tierlimit": 7, "pgpromote_tierlimit_denied": 2}'
ok "v2: json per-tier lines of memory.tiers.*" js v2 'cg["x"]["toptier_source"] == "kernel" and cg["x"]["tiers"] == [{"tier": 4, "current_bytes": 6291456, "peak_bytes": 6356992, "low": 1048576, "high": "max", "max": 268435456, "events": {"low": 3, "high": 0, "max": 5, "fallback": 1}}] and cg["/"]["tiers"] == []'
ok "v2: root has no memory.current and no limits" js v2 'cg["/"]["usage_bytes"] is None and cg["/"]["toptier_bytes"] == 8388608 and cg["/"]["lower_bytes"] == 4194304 and cg["/"]["limits"]["max"] is None'
ok "v2: human line, one column group for the one line" sh -c "'$BIN' --sysfs '$T/v2/sys' --procfs '$T/v2/proc' --cgroupfs '$T/v2/cg' | grep -q '^/x/y  *3.0M  *2.0M  *67%  *1.0M  *2.0M  *2.0M  *1.0M  *max  *256.0M  *3/0/5/1  *56  *30  *7  *2\$'"
ok "v2: --sort lower" js v2 '[c["path"] for c in d["cgroups"]] == ["/", "/z", "/x", "/x/y"]' --sort lower
ok "v2: environment variables instead of options" sh -c "TIERSTAT_SYSFS='$T/v2/sys' TIERSTAT_PROCFS='$T/v2/proc' TIERSTAT_CGROUPFS='$T/v2/cg' '$BIN' --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"cgroup_version\"] == 2 and len(d[\"cgroups\"]) == 4'"

# --- three tiers: two lines per memory.tiers.* file, cumulative
ok "v3: top tier from the fastest line" js v3 'cg["a"]["toptier_bytes"] == 6291456 and cg["a"]["toptier_source"] == "kernel" and cg["a"]["lower_bytes"] == 3145728 and cg["a"]["limits"] == {"low": 1048576, "high": "max", "max": 67108864, "soft": None} and cg["a"]["counters"]["pgdemote_tierlimit"] == 70'
ok "v3: json per-tier lines, fastest first" js v3 'cg["a"]["tiers"] == [{"tier": 4, "current_bytes": 6291456, "peak_bytes": 7340032, "low": 1048576, "high": "max", "max": 67108864, "events": {"low": 1, "high": 2, "max": 3, "fallback": 4}}, {"tier": 22, "current_bytes": 8388608, "peak_bytes": 9437184, "low": 0, "high": "max", "max": "max", "events": {"low": 0, "high": 0, "max": 0, "fallback": 0}}]'
ok "v3: malformed memory.tiers.* files give null, usage from numa_stat" js v3 'cg["b"]["toptier_bytes"] == 6291456 and cg["b"]["toptier_source"] == "numa_stat" and cg["b"]["limits"] == {"low": None, "high": None, "max": None, "soft": None} and cg["b"]["tiers"] == [{"tier": 4, "current_bytes": None, "peak_bytes": 4096, "low": None, "high": None, "max": None, "events": {"low": None, "high": None, "max": None, "fallback": None}}, {"tier": 22, "current_bytes": None, "peak_bytes": 8192, "low": None, "high": None, "max": None, "events": {"low": None, "high": None, "max": None, "fallback": None}}]'
ok "v3: human line, a column group per tier line" sh -c "'$BIN' --sysfs '$T/v3/sys' --procfs '$T/v3/proc' --cgroupfs '$T/v3/cg' | grep -q '^/a  *9.0M  *6.0M  *67%  *3.0M  *6.0M  *6.0M  *1.0M  *max  *64.0M  *1/2/3/4  *8.0M  *2.0M  *0B  *max  *max  *0/0/0/0  *56  *30  *70  *20\$'"
ok "v3: headers of both groups" sh -c "'$BIN' --sysfs '$T/v3/sys' --procfs '$T/v3/proc' --cgroupfs '$T/v3/cg' | grep -q '^CGROUP .* T4:CUR  *T4:IN  *T4:LOW  *T4:HIGH  *T4:MAX  *T4:EVENTS  *T22:CUR .* T22:EVENTS  *DEMOTE'"

# --- unpatched kernel: no is_toptier, no toptier files
ok "unpatched v2: top tier from memory_tiering, usage from numa_stat" js unpatched 'd["toptier_source"] == "memory_tiering" and d["toptier_nodes"] == [0] and cg["x"]["toptier_bytes"] == 6291456 and cg["x"]["lower_bytes"] == 1048576 and cg["x"]["toptier_source"] == "numa_stat" and cg["x"]["limits"] == {"low": None, "high": None, "max": None, "soft": None} and cg["x"]["counters"]["pgdemote_tierlimit"] is None and cg["x"]["counters"]["pgpromote_tierlimit_denied"] is None and cg["x"]["counters"]["pgdemote_kswapd"] == 50 and cg["x"]["tiers"] == []'
echo 1 > "$T/unpatched/cg/x/memory.toptier.current"
ok "unpatched v2: the old memory.toptier.* files are not read" js unpatched 'cg["x"]["toptier_bytes"] == 6291456 and cg["x"]["toptier_source"] == "numa_stat"'
rm "$T/unpatched/cg/x/memory.toptier.current"
ok "unpatched v2: missing values shown as -" sh -c "'$BIN' --sysfs '$T/unpatched/sys' --procfs '$T/unpatched/proc' --cgroupfs '$T/unpatched/cg' | grep -q '^/x  *7.0M  *6.0M  *86%  *1.0M  *56  *30  *-  *-\$'"
ok "unpatched v1: top tier from numa_stat pages" sh -c "'$BIN' --json --sysfs '$T/unpatched/sys' --procfs '$T/unpatched/proc' --cgroupfs '$T/unpatched/cg1' | PS=$PS python3 -c 'import json,os,sys; d=json.load(sys.stdin); c={x[\"path\"]:x for x in d[\"cgroups\"]}; ps=int(os.environ[\"PS\"]); assert d[\"cgroup_version\"] == 1 and c[\"/a\"][\"toptier_bytes\"] == 200*ps and c[\"/a\"][\"lower_bytes\"] == 50*ps and c[\"/a\"][\"toptier_source\"] == \"numa_stat\" and c[\"/a\"][\"limits\"][\"soft\"] is None'"
: > "$T/unpatched/sys/devices/virtual/memory_tiering/memory_tier4/nodelist"
ok "unpatched: top tier is the lowest tier id that has nodes" js unpatched 'd["toptier_nodes"] == [1] and d["toptier_source"] == "memory_tiering" and cg["x"]["toptier_bytes"] == 1048576 and cg["x"]["lower_bytes"] == 6291456'
rm -rf "$T/unpatched/sys/devices/virtual/memory_tiering"
ok "no memory_tiering at all: every node is top tier" js unpatched 'd["toptier_nodes"] == [0, 1] and d["toptier_source"] == "all_nodes" and d["tiers"] == [] and cg["x"]["toptier_bytes"] == 7340032 and cg["x"]["lower_bytes"] == 0'

# --- garbage and missing files
ok "garbage: exits 0, valid JSON" js garbage 'True'
ok "garbage: malformed is_toptier falls back to memory_tiering" js garbage 'd["toptier_source"] == "memory_tiering" and d["toptier_nodes"] == [0]'
ok "garbage: malformed meminfo gives null sizes" js garbage 'd["nodes"][0]["total_bytes"] is None and d["nodes"][0]["free_bytes"] is None and d["nodes"][1]["total_bytes"] is None'
ok "garbage: malformed or missing nodelist gives an empty tier" js garbage '[(t["tier"], t["nodes"]) for t in d["tiers"]] == [(4, [0]), (22, []), (99, [])]'
ok "garbage: truncated and non-numeric vmstat lines skipped" js garbage 'd["vmstat"] == {"pgpromote_success": 12}'
ok "garbage: malformed cgroup files give null" js garbage 'cg["bad"]["toptier_bytes"] is None and cg["bad"]["lower_bytes"] is None and cg["bad"]["usage_bytes"] is None and cg["bad"]["limits"]["soft"] is None and cg["bad"]["counters"]["pgdemote_kswapd"] is None and cg["empty"]["usage_bytes"] is None and cg["empty"]["toptier_bytes"] is None'
ok "garbage: human output does not crash" ts garbage
ok "missing meminfo files" sh -c "rm '$T/garbage/sys/devices/system/node/node0/meminfo' && '$BIN' --sysfs '$T/garbage/sys' --procfs '$T/garbage/proc' --cgroupfs '$T/garbage/cg' >/dev/null 2>&1"
mkdir "$T/weird" && cp -r "$T/v2/sys" "$T/v2/proc" "$T/v2/cg" "$T/weird/" && cp -r "$T/v2/cg/z" "$T/weird/cg/we\"ird \\name"
ok "cgroup names needing JSON escapes" js weird "'we\"ird \\\\name' in cg and cg['we\"ird \\\\name']['toptier_bytes'] == 1048576"

# --- deep hierarchy
DEEP=$(i=1; p=l1; while [ $i -lt 60 ]; do i=$((i + 1)); p=$p/l$i; done; echo $p)
ok "deep: 60 levels, 61 cgroups" js deep "len(d['cgroups']) == 61 and d['cgroups'][-1]['path'] == '/$DEEP' and d['cgroups'][-1]['toptier_bytes'] == 4096 and d['cgroups'][-1]['lower_bytes'] == 4096"
ok "deep: restrict to level 59" js deep "[c['path'] for c in d['cgroups']] == ['/${DEEP%/l60}', '/$DEEP']" "${DEEP%/l60}"
ok "deep: human output" sh -c "'$BIN' --sysfs '$T/deep/sys' --procfs '$T/deep/proc' --cgroupfs '$T/deep/cg' | grep -q '^/$DEEP '"

# --- repeating and rates
( sleep 1.1; sed -i 's/^pgdemote_kswapd 1000$/pgdemote_kswapd 3000/' "$T/v2/proc/vmstat"
  sed -i 's/^pgpromote_success 30$/pgpromote_success 530/' "$T/v2/cg/x/memory.stat" ) &
ok "-d -n: one JSON object per snapshot, rates from deltas" sh -c "'$BIN' --json -d 2 -n 2 --sysfs '$T/v2/sys' --procfs '$T/v2/proc' --cgroupfs '$T/v2/cg' > '$T/rates' && python3 -c '
import json, sys
a, b = [json.loads(l) for l in open(sys.argv[1])]
x = {c[\"path\"]: c for c in b[\"cgroups\"]}[\"/x\"]
i = b[\"interval\"]
assert a[\"interval\"] is None and 1.5 < i < 3, i
assert abs(b[\"vmstat_rates\"][\"pgdemote_kswapd\"] * i - 2000) < 5, b[\"vmstat_rates\"]
assert b[\"vmstat_rates\"][\"pgdemote_direct\"] == 0
assert abs(x[\"counter_rates\"][\"pgpromote_success\"] * i - 500) < 5, x[\"counter_rates\"]
assert x[\"counter_rates\"][\"pgdemote_kswapd\"] == 0
' '$T/rates'"
wait
ok "-d human: rate columns, two snapshots" sh -c "'$BIN' -H -d 0.1 -n 2 --sysfs '$T/v2/sys' --procfs '$T/v2/proc' --cgroupfs '$T/v2/cg' > '$T/out' && [ \$(grep -c '^CGROUP.*DEMOTE/s  *PROMOTE/s' '$T/out') = 2 ] && grep -q '^/x .* 0.0  *0.0\$' '$T/out'"

# --- default cgroupfs detection under SYSFS/fs/cgroup
mkdir -p "$T/det/sys/fs/cgroup" && cp -r "$T/v1/sys/devices" "$T/det/sys/" && cp -r "$T/v1/proc" "$T/det/"
cp -r "$T/v1/cg" "$T/det/sys/fs/cgroup/memory" && cp -r "$T/v2/cg" "$T/det/sys/fs/cgroup/unified"
det() { "$BIN" --json --sysfs "$T/det/sys" --procfs "$T/det/proc" | python3 -c "import json,sys; d=json.load(sys.stdin); assert d['cgroup_version'] == $1 and d['cgroup_root'].endswith('$2'), d['cgroup_root']"; }
ok "detection: v1 at fs/cgroup/memory before fs/cgroup/unified" det 1 /fs/cgroup/memory
rm -rf "$T/det/sys/fs/cgroup/memory"
ok "detection: v2 at fs/cgroup/unified" det 2 /fs/cgroup/unified
echo memory > "$T/det/sys/fs/cgroup/cgroup.controllers"
ok "detection: v2 at fs/cgroup first" det 2 /fs/cgroup
rm -rf "$T/det/sys/fs/cgroup/unified" "$T/det/sys/fs/cgroup/cgroup.controllers"
ok "detection: nothing mounted -> exit 1 with message" fails 1 'no cgroup filesystem found' "$BIN" --sysfs "$T/det/sys" --procfs "$T/det/proc"

# --- Prometheus text format, read back by a real parser (Debian's
# python3-prometheus-client: /usr/bin/python3, whatever python3 is first in
# PATH); prom FIXTURE 'expression on m' [ARGS...]: m maps
# (name, frozenset of label pairs) to the value of every sample.
prom() {
	f=$1
	e=$2
	shift 2
	ts "$f" --prometheus "$@" || { cat "$T/err"; return 1; }
	/usr/bin/python3 -c '
import math, sys
from prometheus_client.parser import text_string_to_metric_families
fams = list(text_string_to_metric_families(open(sys.argv[1]).read()))
m = {(s.name, frozenset(s.labels.items())): s.value for f in fams for s in f.samples}
types = {f.name: f.type for f in fams}
def v(name, **labels):
    return m.get((name, frozenset(labels.items())))
r = eval(sys.argv[2])
if r is not True:
    print("false:", sys.argv[2]); print(open(sys.argv[1]).read()[:3000]); sys.exit(1)
' "$T/out" "$e"
}
ok "prometheus: v2 values and types" prom v2 'v("tierstat_cgroup_toptier_bytes", cgroup="/x") == 6291456 and v("tierstat_cgroup_lower_bytes", cgroup="/x") == 1048576 and v("tierstat_cgroup_tiers_max_bytes", cgroup="/x", tier="4") == 268435456 and v("tierstat_cgroup_tiers_high_bytes", cgroup="/x", tier="4") == math.inf and v("tierstat_cgroup_tiers_events_total", cgroup="/x", tier="4", event="max") == 5 and v("tierstat_cgroup_memory_stat_total", cgroup="/x", counter="pgdemote_tierlimit") == 7 and types["tierstat_cgroup_tiers_events"] == "counter" and types["tierstat_cgroup_node_bytes"] == "gauge" and v("tierstat_cgroup_usage_bytes", cgroup="/") is None'
ok "prometheus: per-node bytes of each cgroup" prom v2 'v("tierstat_cgroup_node_bytes", cgroup="/x", node="0") == 6291456 and v("tierstat_cgroup_node_bytes", cgroup="/x", node="1") == 1048576 and v("tierstat_node_toptier", node="0") == 1 and v("tierstat_node_total_bytes", node="1", tier="22") == 2147483648'
ok "prometheus: three tiers, a line each" prom v3 'v("tierstat_cgroup_tiers_current_bytes", cgroup="/a", tier="4") == 6291456 and v("tierstat_cgroup_tiers_current_bytes", cgroup="/a", tier="22") == 8388608 and v("tierstat_cgroup_tiers_max_bytes", cgroup="/a", tier="22") == math.inf'
ok "prometheus: v1 soft limit and usage" prom v1 'v("tierstat_cgroup_toptier_soft_limit_bytes", cgroup="/a") == 1048576 and v("tierstat_cgroup_toptier_soft_limit_bytes", cgroup="/a/b") == math.inf and v("tierstat_cgroup_toptier_bytes", cgroup="/a") == 819200 and v("tierstat_vmstat_total", counter="pgpromote_success") == 400'
ok "prometheus: a cgroup name with a quote and a backslash survives" prom weird 'v("tierstat_cgroup_usage_bytes", cgroup="/we\"ird \\name") == 4194304'
ok "prometheus -o: the file is replaced whole, no temporary left" sh -c '
	"$0" --sysfs "$1/v2/sys" --procfs "$1/v2/proc" --cgroupfs "$1/v2/cg" -p -o "$1/m.prom" \
		> "$1/o.out" && [ ! -s "$1/o.out" ] &&
	grep -q "^tierstat_cgroup_toptier_bytes{cgroup=\"/x\"} 6291456\$" "$1/m.prom" &&
	! ls "$1" | grep -q "m\.prom\..*tmp"' "$BIN" "$T"
ok "-o without --prometheus -> exit 2" fails 2 'needs --prometheus' ts v2 -o "$T/x.prom"
ok "--json with --prometheus -> exit 2" fails 2 'exclude each other' ts v2 -j -p
ok "-o into a missing directory -> exit 1" fails 1 'cannot create' ts v2 -p -o "$T/none/m.prom"
ok "--version" sh -c '"$0" --version | grep -q "^tierstat [0-9]"' "$BIN"
ok "json version 3: paths as in the human output, counter_rates beside vmstat_rates" js v2 'd["version"] == 3 and [c["path"] for c in d["cgroups"]] == ["/", "/x", "/x/y", "/z"] and "counter_rates" in cg["x"] and "rates" not in cg["x"] and "vmstat_rates" in d'
ok "json: per-node bytes" js v3 'cg["a"]["node_bytes"] == {"0": 6291456, "1": 2097152, "2": 1048576}'

# --- 64 nodes, huge values, terminals
mkdir "$T/wide" && cp -r "$T/v2/sys" "$T/v2/proc" "$T/v2/cg" "$T/wide/"
for n in $(seq 2 63); do
	mkdir -p "$T/wide/sys/devices/system/node/node$n"
	printf 'Node %d MemTotal:  1099511627776 kB\nNode %d MemFree: 1099511627776 kB\n' "$n" "$n" \
		> "$T/wide/sys/devices/system/node/node$n/meminfo"
done
echo 1-63 > "$T/wide/sys/devices/virtual/memory_tiering/memory_tier22/nodelist"
ok "64 nodes: the node list as a range, not cut" sh -c "'$BIN' --sysfs '$T/wide/sys' --procfs '$T/wide/proc' --cgroupfs '$T/wide/cg' | grep -q '^memory_tier22  *1-63  '"
ok "64 nodes: json has every node of the tier" js wide 'd["tiers"][1]["nodes"] == list(range(1, 64)) and len(d["nodes"]) == 64'
ok "-r: 1 PiB nodes keep their columns apart" sh -c "'$BIN' -r --sysfs '$T/wide/sys' --procfs '$T/wide/proc' --cgroupfs '$T/wide/cg' | grep -q '^node63  *memory_tier22  *1125899906842624  *0  *1125899906842624 no\$'"
if command -v script > /dev/null; then
	ok "a terminal gets bold headers" sh -c "TERM=xterm script -qec \"'$BIN' --sysfs '$T/v2/sys' --procfs '$T/v2/proc' --cgroupfs '$T/v2/cg'\" /dev/null | grep -q \"\$(printf '\\033')\""
	ok "TERM=dumb gets no escape codes" sh -c "! TERM=dumb script -qec \"'$BIN' --sysfs '$T/v2/sys' --procfs '$T/v2/proc' --cgroupfs '$T/v2/cg'\" /dev/null | grep -q \"\$(printf '\\033')\""
else
	ok "script(1) for the terminal tests (bsdutils)" false
fi
ok "--json=1 names the option" fails 2 "option '--json' takes no argument" ts v2 --json=1

# --- two sockets, four tiers
ok "2 sockets: each node's bytes, tiers of two nodes" js sock2 'cg["s"]["node_bytes"] == {"0": 1048576, "1": 2097152, "2": 3145728, "3": 4194304} and cg["s"]["toptier_bytes"] == 3145728 and cg["s"]["lower_bytes"] == 7340032 and d["toptier_nodes"] == [0, 1] and d["tiers"][0]["nodes"] == [0, 1]'
ok "2 sockets: the node lists as ranges" sh -c "'$BIN' --sysfs '$T/sock2/sys' --procfs '$T/sock2/proc' --cgroupfs '$T/sock2/cg' | grep -q '^memory_tier4  *0-1  ' && '$BIN' --sysfs '$T/sock2/sys' --procfs '$T/sock2/proc' --cgroupfs '$T/sock2/cg' | grep -q '^memory_tier22  *2-3  '"
ok "2 sockets: per-node metrics" prom sock2 'v("tierstat_cgroup_node_bytes", cgroup="/s", node="3") == 4194304 and v("tierstat_node_toptier", node="1") == 1 and v("tierstat_node_toptier", node="2") == 0'
ok "4 tiers: three lines in JSON" js four '[t["tier"] for t in cg["f"]["tiers"]] == [4, 22, 45] and cg["f"]["tiers"][2]["max"] == 4194304 and cg["f"]["tiers"][1]["max"] == "max" and cg["f"]["tiers"][2]["events"]["fallback"] == 2 and len(d["tiers"]) == 4'
ok "4 tiers: three column groups, each tier's own part" sh -c "'$BIN' --sysfs '$T/four/sys' --procfs '$T/four/proc' --cgroupfs '$T/four/cg' | grep -q '^/f  .* 1.0M  *1.0M  *0B  *max  *1.0M  *0/0/9/0  *2.0M  *1.0M  *0B  *max  *max  *0/0/0/0  *3.0M  *1.0M  *0B  *max  *4.0M  *0/0/1/2 '"
ok "4 tiers: metrics of every line" prom four 'v("tierstat_cgroup_tiers_current_bytes", cgroup="/f", tier="45") == 3145728 and v("tierstat_cgroup_tiers_events_total", cgroup="/f", tier="45", event="fallback") == 2 and v("tierstat_tier_total_bytes", tier="60") == 1073741824'

# --- order, depth, delays, batch
ok "tree order: parents first, siblings by size" js tree '[c["path"] for c in d["cgroups"]] == ["/", "/q", "/q/r", "/q/r/s", "/p", "/p/big"]' --sort toptier
ok "tree order by name" js tree '[c["path"] for c in d["cgroups"]] == ["/", "/p", "/p/big", "/q", "/q/r", "/q/r/s"]'
ok "--depth 1" js tree '[c["path"] for c in d["cgroups"]] == ["/", "/p", "/q"]' --depth 1
ok "--depth 0: the root only" js tree '[c["path"] for c in d["cgroups"]] == ["/"]' --depth 0
ok "-d 200ms -n 2: two snapshots with headers, appended" sh -c "'$BIN' -d 200ms -n 2 --sysfs '$T/v2/sys' --procfs '$T/v2/proc' --cgroupfs '$T/v2/cg' > '$T/o2' && [ \$(grep -c '^CGROUP ' '$T/o2') -eq 2 ] && grep -q 'DEMOTE/s' '$T/o2'"
ok "-d 1s is one second" sh -c "s=\$(date +%s%N); '$BIN' -d 1s -n 2 --sysfs '$T/v2/sys' --procfs '$T/v2/proc' --cgroupfs '$T/v2/cg' > /dev/null && e=\$(date +%s%N) && [ \$(((e - s) / 1000000)) -ge 1000 ]"
for a in "-d 5ms" "-d 2m" "-d 1h" "-d ms" "--depth -1" "--depth x"; do
	# shellcheck disable=SC2086
	ok "bad argument '$a' -> exit 2" fails 2 'tierstat: ' ts v1 $a
done

# --- the live view, in a tmux pane 60 columns wide and 100 rows high: redrawn in place,
# lines cut to the width, long paths shortened, q quits
if command -v tmux > /dev/null; then
	TM="tmux -L tierstat-test-$$ -f /dev/null"
	# pane <file>: the pane's text, once it shows a frame (5 s at most)
	pane() {
		i=0
		while [ $i -lt 50 ]; do
			$TM capture-pane -p -t live > "$1" 2> /dev/null
			grep -q '^CGROUP' "$1" && grep -q '^VMSTAT' "$1" && return 0
			sleep 0.1
			i=$((i + 1))
		done
		return 1
	}
	live() {
		$TM kill-server 2> /dev/null
		rm -f "$T/exited"
		$TM new-session -d -s live -x 60 -y 100 \
			"TERM=xterm '$BIN' -d 300ms --sysfs '$T/$1/sys' --procfs '$T/$1/proc' --cgroupfs '$T/$1/cg'; echo \$? > '$T/exited'; sleep 30"
	}
	live deep
	ok "live: a frame with headers" pane "$T/p1"
	# A later frame has rates (the first has none): still one frame,
	# from the top, not appended below the first.
	i=0
	while [ $i -lt 50 ]; do
		$TM capture-pane -p -t live > "$T/p2"
		grep -q '^pgdemote_kswapd .* 0\.0$' "$T/p2" && break
		sleep 0.1
		i=$((i + 1))
	done
	ok "live: redrawn in place" sh -c "grep -q '^pgdemote_kswapd .* 0\.0\$' '$T/p2' && [ \$(grep -c '^TIER ' '$T/p2') -eq 1 ] && head -1 '$T/p2' | grep -q '^TIER '"
	ok "live: the CGROUP header cut to 60 columns, not wrapped" sh -c "grep -A1 '^CGROUP' '$T/p2' | tail -1 | grep -q '^/'"
	ok "live: long paths shortened, keeping their end" grep -q '^\.\.\.[^ ]*/l60 ' "$T/p2"
	$TM send-keys -t live q
	i=0
	while [ ! -s "$T/exited" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	ok "live: q quits, exit status 0" grep -qx 0 "$T/exited"
	$TM kill-server 2> /dev/null
else
	ok "tmux for the live-view tests" false
fi

# --- errors
ok "unknown cgroup -> exit 1" fails 1 "unknown cgroup 'nope'" ts v1 a nope
ok "unknown nested cgroup -> exit 1" fails 1 "unknown cgroup 'a/b/c'" ts v1 a/b/c
ok "dot-dot cgroup path -> exit 2" fails 2 "bad cgroup path" ts v1 ../v1
ok "missing sysfs -> exit 1" fails 1 'is sysfs mounted' "$BIN" --sysfs "$T/none" --procfs "$T/v1/proc" --cgroupfs "$T/v1/cg"
ok "missing procfs -> exit 1" fails 1 'is procfs mounted' "$BIN" --sysfs "$T/v1/sys" --procfs "$T/none" --cgroupfs "$T/v1/cg"
ok "missing cgroupfs -> exit 1" fails 1 "cgroupfs $T/none" "$BIN" --sysfs "$T/v1/sys" --procfs "$T/v1/proc" --cgroupfs "$T/none"
ok "cgroupfs that is no cgroup root -> exit 1" fails 1 'neither a cgroup v2 root' "$BIN" --sysfs "$T/v1/sys" --procfs "$T/v1/proc" --cgroupfs "$T/v1/proc"
for a in "-d 0" "-d abc" "-d -1" "-d 1x" "-n 0" "-n x" "--sort bogus" "--bogus" "-z" "-d"; do
	# shellcheck disable=SC2086
	ok "bad argument '$a' -> exit 2" fails 2 'tierstat: ' ts v1 $a
done

echo "1..$N"
[ "$FAILED" -eq 0 ]
