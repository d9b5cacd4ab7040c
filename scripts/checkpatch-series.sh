#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the kernel's checkpatch.pl over every patch of patches/series; any
# error or warning fails.
#
# One warning is answered by the series instead: FILE_PATH_CHANGES ("does
# MAINTAINERS need updating?") on a patch that adds a file.  MAINTAINERS
# changes stay out of the mm patches, in a patch of their own, so each
# file the series adds must be covered by the final MAINTAINERS, which is
# checked here with get_maintainer.pl.  checkpatch's SPDX check runs
# Debian's Python (python3-ply), not whatever python3 is first in PATH.
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
	elif out=$(cd "$KSRC_REPO" && PATH=/usr/bin:$PATH ./scripts/checkpatch.pl -q --color=never \
			--ignore FILE_PATH_CHANGES "$TOPTIER_ROOT/patches/$p" 2>&1) &&
	   ! grep -qE '^(ERROR|WARNING):' <<<"$out"; then
		echo "checkpatch ok    $p"
		: > "$ok"
	else
		echo "checkpatch FAIL  $p"
		sed 's/^/    /' <<<"$out"
		bad=$((bad + 1))
	fi
done

# Every file the series adds (but the workbench's localversion) has an
# entry in the series' MAINTAINERS.
mapfile -t added < <(git -C "$KSRC_REPO" diff --diff-filter=A --name-only pristine toptier |
	grep -v '^localversion-')
for f in "${added[@]}"; do
	if (cd "$KSRC_REPO" && ./scripts/get_maintainer.pl --no-git --no-rolestats --no-l \
		--no-r -f "$f" 2>/dev/null) | grep -q 'toptier@localhost'; then
		echo "maintainers ok   $f"
	else
		echo "maintainers FAIL $f: no MAINTAINERS entry of the series covers it"
		bad=$((bad + 1))
	fi
done
((bad == 0)) || die "checkpatch found problems in $bad patches or files"
