#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the kernel's checkpatch.pl over every patch of patches/series; any
# error or warning fails.
source "$(dirname "$0")/lib.sh"

"$TOPTIER_ROOT/scripts/prepare-tree.sh"
mapfile -t patches < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$SERIES_FILE")
bad=0
msg "checkpatch over ${#patches[@]} patches"
for p in "${patches[@]}"; do
	if out=$(cd "$KSRC_REPO" && ./scripts/checkpatch.pl -q --color=never "$TOPTIER_ROOT/patches/$p" 2>&1) &&
	   ! grep -qE '^(ERROR|WARNING):' <<<"$out"; then
		echo "checkpatch ok    $p"
	else
		echo "checkpatch FAIL  $p"
		sed 's/^/    /' <<<"$out"
		bad=$((bad + 1))
	fi
done
((bad == 0)) || die "checkpatch found problems in $bad patches"
