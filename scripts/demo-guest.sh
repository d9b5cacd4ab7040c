#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The guest half of "make demo": the tiers, demotion, promotion, and cgroups
# sharing the top tier under memory.tiers.low and max (the fastest tier's line).
echo
echo "=== toptier demo on $(uname -r) ==="
echo "--- memory tiers (/sys/devices/virtual/memory_tiering) ---"
for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
	echo "  $(basename $t): nodes $(cat $t/nodelist)"
done
dmesg | grep "Demotion targets" | sed 's/^\[[^]]*\] /  /'
for n in /sys/devices/system/node/node[0-9]*; do
	echo "  $(basename $n): $(grep MemTotal $n/meminfo | awk '{print $4/1024 " MB"}'), cpus: $(cat $n/cpulist)"
done
[ -r /sys/devices/system/node/is_toptier ] &&
	echo "  top-tier nodes (is_toptier): $(cat /sys/devices/system/node/is_toptier)"
echo
/tests/bin/tierdemo demote
echo
/tests/bin/tierdemo promote
echo
/tests/bin/tierdemo share
echo
echo "=== demo done ==="
