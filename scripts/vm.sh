#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot a guest kernel in QEMU on a named tiered-memory topology.
#
#   vm.sh [options] <bzImage> <initramfs>
#     -t TOPOLOGY   2tier (default), 3tier, 1tier, 2socket, hbm, pmem,
#                   hotplug or hotplug3
#     -m MODE       run (default), shell, demo or probe (see scripts/guest-init)
#     -T TESTS      comma-separated tests for run mode (area/name)
#     -o DIR        write console.log and tap.log there (run/demo/probe mode)
#     -k SECONDS    kill the guest after this long (default 600); exit 124
#     -a ARGS       extra kernel command line
#     -d KBPS       attach a 128 MB scratch disk (/dev/vda in the guest)
#                   whose writes QEMU throttles to KBPS kB/s: dirty pages
#                   then stay under writeback for as long as a test needs
#     -H            run mode: plug memory in when the guest asks (below)
#
# Environment:
#   TOPTIER_NODE0_MB, TOPTIER_NODE1_MB, TOPTIER_NODE2_MB   node sizes
#                           (2socket: DRAM nodes 512 MB, expanders 1024 MB;
#                           hbm: node1, the HBM node, 512 MB;
#                           pmem: node1, the NVDIMM, 1024 MB;
#                           hotplug: node1's pc-dimm, 256 MB)
#   TOPTIER_GUEST_CPUS      vCPUs, all on node0 (default 2; 2socket: one
#                           per socket, always)
#   TOPTIER_ACCEL=kvm|tcg   skip the KVM probe and use this accelerator
#   TOPTIER_ICOUNT=SHIFT    TCG in icount mode: one vCPU thread, and the
#                           guest's clocks advance 2^SHIFT ns per guest
#                           instruction, so guest-measured time counts
#                           instructions and repeats from boot to boot
#                           (bench/run.sh, benchmark faulticount)
#   TOPTIER_QEMU_ARGS=...   more QEMU options, split at spaces (bench/run.sh
#                           loads a TCG plugin this way, benchmark faultprof)
source "$(dirname "$0")/lib.sh"

topo=2tier mode=run tests= outdir= timeout=600 extra= disk_kbps= host_requests=
while getopts "t:m:T:o:k:a:d:H" opt; do
	case $opt in
	t) topo=$OPTARG ;;
	m) mode=$OPTARG ;;
	T) tests=$OPTARG ;;
	o) outdir=$OPTARG ;;
	k) timeout=$OPTARG ;;
	a) extra=$OPTARG ;;
	d) disk_kbps=$OPTARG ;;
	H) host_requests=1 ;;
	*) die "bad option" ;;
	esac
done
shift $((OPTIND - 1))
kernel=${1:?bzImage}
initrd=${2:?initramfs}

