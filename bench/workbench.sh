#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark 6 of make bench: what the developer loop costs.  Runs "make
# check" twice on a clean clone of HEAD: first cold, with an empty
# $TOPTIER_CACHE (no kernel tree, no build output, empty ccache), then warm,
# on the cache the first run left.  Apt packages are not removed (a fresh
# machine also pays for "make deps" installing them); the JSON records what
# the cold run had to install, if anything.
#
#   workbench.sh -o DIR [-c CACHE]
#
# Writes DIR/workbench.json and DIR/workbench-*.log.  -c names an empty
# directory to use as the cache and keeps it afterwards (a cache made this
# way is a warm one for later work); by default a temporary one is removed.
source "$(dirname "$0")/../scripts/lib.sh"

out= cache=
while getopts "o:c:" opt; do
	case $opt in
	o) out=$OPTARG ;;
	c) cache=$OPTARG ;;
	*) die "usage: $0 -o dir [-c cache]" ;;
	esac
done
[[ -n $out ]] || die "usage: $0 -o dir"
mkdir -p "$out"
out=$(cd "$out" && pwd)

scratch=$(mktemp -d "${TMPDIR:-/tmp}/toptier-workbench.XXXXXX")
# Keep the runs' results and logs (not their multi-GB cache), also when a
# run is interrupted: a failing run's consoles are what one needs then.
trap 'cp -a "$scratch/results" "$out/workbench-results" 2>/dev/null; rm -rf "$scratch"' EXIT
if [[ -n $cache ]]; then
	mkdir -p "$cache"
	[[ -z $(ls -A "$cache") ]] || die "$cache is not empty: a cold run needs an empty cache"
	cache=$(cd "$cache" && pwd)
else
	cache=$scratch/cache
fi
git -C "$TOPTIER_ROOT" clone -q --no-hardlinks "$TOPTIER_ROOT" "$scratch/clone"
rev=$(git -C "$scratch/clone" rev-parse --short HEAD)

declare -A wall rc
for kind in cold warm; do
	msg "workbench: $kind make check of $rev (log: $out/workbench-$kind.log)"
	start=$SECONDS
	r=0
	(cd "$scratch/clone" && env -u CCACHE_DIR TOPTIER_CACHE="$cache" \
		TOPTIER_RESULTS="$scratch/results" CI=true make check) \
		< /dev/null > "$out/workbench-$kind.log" 2>&1 || r=$?
	wall[$kind]=$((SECONDS - start))
	rc[$kind]=$r
	msg "workbench: $kind make check took ${wall[$kind]} s, exit $r"
done
# What "make deps" installed in the cold run, from its ">>> installing" lines.
installed=$(sed -n 's/^>>> installing \(Debian packages: \)\{0,1\}\([^(]*\).*/\2/p' \
	"$out/workbench-cold.log" | tr '\n' ' ' | sed 's/ *$//; s/"//g')

cat > "$out/workbench.json" <<JSON
{
  "benchmark": "workbench",
  "revision": "$rev",
  "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "cpus": $(nproc),
  "cold": { "wall_seconds": ${wall[cold]}, "exit_status": ${rc[cold]},
            "installed": "$installed" },
  "warm": { "wall_seconds": ${wall[warm]}, "exit_status": ${rc[warm]} }
}
JSON
cat "$out/workbench.json"
((rc[cold] == 0 && rc[warm] == 0))
