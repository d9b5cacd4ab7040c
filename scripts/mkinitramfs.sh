#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest initramfs: Debian's static busybox, scripts/guest-init as
# /init and every static test program under $1 (the test build directory).
#   mkinitramfs.sh <test-bin-dir> <output.cpio.gz>
source "$(dirname "$0")/lib.sh"

bindir=$1 out=$2
busybox=/bin/busybox
[[ -x $busybox ]] &&
	[[ $(ldd "$busybox" 2>&1) == *"not a dynamic"* ]] ||
	die "$busybox is not static: install busybox-static"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
# mktemp makes the directory 0700, and it becomes the guest's "/": a test
# that drops root (uid 65534) could then reach no path at all and every
# open failed with EACCES, whatever the file's own mode.
chmod 755 "$root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,etc,root,tests}
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
	[[ -e $root/bin/$applet ]] || ln -s busybox "$root/bin/$applet"
done
install -m 755 "$TOPTIER_ROOT/scripts/guest-init" "$root/init"
cp -a "$bindir"/. "$root/tests/"
echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