# ACPI SRAT + HMAT: node0 has the CPUs; the CPU-less nodes are slower and
# get lower memory tiers from 6.12's memory-tiers code.  Both latency and
# bandwidth are needed, or every node lands in the same tier.
topology_args() {
	local n0=${TOPTIER_NODE0_MB:-1024} n1=${TOPTIER_NODE1_MB:-2048}
	local n2=${TOPTIER_NODE2_MB:-1024} total cpus=${TOPTIER_GUEST_CPUS:-2}
	case $1 in
	1tier)
		# One node, so one memory tier: the tier controls must stay out
		# of the way.
		echo -machine q35 -smp "$cpus" -m "${n0}M" \
			-object memory-backend-ram,size="${n0}M",id=m0 \
			-numa node,nodeid=0,cpus=0-$((cpus - 1)),memdev=m0
		return ;;
	hotplug)
		# node0 with the CPUs; node1 has no memory at boot but a slower
		# pc-dimm, which the kernel adds offline (the default of
		# config/toptier.config) and the tests online and offline: a
		# tier that appears and goes away at run time.  Room for 1 GB
		# more, plugged in while the guest runs (-H, add-dimm); the
		# boot dimm is small (256 MB) so that a test can fill it.
		n1=${TOPTIER_NODE1_MB:-256}
		echo -machine q35,hmat=on -smp "$cpus" \
			-m "${n0}M,slots=4,maxmem=$((n0 + n1 + 1024))M" \
			-object memory-backend-ram,size="${n0}M",id=m0 \
			-object memory-backend-ram,size="${n1}M",id=m1 \
			-numa node,nodeid=0,cpus=0-$((cpus - 1)),memdev=m0,initiator=0 \
			-numa node,nodeid=1,initiator=0 \
			-device pc-dimm,id=dimm1,memdev=m1,node=1
		hmat_args 2
		return ;;
	hotplug3)
		# node0 with the CPUs and node1, slower, at boot; node2 is a
		# pc-dimm added offline, faster than node0 (HBM-like): onlining
		# it puts a new tier above node0's, so every entry of the tier
		# files moves, and offlining it moves them back.  The pc-dimm's
		# node is the last: QEMU puts the hotplug range of SRAT there.
		echo -machine q35,hmat=on -smp "$cpus" \
			-m "$((n0 + n1))M,slots=2,maxmem=$((n0 + n1 + n2))M" \
			-object memory-backend-ram,size="${n0}M",id=m0 \
			-object memory-backend-ram,size="${n1}M",id=m1 \
			-object memory-backend-ram,size="${n2}M",id=m2 \
			-numa node,nodeid=0,cpus=0-$((cpus - 1)),memdev=m0,initiator=0 \
			-numa node,nodeid=1,memdev=m1,initiator=0 \
			-numa node,nodeid=2,initiator=0 \
			-device pc-dimm,id=dimm2,memdev=m2,node=2
		hmat_lb 0 10 10G
		hmat_lb 1 90 1G
		hmat_lb 2 5 20G
		return ;;
	pmem)
		# node0: DRAM with the CPUs; node1: an emulated NVDIMM (ACPI
		# NFIT), slow in HMAT, and no memory at boot.  Its namespace
		# becomes a device-dax that dax/kmem hands to the page
		# allocator at run time (tests/lib pmem_*): node1 then joins
		# as system RAM in a lower tier, and leaves again.
		local pm=${TOPTIER_NODE1_MB:-1024}
		echo -machine q35,nvdimm=on,hmat=on -smp "$cpus" \
			-m "${n0}M,slots=2,maxmem=$((n0 + pm))M" \
			-object memory-backend-ram,size="${n0}M",id=m0 \
			-object memory-backend-ram,size="${pm}M",id=m1 \
			-numa node,nodeid=0,cpus=0-$((cpus - 1)),memdev=m0,initiator=0 \
			-numa node,nodeid=1,initiator=0 \
			-device nvdimm,id=nv1,memdev=m1,node=1
		hmat_lb 0 10 10G
		hmat_lb 1 90 1G
		return ;;
	2socket)
		# Two sockets, one vCPU each: DRAM nodes 0 and 1, and a
		# CPU-less expander near each (2 near 0, 3 near 1), described
		# by SLIT and by HMAT from both initiators.  Both DRAM nodes
		# make one tier, both expanders the next, and each DRAM node
		# demotes to its own socket's expander.
		local dram=${TOPTIER_NODE0_MB:-512} cxl=${TOPTIER_NODE1_MB:-1024}
		echo -machine q35,hmat=on -smp 2,sockets=2,cores=1,threads=1 \
			-m "$((2 * (dram + cxl)))M" \
			-object memory-backend-ram,size="${dram}M",id=m0 \
			-object memory-backend-ram,size="${dram}M",id=m1 \
			-object memory-backend-ram,size="${cxl}M",id=m2 \
			-object memory-backend-ram,size="${cxl}M",id=m3 \
			-numa node,nodeid=0,cpus=0,memdev=m0,initiator=0 \
			-numa node,nodeid=1,cpus=1,memdev=m1,initiator=1 \
			-numa node,nodeid=2,memdev=m2,initiator=0 \
			-numa node,nodeid=3,memdev=m3,initiator=1 \
			-numa dist,src=0,dst=1,val=21 -numa dist,src=0,dst=2,val=14 \
			-numa dist,src=0,dst=3,val=24 -numa dist,src=1,dst=2,val=24 \
			-numa dist,src=1,dst=3,val=14 -numa dist,src=2,dst=3,val=28
		local i
		for i in 0 1; do
			# own DRAM, other DRAM, own expander, other expander
			hmat_lb "$i" "$i" 10 10G
			hmat_lb "$i" $((1 - i)) 20 5G
			hmat_lb "$i" $((2 + i)) 30 3G
			hmat_lb "$i" $((3 - i)) 45 2G
		done
		return ;;
	hbm)
		# node0: DRAM with the CPUs; node1: CPU-less HBM, faster than
		# node0 in HMAT (lower latency, higher bandwidth); node2: a
		# slower CPU-less expander.  Three tiers, the fastest without
		# CPUs: node1 demotes to node0, node0 to node2.
		local hbm=${TOPTIER_NODE1_MB:-512}
		echo -machine q35,hmat=on -smp "$cpus" -m "$((n0 + hbm + n2))M" \
			-object memory-backend-ram,size="${n0}M",id=m0 \
			-object memory-backend-ram,size="${hbm}M",id=m1 \
			-object memory-backend-ram,size="${n2}M",id=m2 \
			-numa node,nodeid=0,cpus=0-$((cpus - 1)),memdev=m0,initiator=0 \
			-numa node,nodeid=1,memdev=m1,initiator=0 \
			-numa node,nodeid=2,memdev=m2,initiator=0
		hmat_lb 0 10 10G
		hmat_lb 1 5 20G
		hmat_lb 2 30 3G
		return ;;
	2tier) total=$((n0 + n1)) ;;
	3tier) total=$((n0 + n1 + n2)) ;;
	*) die "unknown topology '$1' (1tier, 2tier, 3tier, 2socket, hbm, pmem, hotplug, hotplug3)" ;;
	esac
	echo -machine q35,hmat=on -smp "$cpus" -m "${total}M" \
		-object memory-backend-ram,size="${n0}M",id=m0 \
		-object memory-backend-ram,size="${n1}M",id=m1 \
		-numa node,nodeid=0,cpus=0-$((cpus - 1)),memdev=m0,initiator=0 \
		-numa node,nodeid=1,memdev=m1,initiator=0
	[[ $1 == 3tier ]] && echo -object memory-backend-ram,size="${n2}M",id=m2 \
		-numa node,nodeid=2,memdev=m2,initiator=0
	hmat_args $((${1%tier}))
}

