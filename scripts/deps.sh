#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages the workbench needs, and the pinned kernel
# source.  Does nothing (and needs no network) when all is already there.
source "$(dirname "$0")/lib.sh"

# libnuma-dev: its libnuma.a links the static mm/migration selftest of the
# peer suite (scripts/build-selftests.sh).  gnuplot-nox: the PNG plots of
# make bench.  python3-prometheus-client: the parser that checks
# tierstat --prometheus (tools/tierstat/tests); tmux drives its live view
# there.  python3-ply: checkpatch.pl's SPDX check (scripts/spdxcheck.py).
PKGS=(build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils
      ccache git python3 perl kmod qemu-system-x86 busybox-static gawk
      libnuma-dev gnuplot-nox python3-prometheus-client tmux python3-ply)

# dpkg-query fails for a package dpkg has never heard of; under pipefail
# that would end the script on a fresh machine, so it counts as "not
# installed" here.
pkg_version() { { dpkg-query -W -f '${db:Status-Abbrev} ${Version}\n' "$1" 2>/dev/null || true; } |
		awk '$1 == "ii" { print $2 }'; }

missing=()
for p in "${PKGS[@]}"; do
	[[ -n "$(pkg_version "$p")" ]] || missing+=("$p")
done

want_pkg=$(base_get PACKAGE)
want_ver=$(base_get VERSION)
have_ver=$(pkg_version "$want_pkg")

apt_updated=
apt_update() {
	[[ -n $apt_updated ]] && return
	msg "apt-get update"
	apt-get update -qq
	apt_updated=1
}

SUDO=
[[ $(id -u) -eq 0 ]] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

if ((${#missing[@]})); then
	apt_update
	msg "installing Debian packages: ${missing[*]}"
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ "$have_ver" != "$want_ver" ]]; then
	apt_update
	if apt-cache madison "$want_pkg" | awk -F'|' '{gsub(/ /, "", $2); print $2}' |
	   grep -qxF "$want_ver"; then
		msg "installing $want_pkg=$want_ver (pinned in patches/BASE)"
		$SUDO apt-get install -y -qq --allow-downgrades "$want_pkg=$want_ver" >/dev/null
	elif [[ -z "$have_ver" ]]; then
		warn "$want_pkg $want_ver is no longer in the archive;" \
		     "installing the newest 6.12 instead: the series may not apply"
		$SUDO apt-get install -y -qq "$want_pkg" >/dev/null
	else
		warn "$want_pkg $want_ver is no longer in the archive;" \
		     "using the installed $have_ver: the series may not apply"
	fi
fi
msg "dependencies ready ($want_pkg $(pkg_version "$want_pkg"))"
