#!/usr/bin/env bash
# Makes sure the Debian/Ubuntu packages named on the command line are installed, so that the
# README's commands (`npm test`, `npm start`) do their own set-up on a fresh machine.
#   ensure-system-packages.sh <purpose> <package>...
# Installs the missing ones with apt-get when it can (root on Debian/Ubuntu); otherwise stops at
# once with the exact command to run. Does nothing (and needs no network) when all are present.
set -euo pipefail

purpose="$1"; shift
log() { printf '[system-packages] %s\n' "$*" >&2; }

if [[ "$(uname -s)" != Linux ]]; then
  log "ERROR: $purpose needs Linux with the Debian packages: $*"
  exit 1
fi

missing=()
for pkg in "$@"; do
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

command -v apt-get >/dev/null 2>&1 || {
  log "ERROR: $purpose needs these Debian/Ubuntu packages, and this machine has no apt-get: ${missing[*]}"
  log "  install their equivalents with your distribution's package manager, then run the command again"
  exit 1
}
if [[ "$(id -u)" -ne 0 ]]; then
  log "ERROR: $purpose needs packages that are not installed: ${missing[*]}"
  log "  run: sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}"
  exit 1
fi

log "installing for $purpose: ${missing[*]}"
start=$SECONDS
# Several processes (parallel test files) may get here at once. DPkg::Lock::Timeout makes apt-get
# wait for dpkg's lock, but not for the package lists' lock that `apt-get update` takes, so our own
# callers also queue on one lock file of ours.
export DEBIAN_FRONTEND=noninteractive
exec 9>/tmp/skyhook-ts-apt.lock
flock 9
apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null
apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
log "installed in $((SECONDS - start)) s: ${missing[*]}"