# hmat_lb [<initiator>] <node> <latency ns> <bandwidth>: HMAT access
# latency and bandwidth from an initiator's CPUs (default node0's) to a node.
hmat_lb() {
	local init=0
	(($# == 4)) && { init=$1; shift; }
	echo -numa hmat-lb,initiator=$init,target=$1,hierarchy=memory,data-type=access-latency,latency=$2
	echo -numa hmat-lb,initiator=$init,target=$1,hierarchy=memory,data-type=access-bandwidth,bandwidth=$3
}

# hmat_args <nodes>: nodes 0..nodes-1, each slower than the one before.
hmat_args() {
	local t lat bw
	for ((t = 0; t < $1; t++)); do
		case $t in
		0) lat=10 bw=10G ;;
		1) lat=30 bw=3G ;;
		2) lat=90 bw=1G ;;
		esac
		hmat_lb "$t" "$lat" "$bw"
	done
}

# no5lvl: with "-cpu max" TCG offers LA57, and 6.12 re-identifies the boot
# CPU with interrupts on, its feature bits cleared for a moment; an
# interrupt then sees 4-level paging on a 5-level kernel, which KASAN
# reports as a wild access (docs/testing.md).  Four levels are plenty here.
cmdline="console=ttyS0 panic=-1 no5lvl rdinit=/init toptier.mode=$mode toptier.topology=$topo"
[[ -n $tests ]] && cmdline+=" toptier.tests=$tests"
[[ -n $extra ]] && cmdline+=" $extra"
[[ -n $host_requests ]] && cmdline+=" toptier.host_requests=1"

accel_args() {
	if [[ -n ${TOPTIER_ICOUNT:-} ]]; then
		[[ $TOPTIER_ICOUNT =~ ^[0-9]$ ]] || die "TOPTIER_ICOUNT must be a shift, 0..9"
		# icount needs single-threaded TCG; sleep=off keeps an idle
		# guest's clock tied to the instructions too.
		echo -accel tcg,thread=single -cpu max -icount shift=$TOPTIER_ICOUNT,sleep=off
		return
	fi
	[[ -n ${TOPTIER_ACCEL:-} ]] || detect_accel "$kernel" "$initrd"
	case $TOPTIER_ACCEL in
	kvm) echo -accel kvm -cpu host ;;
	tcg) echo -accel tcg,thread=multi -cpu max ;;
	*) die "TOPTIER_ACCEL must be kvm or tcg" ;;
	esac
}

