#!/bin/bash
# Runs inside the clean root made by check-fresh-machine.sh: exactly the README's `npm ci && npm test`
# in a fresh clone, nothing installed beforehand, each output line stamped with the seconds since
# the start so the phases' durations can be read off (`> skyhook-ts@… <script>` lines mark them).
#   fresh-machine-inside.sh [jest paths...]   (paths shorten the run: `npm test -- <paths>`)
set -uo pipefail
cd /root/skyhook-ts

t0=$SECONDS
stamp() {
  local line
  while IFS= read -r line; do printf '[%5d s] %s\n' "$((SECONDS - t0))" "$line"; done
}

# One command, its output stamped; ends with a `PHASE <name> rc=<code> <seconds> s` line.
phase() {
  local name="$1" began=$SECONDS rc
  shift
  echo "PHASE-START $name" | stamp
  "$@" 2>&1 | stamp
  rc=${PIPESTATUS[0]}
  echo "PHASE $name rc=$rc $((SECONDS - began)) s" | stamp
  return "$rc"
}

{
  echo "inside: $(. /etc/os-release && echo "$PRETTY_NAME"), node $(node -v), npm $(npm -v), $(go version)"
  echo "inside: installed packages: $(dpkg-query -W -f='${Package}\n' | wc -l); busybox-static: $(dpkg-query -W -f='${Status}' busybox-static 2>/dev/null || echo absent)"
} | stamp

phase 'npm ci' npm ci || exit 1
phase 'npm test' npm test -- "$@"
