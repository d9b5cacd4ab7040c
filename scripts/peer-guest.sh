#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of the peer suite (scripts/run-peer.sh): run the upstream
# selftests of a job list, one after the other, each with its own timeout,
# and write their TAP between begin/end markers, as run mode does.  Runs as
# /tests/bin/peer-guest.sh from guest-init's toptier.mode=peer, with its
# output on the TAP port.
#
#   peer-guest.sh <jobs-file> <selftest-dir>
#
# Kernel command line:
#   toptier.peer_swap=0|1     set up a zram swap device if the kernel has zram
#   toptier.peer_blockfs=0|1  run in ext2 on a brd ram disk if the kernel has both
#   toptier.peer_jobs=a,b     run only these jobs (a name, or its part before ':')
# The host runs the baseline first and gives the patched kernel the same
# environment, so that a swap device or a file system that only one of the
# two kernels has can never make a case differ.
jobs=$1 dir=$2

swap=1 blockfs=1 only=
for arg in $(cat /proc/cmdline); do
	case $arg in
	toptier.peer_swap=*)    swap=${arg#*=} ;;
	toptier.peer_blockfs=*) blockfs=${arg#*=} ;;
	toptier.peer_jobs=*)    only=$(echo "${arg#*=}" | tr ',' ' ') ;;
	esac
done

# cgroup v2 as systemd mounts it: the upstream tests check these options
# (test_memcg_low/min expect recursive protection when it is on).
mkdir -p /sys/fs/cgroup
cgopts=nsdelegate,memory_recursiveprot
mount -t cgroup2 -o $cgopts cgroup2 /sys/fs/cgroup 2>/dev/null ||
	{ cgopts=default; mount -t cgroup2 cgroup2 /sys/fs/cgroup; }

# Swap: without it anon memory cannot be reclaimed, and the swap cases
# (test_memcg_swap_max_peak, the anon half of test_memcg_reclaim) skip.
have_swap=0
if [ "$swap" = 1 ] && [ -e /sys/block/zram0/disksize ]; then
	echo 512M > /sys/block/zram0/disksize &&
		mkswap /dev/zram0 >/dev/null && swapon /dev/zram0 && have_swap=1
fi

# Root and working directory: the upstream tests assume a disk-backed "/".
# test_memcontrol makes its page cache with O_TMPFILE in ".", by reading
# holes; on tmpfs that reads the zero page and charges nothing.
# test_kmem_basic stat()s 100000 missing names under "/" and expects their
# negative dentries to stay in the slab; ramfs and tmpfs drop a negative
# dentry at once, so on the initramfs "slab" only held the RCU-pending
# frees, around its 1 MB threshold, and the case passed or failed by chance
# on either kernel.  With a block file system the jobs run chrooted into
# it, with /proc, /sys (and the cgroup mount in it), /dev, /bin and the
# selftests bound in.
work=/tmp have_blockfs=0 root=
if [ "$blockfs" = 1 ] && [ -b /dev/ram0 ] && grep -Eqw 'ext2|ext4' /proc/filesystems; then
	mkdir -p /mnt/peer
	mke2fs -q /dev/ram0 >/dev/null 2>&1 && mount /dev/ram0 /mnt/peer &&
		work=/mnt/peer have_blockfs=1
fi
if [ $have_blockfs = 1 ]; then
	mkdir -p /mnt/peer/tmp /mnt/peer/etc
	chmod 1777 /mnt/peer/tmp
	# /bin for the tests that popen() a shell pipeline (compaction_test).
	bound=1
	for d in /proc /sys /dev /bin "$dir"; do
		mkdir -p "/mnt/peer$d" && mount -o rbind "$d" "/mnt/peer$d" || bound=0
	done
	if [ $bound = 1 ]; then
		root=/mnt/peer work=/
	else
		echo "# peer: cannot bind the guest's directories into /mnt/peer"
	fi
fi

# Hugetlb pages for migration's *_htlb cases (run_vmtests.sh reserves
# some too); interleaved, so both nodes have free ones to migrate to.
# compaction_test sets its own count and restores this one.
have_htlb=0
if [ -w /proc/sys/vm/nr_hugepages ]; then
	echo 32 > /proc/sys/vm/nr_hugepages && have_htlb=1
fi

# test_memcg_sock talks TCP over ::1 to "localhost": loopback up and an
# /etc/hosts for the static glibc resolver (harmless without CONFIG_NET).
ip link set lo up 2>/dev/null
printf '127.0.0.1 localhost\n::1 localhost\n' > /etc/hosts
[ -z "$root" ] || cp /etc/hosts "$root/etc/hosts"

demotion_file=/sys/kernel/mm/numa/demotion_enabled
echo "# toptier-guest: kernel $(uname -r)"
echo "# peer-env: swap=$have_swap blockfs=$have_blockfs hugetlb=$have_htlb root=${root:-/} workdir=$work cgroup2=$cgopts"

selected() {
	[ -z "$only" ] && return 0
	for o in $only; do
		[ "$1" = "$o" ] || [ "${1%%:*}" = "$o" ] && return 0
	done
	return 1
}

total_start=$(date +%s)
# fd 3 keeps the job list away from the tests' stdin.
while read -r name tmo demotion _guest cmd args <&3; do
	case $name in ''|\#*) continue ;; esac
	selected "$name" || continue
	echo "# toptier-guest: begin $name"
	# The same marker in the kernel log lets the host blame a WARN or an
	# oops on the job that was running.
	echo "toptier-peer: begin $name" > /dev/kmsg
	if [ -w $demotion_file ]; then
		echo "$demotion" > $demotion_file
	else
		echo "# peer: no $demotion_file"
	fi
	# Start every job from the same state: no page cache of the last one.
	sync
	echo 3 > /proc/sys/vm/drop_caches 2>/dev/null
	echo "# peer: demotion_enabled=$(cat $demotion_file 2>/dev/null) timeout=${tmo}s"
	start=$(date +%s)
	if [ -x "$dir/$cmd" ]; then
		if [ -n "$root" ]; then
			# busybox chroot starts the program in the new "/".
			# shellcheck disable=SC2086 # args are words of the job list
			timeout -s KILL "$tmo" chroot "$root" "$dir/$cmd" $args </dev/null 2>&1
		else
			# shellcheck disable=SC2086 # args are words of the job list
			(cd "$work" && exec timeout -s KILL "$tmo" "$dir/$cmd" $args) </dev/null 2>&1
		fi
		rc=$?
	else
		echo "# peer: no such program: $dir/$cmd"
		rc=127
	fi
	secs=$(($(date +%s) - start))
	[ $secs -lt "$tmo" ] || echo "# peer: $name killed after its ${tmo}s timeout"
	echo "# peer: $name took ${secs}s"
	echo "# toptier-guest: end $name rc=$rc"
done 3< "$jobs"
echo "toptier-peer: done" > /dev/kmsg
echo "# peer: all jobs took $(($(date +%s) - total_start))s"
echo "# toptier-guest: done"