qemu=(qemu-system-x86_64 -nodefaults -no-reboot $(accel_args) $(topology_args "$topo")
      -kernel "$kernel" -initrd "$initrd" -append "$cmdline")
# shellcheck disable=SC2206 # the options are words
[[ -z ${TOPTIER_QEMU_ARGS:-} ]] || qemu+=($TOPTIER_QEMU_ARGS)

if [[ -n $disk_kbps ]]; then
	[[ $disk_kbps =~ ^[1-9][0-9]*$ ]] || die "-d takes kB/s, not '$disk_kbps'"
	# Sparse, and gone when the guest is: nothing in it outlives a test.
	disk=$(mktemp "${TMPDIR:-/tmp}/toptier-disk.XXXXXX")
	trap 'rm -f "$disk"' EXIT
	truncate -s 128M "$disk"
	qemu+=(-drive "file=$disk,if=none,id=scratch,format=raw,cache=unsafe,throttling.bps-write=$((disk_kbps * 1024))"
	       -device virtio-blk-pci,drive=scratch)
fi

if [[ $mode == shell ]]; then
	"${qemu[@]}" -nographic -serial mon:stdio
	exit
fi

[[ -n $outdir ]] || die "-o DIR is required in $mode mode"
mkdir -p "$outdir"
rc=0
if [[ $mode == demo ]]; then
	# Show the guest console live and keep a copy.
	timeout -k 10 "$timeout" "${qemu[@]}" -display none -monitor none \
		-serial stdio </dev/null 2>"$outdir/qemu.log" |
		tee "$outdir/console.log" || rc=${PIPESTATUS[0]}
	exit $rc
fi
if [[ -z $host_requests ]]; then
	timeout -k 10 "$timeout" "${qemu[@]}" -display none -monitor none \
		-serial file:"$outdir/console.log" -serial file:"$outdir/tap.log" \
		</dev/null >"$outdir/qemu.log" 2>&1 || rc=$?
	exit $rc
fi

# -H: the guest asks for memory to be plugged in, as an administrator
# would from the QEMU monitor.  A test prints, on its TAP port,
#   # toptier-host: add-dimm <node> <MB>
# and the host adds a pc-dimm of that size to that node (ACPI memory
# hotplug; the guest sees it arrive).  Nothing else is understood.  The
# monitor (QMP) is a pair of FIFOs; its replies go to monitor.log.
rm -f "$outdir/monitor.in" "$outdir/monitor.out" "$outdir/tap.log"
mkfifo "$outdir/monitor.in" "$outdir/monitor.out"
timeout -k 10 "$timeout" "${qemu[@]}" -display none -monitor none \
	-chardev pipe,id=qmp,path="$outdir/monitor" -mon chardev=qmp,mode=control \
	-serial file:"$outdir/console.log" -serial file:"$outdir/tap.log" \
	</dev/null >"$outdir/qemu.log" 2>&1 &
qpid=$!
cat "$outdir/monitor.out" > "$outdir/monitor.log" &
(
	# Read-write: the open does not wait for QEMU (FIFO semantics).
	exec 7<>"$outdir/monitor.in"
	echo '{"execute": "qmp_capabilities"}' >&7
	n=0
	tail --pid="$qpid" -n +1 -F "$outdir/tap.log" 2>/dev/null | while IFS= read -r line; do
		[[ ${line%$'\r'} =~ ^#\ toptier-host:\ add-dimm\ ([0-9]+)\ ([1-9][0-9]*)$ ]] || continue
		n=$((n + 1))
		printf '{"execute": "object-add", "arguments": {"qom-type": "memory-backend-ram", "id": "hostmem%d", "size": %d}}\n' \
			"$n" $((BASH_REMATCH[2] << 20)) >&7
		printf '{"execute": "device_add", "arguments": {"driver": "pc-dimm", "id": "hostdimm%d", "memdev": "hostmem%d", "node": %d}}\n' \
			"$n" "$n" "${BASH_REMATCH[1]}" >&7
	done
) &
wait "$qpid" || rc=$?
# A QEMU that never opened the monitor leaves cat waiting for a writer.
exec 8<>"$outdir/monitor.out"
exec 8>&-
wait
rm -f "$outdir/monitor.in" "$outdir/monitor.out"
exit $rc
