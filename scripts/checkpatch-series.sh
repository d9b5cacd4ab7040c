#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the kernel's checkpatch.pl over every patch of patches/series; any
# error or warning fails.
source "$(dirname "$0")/lib.sh"

"$TOPTIER_ROOT/scripts/prepare-tree.sh"
# A patch that passed is remembered under $TOPTIER_CACHE/checkpatch, keyed
# by its contents and checkpatch's own files: an unchanged patch is not
# checked again (the whole series takes a minute).
okdir=$TOPTIER_CACHE/checkpatch
mkdir -p "$okdir"
tool_key=$(cat "$KSRC_REPO"/scripts/{checkpatch.pl,spelling.txt,const_structs.checkpatch} \
	2>/dev/null | sha256sum | cut -c1-16)
mapfile -t patches < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$SERIES_FILE")
bad=0
msg "checkpatch over ${#patches[@]} patches"
for p in "${patches[@]}"; do
	ok=$okdir/$( (echo "$tool_key"; cat "$TOPTIER_ROOT/patches/$p") | sha256sum | cut -c1-32)
	if [[ -f $ok ]]; then
		echo "checkpatch ok    $p (unchanged since it passed)"
	elif out=$(cd "$KSRC_REPO" && ./scripts/checkpatch.pl -q --color=never "$TOPTIER_ROOT/patches/$p" 2>&1) &&
	   ! grep -qE '^(ERROR|WARNING):' <<<"$out"; then
		echo "checkpatch ok    $p"
		: > "$ok"
	else
		echo "checkpatch FAIL  $p"
		sed 's/^/    /' <<<"$out"
		bad=$((bad + 1))
	fi
done
((bad == 0)) || die "checkpatch found problems in $bad patches"
