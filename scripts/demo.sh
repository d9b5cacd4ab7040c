#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: build everything, boot the tiered VM and show it working.
source "$(dirname "$0")/lib.sh"
topo=2tier
while getopts "t:" opt; do
	case $opt in t) topo=$OPTARG ;; *) die "usage: $0 [-t topology]" ;; esac
done
guest_images
msg "booting the $topo VM (console follows; log in results/demo)"
"$TOPTIER_ROOT/scripts/vm.sh" -t "$topo" -m demo -o "$TOPTIER_RESULTS/demo" -k 300 \
	-a "quiet" "$KERNEL" "$INITRD"
