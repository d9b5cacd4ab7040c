#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Generate tierstat's fixture trees under $1 (a fresh temporary directory):
#   $1/v1      patched kernel, cgroup v1 memory hierarchy
#   $1/v2      patched kernel, cgroup v2 (with future memory.toptier.* files)
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
# memory.toptier.* files and counters
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
		echo $2 > $1/memory.toptier.current
		echo 1048576 > $1/memory.toptier.low
		echo max > $1/memory.toptier.high
		echo 268435456 > $1/memory.toptier.max
		printf 'pgdemote_toptier 7\npgpromote_toptier_denied 2\n' >> $1/memory.stat
	fi
	return 0
}

rm -rf $R/v1 $R/v2 $R/unpatched $R/garbage $R/deep
# v1: root 300+100 pages, a 200+50 (soft 1M), a/b 100+25 (unlimited)
sysfs $R/v1 yes
v1cg $R/v1/cg 300 100 "" yes
v1cg $R/v1/cg/a 200 50 1048576 yes
v1cg $R/v1/cg/a/b 100 25 9223372036854771712 yes
v1cg $R/v1/cg/c 10 90 4194304 yes

# v2: root 8M+4M, x 6M+1M, x/y 2M+1M, z 1M+3M
sysfs $R/v2 yes
v2cg $R/v2/cg 8388608 4194304 yes
rm $R/v2/cg/memory.current $R/v2/cg/memory.toptier.low $R/v2/cg/memory.toptier.high $R/v2/cg/memory.toptier.max
v2cg $R/v2/cg/x 6291456 1048576 yes
v2cg $R/v2/cg/x/y 2097152 1048576 yes
v2cg $R/v2/cg/z 1048576 3145728 yes

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
