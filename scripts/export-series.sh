#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Export the commits of the work tree (branch "toptier" on top of the
# pristine base) into patches/ as git format-patch files and rewrite
# patches/series.  Output is stable: no commit ids, no version signature,
# so re-exporting an unchanged branch changes nothing in the checkout.
source "$(dirname "$0")/lib.sh"

cd "$KSRC_REPO"
git rev-parse -q --verify refs/heads/toptier >/dev/null || die "no toptier branch in $KSRC_REPO"
[[ -z $(git status --porcelain --untracked-files=no) ]] ||
	die "$KSRC_REPO has uncommitted changes; commit them first"
# Debian's tarball ships a top-level .gitignore of "/*": every file a
# developer adds is ignored unless added with "git add -f".  The kernel is
# built out of tree, so any ignored file here is one of ours left behind.
ignored=$(git status --porcelain --ignored | sed -n 's/^!! //p')
[[ -z $ignored ]] ||
	die "files ignored by Debian's top-level .gitignore (add them with 'git add -f'): $ignored"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git format-patch -q --no-numbered --zero-commit --no-signature --no-thread \
	--full-index -o "$tmp" pristine..toptier

# The cover letter, patches/0000-cover-letter.patch, is written by hand.
for f in "$TOPTIER_ROOT"/patches/[0-9][0-9][0-9][0-9]-*.patch; do
	[[ $(basename "$f") == 0000-* ]] || rm -f "$f"
done
{
	echo "# toptier patch series, applied in order onto patches/BASE"
	for f in "$tmp"/*.patch; do
		[[ -e $f ]] || continue
		b=$(basename "$f")
		# A blank context line is a lone space in diff output, which
		# whitespace checkers flag; git am reads an empty line the same.
		sed '/^diff --git /,$ s/^ $//' "$f" > "$TOPTIER_ROOT/patches/$b"
		echo "$b"
	done
} > "$SERIES_FILE"

# The work tree now matches patches/: record it, so the next build does not
# re-apply the series from scratch.
mapfile -t patches < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$SERIES_FILE")
series_hash=$( (cat "$SERIES_FILE"; for p in "${patches[@]}"; do
		cat "$TOPTIER_ROOT/patches/$p"; done) | sha256sum | cut -d' ' -f1)
echo "$series_hash $(git rev-parse toptier)" > "$TOPTIER_CACHE/series.stamp"
msg "exported ${#patches[@]} patches to patches/"
