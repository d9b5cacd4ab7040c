#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Unpack the pinned kernel source into a git repository outside the checkout
# and apply patches/series with git am on branch "toptier".
#
# Idempotent: nothing is redone while the tarball and the series are
# unchanged.  A changed series re-applies from the pristine base, unless the
# work tree carries commits that were never exported (make export).
source "$(dirname "$0")/lib.sh"

tarball=$(base_get TARBALL)
want_sha=$(base_get SHA256)
[[ -r $tarball ]] || die "$tarball missing: run 'make deps'"

mkdir -p "$TOPTIER_CACHE"
base_stamp=$TOPTIER_CACHE/base.stamp
series_stamp=$TOPTIER_CACHE/series.stamp
git_id=(-c user.name=toptier -c user.email=toptier@localhost -c commit.gpgsign=false)

# --- pristine base ---------------------------------------------------------
size=$(stat -c %s "$tarball")
mtime=$(stat -c %Y "$tarball")
if [[ ! -d $KSRC_REPO/.git || ! -f $base_stamp ]] ||
   ! grep -q "^$size $mtime " "$base_stamp"; then
	msg "checking $tarball"
	sha=$(sha256sum "$tarball" | cut -d' ' -f1)
	if [[ $sha != "$want_sha" ]]; then
		warn "$tarball is not the pinned base (sha256 $sha, want $want_sha);" \
		     "continuing with it, the series may not apply"
	fi
	msg "unpacking $tarball (about 15 s)"
	rm -rf "$KSRC_REPO" "$KSRC_BASE" "$TOPTIER_CACHE/unpack"
	mkdir -p "$TOPTIER_CACHE/unpack"
	tar -C "$TOPTIER_CACHE/unpack" -xJf "$tarball"
	mv "$TOPTIER_CACHE/unpack"/linux-source-* "$KSRC_REPO"
	rmdir "$TOPTIER_CACHE/unpack"
	msg "recording the pristine tree in git (about 30 s)"
	kver=$(make -s -C "$KSRC_REPO" kernelversion)
	git -C "$KSRC_REPO" init -q -b base
	git -C "$KSRC_REPO" "${git_id[@]}" add -A -f .
	git -C "$KSRC_REPO" "${git_id[@]}" commit -q \
		-m "Linux $kver as shipped by $(base_get PACKAGE) $(dpkg-query -W -f '${Version}' "$(base_get PACKAGE)")" \
		-m "tarball sha256 $sha"
	git -C "$KSRC_REPO" tag -f pristine >/dev/null
	git -C "$KSRC_REPO" worktree add -q --detach "$KSRC_BASE" pristine
	echo "$size $mtime $sha" > "$base_stamp"
	rm -f "$series_stamp"
fi

# --- the series ------------------------------------------------------------
mapfile -t patches < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$SERIES_FILE")
series_hash=$( (cat "$SERIES_FILE"; for p in "${patches[@]}"; do
		cat "$TOPTIER_ROOT/patches/$p"; done) | sha256sum | cut -d' ' -f1)

head_now=$(git -C "$KSRC_REPO" rev-parse -q --verify refs/heads/toptier || true)
stamp_hash= stamp_head=
[[ -f $series_stamp ]] && read -r stamp_hash stamp_head < "$series_stamp"

if [[ ${stamp_hash:-} == "$series_hash" && -n $head_now ]]; then
	if [[ $head_now != "${stamp_head:-}" ]]; then
		warn "the work tree ($KSRC_REPO) has commits that are not in patches/;" \
		     "building it as it is (run 'make export' to record them)"
	else
		msg "series up to date (${#patches[@]} patches)"
	fi
	exit 0
fi

if [[ -n $head_now && -n ${stamp_head:-} && $head_now != "$stamp_head" &&
      -z ${TOPTIER_FORCE:-} ]]; then
	die "patches/ changed, but the work tree has commits never exported;" \
	    "run 'make export' first, or TOPTIER_FORCE=1 to discard them"
fi

msg "applying ${#patches[@]} patches from patches/series onto the pristine base"
cd "$KSRC_REPO"
git am --abort >/dev/null 2>&1 || true
git checkout -q -f -B toptier pristine
git clean -q -fdx
for p in "${patches[@]}"; do
	file=$TOPTIER_ROOT/patches/$p
	[[ -f $file ]] || die "patches/series lists $p, which does not exist"
	if ! out=$(git "${git_id[@]}" am -q --keep-cr "$file" 2>&1); then
		git am --abort >/dev/null 2>&1 || true
		bad=$(sed -n 's/^error: \(patch failed\|.*does not exist in index\|.*already exists in index\): *//p; s/^error: patch failed: //p' <<<"$out" | head -1)
		printf '%s\n' "$out" >&2
		die "patch $p does not apply to $(base_get PACKAGE) $(dpkg-query -W -f '${Version}' "$(base_get PACKAGE)")${bad:+: file $bad}"
	fi
	msg "  applied $p"
done
echo "$series_hash $(git rev-parse HEAD)" > "$series_stamp"
msg "series applied: $(git log --oneline pristine..HEAD | wc -l) commits on branch toptier"
