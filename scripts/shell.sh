#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make shell: an interactive shell in the tiered VM (Ctrl-A X quits QEMU).
source "$(dirname "$0")/lib.sh"
topo=2tier
while getopts "t:" opt; do
	case $opt in t) topo=$OPTARG ;; *) die "usage: $0 [-t topology]" ;; esac
done
guest_images
exec "$TOPTIER_ROOT/scripts/vm.sh" -t "$topo" -m shell "$KERNEL" "$INITRD"
