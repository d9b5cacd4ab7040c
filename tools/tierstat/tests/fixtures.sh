#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Generate tierstat's fixture trees under $1 (a fresh temporary directory):
#   $1/v1      patched kernel, cgroup v1 memory hierarchy
#   $1/v2      patched kernel, cgroup v2 (memory.tiers.* files, one line:
#              two tiers)
#   $1/v3      patched kernel, cgroup v2, three tiers (memory.tiers.* files
#              with two lines), and malformed memory.tiers.* files
#   $1/tree    cgroup v2, siblings whose order by size differs from the
#              order of their subtrees' largest members
#   $1/sock2   two sockets: two DRAM nodes, two expanders, a tier each pair
#   $1/four    four tiers, memory.tiers.* files with three lines
#   $1/unpatched  no is_toptier, no toptier files, cgroup v2 and v1 roots
#   $1/garbage malformed values and truncated lines everywhere
#   $1/deep    cgroup v2 hierarchy 60 levels deep
# Every tree has sys/ (sysfs), proc/ (procfs) and cg/ (cgroup root).
# Known numbers are repeated in run.sh's checks.
set -e
R=$1

# sysfs: node0 1 GiB (256 MiB free) in memory_tier4, node1 2 GiB (1.5 GiB
# free) in memory_tier22; $2 = yes adds is_toptier
sysfs() {
	s=$1/sys
	for n in 0 1; do mkdir -p $s/devices/system/node/node$n; done
	mkdir -p $s/devices/virtual/memory_tiering/memory_tier4 \
		 $s/devices/virtual/memory_tiering/memory_tier22
	echo 0 > $s/devices/virtual/memory_tiering/memory_tier4/nodelist
	echo 1 > $s/devices/virtual/memory_tiering/memory_tier22/nodelist
	printf 'Node 0 MemTotal:        1048576 kB\nNode 0 MemFree:          262144 kB\nNode 0 MemUsed:          786432 kB\n' \
		> $s/devices/system/node/node0/meminfo
	printf 'Node 1 MemTotal:        2097152 kB\nNode 1 MemFree:         1572864 kB\n' \
		> $s/devices/system/node/node1/meminfo
	[ "$2" = yes ] && echo 0 > $s/devices/system/node/is_toptier
	mkdir -p $1/proc
	cat > $1/proc/vmstat <<V
nr_free_pages 12345
pgdemote_kswapd 1000
pgdemote_direct 20
pgdemote_khugepaged 3
pgpromote_success 400
pgpromote_candidate 500
numa_pte_updates 7
numa_pages_migrated 300
pgmigrate_success 1300
pgmigrate_fail 5
V
	return 0
}

# v1 memory cgroup: $1 dir, $2 toptier pages, $3 lower pages, $4 soft
# limit or "" (root: none), $5 = yes for the toptier files
v1cg() {
	mkdir -p $1
	echo $((($2 + $3) * 4096)) > $1/memory.usage_in_bytes
	printf 'total=%d N0=%d N1=%d\nfile=0 N0=0 N1=0\nanon=%d N0=%d N1=%d\nhierarchical_total=%d N0=%d N1=%d\n' \
		$(($2 + $3)) $2 $3 $(($2 + $3)) $2 $3 $(($2 + $3)) $2 $3 > $1/memory.numa_stat
	printf 'cache 0\nrss %d\ntotal_rss %d\n' $(($2 * 4096)) $(($2 * 4096)) > $1/memory.stat
	touch $1/cgroup.procs
	if [ "$5" = yes ]; then
		echo $(($2 * 4096)) > $1/memory.toptier_usage_in_bytes
		[ -n "$4" ] && echo $4 > $1/memory.toptier_soft_limit_in_bytes
	fi
	return 0
}

# v2 cgroup: $1 dir, $2 toptier bytes, $3 lower bytes, $4 = yes for the
# memory.tiers.* files (one line, the fastest tier: memory_tier4) and the
# tier-limit counters of memory.stat
v2cg() {
	mkdir -p $1
	echo memory > $1/cgroup.controllers
	touch $1/cgroup.procs
	echo $(($2 + $3)) > $1/memory.current
	a0=$(($2 / 2)); a1=$(($3 / 2))
	printf 'anon N0=%d N1=%d\nfile N0=%d N1=%d\nkernel_stack N0=999999 N1=999999\ninactive_anon N0=%d N1=%d\nactive_anon N0=0 N1=0\ninactive_file N0=%d N1=%d\nactive_file N0=0 N1=0\nunevictable N0=0 N1=0\n' \
		$a0 $a1 $(($2 - a0)) $(($3 - a1)) $a0 $a1 $(($2 - a0)) $(($3 - a1)) > $1/memory.numa_stat
	printf 'anon %d\nfile %d\npgdemote_kswapd 50\npgdemote_direct 5\npgdemote_khugepaged 1\npgpromote_success 30\n' \
		$a0 $(($2 - a0)) > $1/memory.stat
	if [ "$4" = yes ]; then
		echo "4 $2" > $1/memory.tiers.current
		echo "4 $(($2 + 65536))" > $1/memory.tiers.peak
		echo '4 1048576' > $1/memory.tiers.low
		echo '4 max' > $1/memory.tiers.high
		echo '4 268435456' > $1/memory.tiers.max
		echo '4 low=3 high=0 max=5 fallback=1' > $1/memory.tiers.events
		printf 'pgdemote_tierlimit 7\npgpromote_tierlimit_denied 2\n' >> $1/memory.stat
	fi
	return 0
}

