#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bisect-check: every patch of the series builds on its own and boots.
#
#   bisect-check.sh [-f FIRST] [-l LAST]
#
# For each commit of the work tree's series (branch "toptier", patches/
# applied by prepare-tree.sh), from patch FIRST to LAST (default all),
# builds the whole kernel with the toptier config in one build directory
# ($TOPTIER_CACHE/build/bisect, from a source worktree of its own, so that
# each step is incremental) and boots it once on the 2tier topology in
# probe mode: the guest must print its marker and the console must show no
# splat.  Prints one line per patch (build time, warnings, boot) and the
# total; logs go to results/bisect-<time>/.  Not part of make check: the
# first run builds a kernel from scratch, and each step rebuilds what its
# patch touches (several minutes for a change to a widely included header).
source "$(dirname "$0")/lib.sh"

first=1 last=
while getopts "f:l:" opt; do
	case $opt in
	f) first=$OPTARG ;;
	l) last=$OPTARG ;;
	*) die "usage: $0 [-f first patch] [-l last patch]" ;;
	esac
done

"$TOPTIER_ROOT/scripts/prepare-tree.sh"
# The toptier kernel's configuration, made from the fragments.
kernel=$("$TOPTIER_ROOT/scripts/build-kernel.sh" toptier | tail -1)
test_initramfs
detect_accel "$kernel" "$INITRD"

mapfile -t commits < <(git -C "$KSRC_REPO" rev-list --reverse pristine..toptier)
last=${last:-${#commits[@]}}
[[ $first =~ ^[0-9]+$ && $last =~ ^[0-9]+$ ]] && ((first >= 1 && first <= last &&
	last <= ${#commits[@]})) || die "patches are numbered 1..${#commits[@]}"

out=$KBUILD_DIR/bisect
wt=$TOPTIER_CACHE/bisect-tree
res=$TOPTIER_RESULTS/bisect-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out" "$res"
if ! git -C "$wt" rev-parse -q --verify HEAD >/dev/null 2>&1; then
	rm -rf "$wt"
	git -C "$KSRC_REPO" worktree prune
	git -C "$KSRC_REPO" worktree add -q --detach "$wt" pristine
fi

splat_re=$(sed -n "s/^splat_re='\(.*\)'$/\1/p" "$TOPTIER_ROOT/scripts/tap-parse.sh")
[[ -n $splat_re ]] || die "no splat pattern in scripts/tap-parse.sh"

failed=0 start=$SECONDS
for ((i = first; i <= last; i++)); do
	c=${commits[$((i - 1))]}
	name=$(printf %04d "$i")
	subject=$(git -C "$KSRC_REPO" log -1 --format=%s "$c")
	git -C "$wt" checkout -q --detach "$c"
	cp "$KBUILD_DIR/toptier/.config" "$out/.config"
	t0=$SECONDS
	if make -C "$wt" O="$out" CC="ccache gcc" HOSTCC="ccache gcc" LOCALVERSION= \
		-j"$(jobs_default)" olddefconfig bzImage > "$res/$name-build.log" 2>&1; then
		build="built in $((SECONDS - t0)) s"
	else
		build="BUILD FAILED after $((SECONDS - t0)) s"
		failed=$((failed + 1))
		echo "$name $subject: $build (see $res/$name-build.log)"
		continue
	fi
	warnings=$(grep -c 'warning:' "$res/$name-build.log" || true)
	boot=ok
	if ! "$TOPTIER_ROOT/scripts/vm.sh" -m probe -t 2tier -k 300 -o "$res/$name-boot" \
		"$out/arch/x86/boot/bzImage" "$INITRD" ||
	   ! grep -q TOPTIER-PROBE-OK "$res/$name-boot/console.log"; then
		boot="BOOT FAILED"
	elif grep -qE "$splat_re" "$res/$name-boot/console.log"; then
		boot="SPLAT"
	fi
	[[ $boot == ok && $warnings == 0 ]] || failed=$((failed + 1))
	echo "$name $subject: $build, $warnings warnings, boot $boot"
done
echo "patches $first..$last: $failed failed, $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s (logs: $res)"
((failed == 0))
