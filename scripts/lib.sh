# SPDX-License-Identifier: GPL-2.0
# Shared settings for the toptier scripts.  Source it, do not run it.

set -euo pipefail

TOPTIER_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Everything large (kernel trees, build output, ccache) lives outside the
# checkout, under one directory that a single variable moves.
TOPTIER_CACHE=${TOPTIER_CACHE:-$HOME/.cache/toptier}
TOPTIER_RESULTS=${TOPTIER_RESULTS:-$TOPTIER_ROOT/results}

KSRC_REPO=$TOPTIER_CACHE/linux            # git repo, branch "toptier" = series
KSRC_BASE=$TOPTIER_CACHE/linux-baseline   # worktree at the pristine base
KBUILD_DIR=$TOPTIER_CACHE/build
export CCACHE_DIR=${CCACHE_DIR:-$TOPTIER_CACHE/ccache}
# A cache miss in ccache's default mode runs the preprocessor as well as the
# compiler and compresses the result: a kernel's mm/ and kernel/ built with
# an empty cache took 91-93 s against 70 s without ccache.  Depend mode takes
# the headers from the compiler's -MD output instead, and uncompressed
# results cost disk, not time: 65-72 s (docs/benchmarks.md, section 6).
export CCACHE_DEPEND=${CCACHE_DEPEND:-1} CCACHE_NOCOMPRESS=${CCACHE_NOCOMPRESS:-1}

BASE_FILE=$TOPTIER_ROOT/patches/BASE
SERIES_FILE=$TOPTIER_ROOT/patches/series

msg()  { printf '>>> %s\n' "$*" >&2; }
warn() { printf '!!! WARNING: %s\n' "$*" >&2; }
die()  { printf '!!! ERROR: %s\n' "$*" >&2; exit 1; }

base_get() { sed -n "s/^$1=//p" "$BASE_FILE"; }

jobs_default() { echo $(( $(nproc) + 1 )); }

# detect_accel <bzImage> <initramfs>: set TOPTIER_ACCEL to kvm or tcg.
# A KVM guest hangs in the boot decompressor on these (nested) machines, so
# KVM is used only when a short boot reaches the guest's probe marker.
detect_accel() {
	if [[ -n ${TOPTIER_ACCEL:-} ]]; then
		export TOPTIER_ACCEL
		return
	fi
	TOPTIER_ACCEL=tcg
	if [[ -w /dev/kvm ]]; then
		local out
		out=$(timeout -k 2 10 qemu-system-x86_64 -accel kvm -cpu host \
			-nodefaults -display none -no-reboot -serial stdio \
			-machine q35 -m 256M -kernel "$1" -initrd "$2" \
			-append "console=ttyS0 panic=-1 rdinit=/init toptier.mode=probe" \
			</dev/null 2>/dev/null | tr -d '\r' || true)
		grep -q TOPTIER-PROBE-OK <<<"$out" && TOPTIER_ACCEL=kvm
	fi
	msg "accelerator: $TOPTIER_ACCEL (set TOPTIER_ACCEL=kvm|tcg to skip the probe)"
	export TOPTIER_ACCEL
}

# test_initramfs: build the guest test programs (build/tests) and the
# initramfs holding them; sets INITRD.
test_initramfs() {
	make -s -C "$TOPTIER_ROOT/tests" O="$TOPTIER_ROOT/build/tests" >&2
	INITRD=$TOPTIER_ROOT/build/initramfs.cpio.gz
	"$TOPTIER_ROOT/scripts/mkinitramfs.sh" "$TOPTIER_ROOT/build/tests" "$INITRD"
}

# guest_images: build the toptier kernel, the guest programs and the
# initramfs; sets KERNEL and INITRD.
guest_images() {
	KERNEL=$("$TOPTIER_ROOT/scripts/build-kernel.sh" toptier | tail -1)
	test_initramfs
}

# boot_collect <dir> <timeout> <vm.sh arguments>: boot a guest whose logs
# go to <dir> (console.log, tap.log), killed after <timeout> seconds.  The
# one place that turns what a guest left into what the runners read:
# carriage returns stripped from tap.log, a "# guest killed after Ns" line
# when the time ran out, and the wall time in <dir>/wall-seconds.
# Returns vm.sh's status (124: killed).
boot_collect() {
	local dir=$1 tmo=$2 rc=0 start=$SECONDS
	shift 2
	mkdir -p "$dir"
	"$TOPTIER_ROOT/scripts/vm.sh" -o "$dir" -k "$tmo" "$@" || rc=$?
	if [[ -f $dir/tap.log ]]; then
		tr -d '\r' < "$dir/tap.log" > "$dir/tap.log.tmp"
		mv "$dir/tap.log.tmp" "$dir/tap.log"
	fi
	((rc != 124)) || echo "# guest killed after ${tmo}s" >> "$dir/tap.log"
	echo $((SECONDS - start)) > "$dir/wall-seconds"
	return $rc
}