rm -rf $R/v1 $R/v2 $R/v3 $R/tree $R/sock2 $R/four $R/unpatched $R/garbage $R/deep
# v1: root 300+100 pages, a 200+50 (soft 1M), a/b 100+25 (unlimited)
sysfs $R/v1 yes
v1cg $R/v1/cg 300 100 "" yes
v1cg $R/v1/cg/a 200 50 1048576 yes
v1cg $R/v1/cg/a/b 100 25 9223372036854771712 yes
v1cg $R/v1/cg/c 10 90 4194304 yes

# v2: root 8M+4M, x 6M+1M, x/y 2M+1M, z 1M+3M
sysfs $R/v2 yes
v2cg $R/v2/cg 8388608 4194304 no	# no memory.tiers.* in the root
rm $R/v2/cg/memory.current
v2cg $R/v2/cg/x 6291456 1048576 yes
v2cg $R/v2/cg/x/y 2097152 1048576 yes
v2cg $R/v2/cg/z 1048576 3145728 yes

# tree: p 1M+0 with p/big 8M+0 under it, q 4M+0: sorted by toptier,
# siblings q (4M) then p (1M), and p/big after its parent however large
sysfs $R/tree yes
v2cg $R/tree/cg 16777216 0 no
v2cg $R/tree/cg/p 1048576 0 yes
v2cg $R/tree/cg/p/big 8388608 0 yes
v2cg $R/tree/cg/q 4194304 0 yes
v2cg $R/tree/cg/q/r 131072 0 yes
v2cg $R/tree/cg/q/r/s 65536 0 yes

# sock2: two sockets, node0 and node1 DRAM (memory_tier4), node2 and node3
# their expanders (memory_tier22); cgroup s has 1M, 2M, 3M and 4M on
# nodes 0..3
sysfs $R/sock2 no
echo 0-1 > $R/sock2/sys/devices/virtual/memory_tiering/memory_tier4/nodelist
echo 2-3 > $R/sock2/sys/devices/virtual/memory_tiering/memory_tier22/nodelist
echo 0-1 > $R/sock2/sys/devices/system/node/is_toptier
for n in 1 2 3; do
	mkdir -p $R/sock2/sys/devices/system/node/node$n
	printf 'Node %d MemTotal:        1048576 kB\nNode %d MemFree:          524288 kB\n' $n $n \
		> $R/sock2/sys/devices/system/node/node$n/meminfo
done
v2cg $R/sock2/cg 0 0 no
v2cg $R/sock2/cg/s 0 0 no
printf 'anon N0=1048576 N1=2097152 N2=3145728 N3=4194304\nfile N0=0 N1=0 N2=0 N3=0\n' \
	> $R/sock2/cg/s/memory.numa_stat
echo '4 3145728' > $R/sock2/cg/s/memory.tiers.current

