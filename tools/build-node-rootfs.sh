#!/usr/bin/env bash
# Builds the root filesystem of the sandbox's real nodes (Debian minbase + systemd as init, D-Bus,
# containerd, runc, CNI plugins, socat, iptables, iproute2 ...) with mmdebstrap, into a tarball cached outside the
# repository and keyed by the suite and package list, so changing either builds a new one.
#   build-node-rootfs.sh            prints the tarball's path (building it first when missing)
# Needs root on Debian/Ubuntu (mmdebstrap in root mode keeps device nodes and ownership).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { printf '[node-rootfs] %s\n' "$*" >&2; }

suite=bookworm
mirror="${SKYHOOK_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# systemd-sysv makes `reboot`/`poweroff` go through systemd; util-linux gives nsenter for reboot pods;
# busybox-static is a shell toolbox for pods that mount the node's /; sudo is on production hosts and
# package scripts call it (tuned's apply_tuned_profile.sh runs `sudo mkdir`).
packages=(systemd systemd-sysv dbus containerd runc containernetworking-plugins iptables iproute2
  util-linux mount procps ca-certificates socat kmod busybox-static sudo)

cache_root="${SKYHOOK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skyhook-ts}"
key="$(printf '%s\n' "$suite" "${packages[@]}" | sha256sum | cut -c1-16)"
tarball="$cache_root/rootfs/node-$suite-$key.tar"

if [[ -f "$tarball" ]]; then
  echo "$tarball"
  exit 0
fi

"$here/ensure-system-packages.sh" "building the real-node root filesystem" mmdebstrap
if [[ "$(id -u)" -ne 0 ]]; then
  log "ERROR: building the real-node root filesystem needs root (mmdebstrap --mode=root); run as root"
  exit 1
fi

mkdir -p "$cache_root/rootfs"
start=$SECONDS
log "building $tarball with mmdebstrap ($suite, ${#packages[@]} packages; ~70 s, network-bound)"
partial="$cache_root/rootfs/.partial-$$.tar"
trap 'rm -rf "$partial"' EXIT
include="$(IFS=,; echo "${packages[*]}")"
mmdebstrap --quiet --mode=root --format=tar --variant=minbase --include="$include" \
  --customize-hook='rm -f "$1"/etc/machine-id "$1"/etc/hostname' \
  "$suite" "$partial" "$mirror" >&2
mv "$partial" "$tarball"
trap - EXIT
log "built in $((SECONDS - start)) s ($(du -h "$tarball" | cut -f1))"
echo "$tarball"
