#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the upstream selftests of the peer suite (tests/peer/jobs) from the
# patched kernel tree, statically, for the guest initramfs (busybox and
# static programs only).  Prints the output directory as the last line of
# stdout: <dir>/cgroup/test_memcontrol, <dir>/mm/migration, ...
#
#   build-selftests.sh [ref]      ref: branch of $KSRC_REPO (default toptier)
#
# The kernel work tree is never written to: the mm Makefile writes
# local_config.{h,mk} into its source directory, and headers_install wants
# a tree of its own, so both run in a scratch copy made by git archive.
# The result is cached under $TOPTIER_CACHE/selftests/<key>, the key being
# the git trees of the sources, the job list, this script and the compiler:
# an unchanged source is not rebuilt.
source "$(dirname "$0")/lib.sh"

ref=${1:-toptier}
jobs_file=$TOPTIER_ROOT/tests/peer/jobs
git -C "$KSRC_REPO" rev-parse -q --verify "$ref^{commit}" >/dev/null ||
	die "no branch '$ref' in $KSRC_REPO: run make tree first"

# Programs to build, as <subdir>/<program>, from the job list's command
# column (the fifth field).
mapfile -t progs < <(awk '!/^#/ && NF >= 5 { print $5 }' "$jobs_file" | sort -u)
((${#progs[@]})) || die "no programs in $jobs_file"

# What the build reads: the UAPI headers (include, arch/x86 and the kbuild
# machinery of headers_install), tools/ (the selftests, kselftest headers,
# tools/include) and mm/gup_test.h, which the mm tests include.
paths=(Makefile Kbuild Kconfig scripts include arch/x86 usr mm/gup_test.h tools)
key=$( {
	for p in "${paths[@]}"; do git -C "$KSRC_REPO" rev-parse "$ref:$p"; done
	printf '%s\n' "${progs[@]}"
	sha1sum < "${BASH_SOURCE[0]}"
	gcc --version | head -1
	dpkg-query -W -f '${Version}\n' libnuma-dev 2>/dev/null || true
} | sha1sum | cut -c1-16)
out=$TOPTIER_CACHE/selftests/$key
if [[ -f $out/.built ]]; then
	msg "selftests up to date ($out)"
	echo "$out"
	exit 0
fi

[[ -f /usr/lib/x86_64-linux-gnu/libnuma.a ]] ||
	die "no static libnuma (mm/migration needs it): install libnuma-dev (make deps)"

scratch=$TOPTIER_CACHE/selftests/.scratch-$$
trap 'rm -rf "$scratch"' EXIT
rm -rf "$scratch" "$out" "$out.tmp"
mkdir -p "$scratch/src" "$out.tmp"
msg "building ${#progs[@]} selftests from $ref of $KSRC_REPO"
git -C "$KSRC_REPO" archive "$ref" -- "${paths[@]}" | tar -x -C "$scratch/src"

# Headers of this very tree, as a distribution would ship them; the
# selftests take them through KHDR_INCLUDES.
make -s -C "$scratch/src" ARCH=x86 headers_install INSTALL_HDR_PATH="$scratch/hdr" \
	> "$scratch/headers.log" 2>&1 || { tail -20 "$scratch/headers.log" >&2; die "headers_install failed"; }

log=$out.tmp/build.log
for dir in $(printf '%s\n' "${progs[@]}" | cut -d/ -f1 | sort -u); do
	targets=()
	for p in "${progs[@]}"; do
		[[ ${p%%/*} == "$dir" ]] && targets+=("$out.tmp/$p")
	done
	mkdir -p "$out.tmp/$dir"
	# USERLDFLAGS is lib.mk's hook for extra link flags; -static is the
	# point here.  The static getaddrinfo warnings (test_memcg_sock,
	# libnuma's affinity code) are harmless: the guest has no network.
	make -C "$scratch/src/tools/testing/selftests/$dir" -j"$(jobs_default)" \
		OUTPUT="$out.tmp/$dir" KHDR_INCLUDES="-isystem $scratch/hdr/include" \
		USERLDFLAGS=-static "${targets[@]}" >> "$log" 2>&1 ||
		{ tail -30 "$log" >&2; die "building the $dir selftests failed; see $log"; }
done
for p in "${progs[@]}"; do
	[[ $(ldd "$out.tmp/$p" 2>&1) == *"not a dynamic"* ]] ||
		die "$p is not statically linked"
done
git -C "$KSRC_REPO" rev-parse "$ref" > "$out.tmp/.built"
mv "$out.tmp" "$out"
msg "built ${progs[*]} in $out"
echo "$out"