# four: four tiers (4, 22, 45, 60) a node each; cgroup f has three lines
sysfs $R/four yes
for t in 45:2 60:3; do
	mkdir -p $R/four/sys/devices/virtual/memory_tiering/memory_tier${t%:*} \
		 $R/four/sys/devices/system/node/node${t#*:}
	echo ${t#*:} > $R/four/sys/devices/virtual/memory_tiering/memory_tier${t%:*}/nodelist
	printf 'Node %d MemTotal:        1048576 kB\nNode %d MemFree:         1048576 kB\n' ${t#*:} ${t#*:} \
		> $R/four/sys/devices/system/node/node${t#*:}/meminfo
done
v2cg $R/four/cg 0 0 no
v2cg $R/four/cg/f 0 0 no
printf 'anon N0=1048576 N1=1048576 N2=1048576 N3=1048576\nfile N0=0 N1=0 N2=0 N3=0\n' \
	> $R/four/cg/f/memory.numa_stat
printf '4 1048576\n22 2097152\n45 3145728\n' > $R/four/cg/f/memory.tiers.current
printf '4 1048576\n22 2097152\n45 3145728\n' > $R/four/cg/f/memory.tiers.peak
printf '4 0\n22 0\n45 0\n' > $R/four/cg/f/memory.tiers.low
printf '4 max\n22 max\n45 max\n' > $R/four/cg/f/memory.tiers.high
printf '4 1048576\n22 max\n45 4194304\n' > $R/four/cg/f/memory.tiers.max
printf '4 low=0 high=0 max=9 fallback=0\n22 low=0 high=0 max=0 fallback=0\n45 low=0 high=0 max=1 fallback=2\n' \
	> $R/four/cg/f/memory.tiers.events

# v3: node2 (512 MiB, all free) in memory_tier45, below node1's memory_tier22;
# root 6M+2M+1M, a the same; b has malformed memory.tiers.* files
sysfs $R/v3 yes
mkdir -p $R/v3/sys/devices/system/node/node2 $R/v3/sys/devices/virtual/memory_tiering/memory_tier45
echo 2 > $R/v3/sys/devices/virtual/memory_tiering/memory_tier45/nodelist
printf 'Node 2 MemTotal:         524288 kB\nNode 2 MemFree:          524288 kB\n' \
	> $R/v3/sys/devices/system/node/node2/meminfo
for d in $R/v3/cg $R/v3/cg/a $R/v3/cg/b; do
	v2cg $d 6291456 3145728 no
	printf 'anon N0=6291456 N1=2097152 N2=1048576\nfile N0=0 N1=0 N2=0\n' > $d/memory.numa_stat
done
rm $R/v3/cg/memory.current
d=$R/v3/cg/a
printf '4 6291456\n22 8388608\n' > $d/memory.tiers.current
printf '4 7340032\n22 9437184\n' > $d/memory.tiers.peak
printf '4 1048576\n22 0\n' > $d/memory.tiers.low
printf '4 max\n22 max\n' > $d/memory.tiers.high
printf '22 max\n4 67108864\n' > $d/memory.tiers.max	# fastest is the smaller key
printf '4 low=1 high=2 max=3 fallback=4\n22 low=0 high=0 max=0 fallback=0 future=9\n' \
	> $d/memory.tiers.events
printf 'pgdemote_tierlimit 70\npgpromote_tierlimit_denied 20\n' >> $d/memory.stat
d=$R/v3/cg/b
printf '4 123x\n22 5\n' > $d/memory.tiers.current
printf '4 4096\n\n22 8192\n' > $d/memory.tiers.peak
printf '4\n22 0\n' > $d/memory.tiers.low
printf '4 max\n4 max\n' > $d/memory.tiers.high
printf '4 -1\n22 max\n' > $d/memory.tiers.max
printf '4 low=1 high\n22 low=0 high=0 max=0 fallback=0\n' > $d/memory.tiers.events

# unpatched: no is_toptier, no toptier files
sysfs $R/unpatched no
v2cg $R/unpatched/cg 8388608 4194304 no
v2cg $R/unpatched/cg/x 6291456 1048576 no
v1cg $R/unpatched/cg1 300 100 "" no
v1cg $R/unpatched/cg1/a 200 50 "" no

# garbage
sysfs $R/garbage yes
echo 'zero' > $R/garbage/sys/devices/system/node/is_toptier
echo '0-' > $R/garbage/sys/devices/virtual/memory_tiering/memory_tier22/nodelist
printf 'Node 0 MemTotal:  abc kB\nNode 0 MemFree' > $R/garbage/sys/devices/system/node/node0/meminfo
: > $R/garbage/sys/devices/system/node/node1/meminfo
mkdir -p $R/garbage/sys/devices/virtual/memory_tiering/memory_tierX \
	 $R/garbage/sys/devices/virtual/memory_tiering/memory_tier99
printf 'pgdemote_kswapd\npgdemote_direct x1\npgpromote_success 12' > $R/garbage/proc/vmstat
v1cg $R/garbage/cg 300 100 "" yes
v1cg $R/garbage/cg/bad 1 1 12 yes
echo 'lots' > $R/garbage/cg/bad/memory.toptier_usage_in_bytes
echo '12x' > $R/garbage/cg/bad/memory.toptier_soft_limit_in_bytes
printf 'hierarchical_total=5 N0=3 N1' > $R/garbage/cg/bad/memory.numa_stat
printf 'total_pgdemote_kswapd\n\n\nrss' > $R/garbage/cg/bad/memory.stat
: > $R/garbage/cg/bad/memory.usage_in_bytes
v1cg $R/garbage/cg/empty 0 0 "" no
rm $R/garbage/cg/empty/memory.numa_stat $R/garbage/cg/empty/memory.stat
printf '\0\377\001binary' > $R/garbage/cg/empty/memory.usage_in_bytes

# deep: 60 levels of v2 cgroups named l1/l2/.../l60, 4096 + 4096 each
sysfs $R/deep yes
p=$R/deep/cg
v2cg $p 4096 4096 no
i=1
while [ $i -le 60 ]; do
	p=$p/l$i
	v2cg $p 4096 4096 no
	i=$((i + 1))
done
