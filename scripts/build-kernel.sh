#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build a guest kernel: "toptier" (the series applied) or "baseline" (the
# same configuration on the pristine base).  Prints the absolute path of the
# bzImage as the last line of stdout; progress goes to stderr.
#
#   DEBUG=1    also merge config/debug.config (KASAN, lockdep, DEBUG_VM)
source "$(dirname "$0")/lib.sh"

flavor=${1:-toptier}
case $flavor in
toptier)  src=$KSRC_REPO ;;
baseline) src=$KSRC_BASE ;;
*) die "usage: $0 toptier|baseline" ;;
esac

"$TOPTIER_ROOT/scripts/prepare-tree.sh"

fragments=("$TOPTIER_ROOT/config/toptier.config")
out=$KBUILD_DIR/$flavor
if [[ -n ${DEBUG:-} ]]; then
	fragments+=("$TOPTIER_ROOT/config/debug.config")
	out=$KBUILD_DIR/$flavor-debug
fi
mkdir -p "$out" "$CCACHE_DIR"

kmake() {
	make -C "$src" O="$out" CC="ccache gcc" HOSTCC="ccache gcc" \
		LOCALVERSION= -j"$(jobs_default)" "$@"
}

# Regenerate the configuration in a scratch directory and install it only
# when it differs, so an unchanged config never triggers a rebuild.  That
# takes 20 s (Kconfig probes the compiler), so it is skipped while the
# fragments, the source tree (commit and uncommitted changes) and the
# compiler are those of the last time.
cfg_key=$( {
	cat "${fragments[@]}"
	git -C "$src" rev-parse HEAD
	git -C "$src" diff HEAD
	gcc --version | head -1
} | sha256sum | cut -c1-16)

# An option the series adds (CONFIG_TOPTIER_KUNIT_TEST) does not exist in
# the baseline tree: that is not a missing option.
defined() {
	grep -rqsE --include='Kconfig*' "^[[:space:]]*(menu)?config ${1#CONFIG_}\$" "$src"
}

make_config() {
	local cfgdir=$out/.config-gen f line sym missing=()

	rm -rf "$cfgdir"; mkdir -p "$cfgdir"
	kmake -s O="$cfgdir" tinyconfig >/dev/null
	(cd "$cfgdir" && "$src/scripts/kconfig/merge_config.sh" -m -O "$cfgdir" \
		"$cfgdir/.config" "${fragments[@]}" >/dev/null)
	kmake -s O="$cfgdir" olddefconfig >/dev/null
	# What each option should end as: a later fragment overrides an
	# earlier one, as merge_config.sh does (debug.config turns off the
	# networking toptier.config turns on).
	local -A want=()
	local -a order=()
	for f in "${fragments[@]}"; do
		while IFS= read -r line; do
			[[ $line == CONFIG_* ]] || continue
			sym=${line%%=*}
			[[ -n ${want[$sym]:-} ]] || order+=("$sym")
			want[$sym]=$line
		done < "$f"
	done
	for sym in "${order[@]}"; do
		line=${want[$sym]}
		case $line in
		CONFIG_*=n) grep -q "^$sym=" "$cfgdir/.config" && missing+=("$line") ;;
		*)          grep -qxF "$line" "$cfgdir/.config" ||
				! defined "$sym" || missing+=("$line") ;;
		esac
	done
	((${#missing[@]} == 0)) || warn "options not in the final config: ${missing[*]}"
	if ! cmp -s "$cfgdir/.config" "$out/.config"; then
		cp "$cfgdir/.config" "$out/.config"
		msg "configuration updated ($out/.config)"
	fi
	rm -rf "$cfgdir"
	echo "$cfg_key" > "$out/.config-key"
}

if [[ -f $out/.config && $(cat "$out/.config-key" 2>/dev/null) == "$cfg_key" ]]; then
	msg "configuration unchanged since the last build"
else
	make_config
fi

log=$out/build.log
msg "building the $flavor kernel from $src (log: $log)"
start=$SECONDS
kmake bzImage > "$log" 2>&1 &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
	sleep 5
	(( (SECONDS - start) % 30 < 5 )) || continue
	kill -0 "$pid" 2>/dev/null || break
	msg "  still building: $(grep -c '^  CC ' "$log" || true) files compiled, $((SECONDS - start)) s"
done
if ! wait "$pid"; then
	grep -E 'error|Error' "$log" | head -20 >&2 || true
	die "the $flavor kernel failed to build; see $log"
fi
msg "built $(cat "$out/include/config/kernel.release") in $((SECONDS - start)) s"
echo "$out/arch/x86/boot/bzImage"
