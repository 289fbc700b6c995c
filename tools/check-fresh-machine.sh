#!/usr/bin/env bash
# Issue 13: proves that the README's two commands do all the set-up on a fresh machine. Makes a clean
# Debian bookworm root (mmdebstrap minbase, cached), adds only Go (this machine's GOROOT) and Node
# (its node binary and npm), clones this repository's HEAD into it and runs `npm ci && npm test` there
# (tools/fresh-machine-inside.sh). The run lives in its own mount and PID namespaces: when it ends,
# failed or not, the kernel removes every mount it made and kills every process it left.
#   check-fresh-machine.sh [--prepare] [--keep] [-- <jest paths>]
#     --prepare   only build the cached base root, then stop
#     --keep      keep the run's root directory afterwards (to look inside)
#     <paths>     a shorter check: `npm test -- <paths>` (npm ci, build, typecheck and the
#                 control-plane build still run in full)
# Environment: FRESH_MACHINE_TIMEOUT_S (default 5400), SKYHOOK_CACHE_DIR.
# Only what this machine's network needs is passed in: its CA bundle for npm (egress TLS may be
# intercepted) and its Go module cache, read-only, as the first module proxy (GOPROXY=file://…, with
# GOSUMDB off: Go verified those modules when it downloaded them).
set -euo pipefail

# All in one function, read whole before it runs: editing this file during a run cannot change it.
main() {
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  repo="$(cd "$here/.." && pwd)"
  cache="${SKYHOOK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skyhook-ts}/fresh-machine"
  suite=bookworm
  base_tar="$cache/debian-$suite-minbase.tar"
  timeout_s="${FRESH_MACHINE_TIMEOUT_S:-5400}"

  prepare_only=false keep=false jest_paths=()
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --prepare) prepare_only=true ;;
      --keep) keep=true ;;
      --) shift; jest_paths=("$@"); break ;;
      *) echo "usage: $0 [--prepare] [--keep] [-- <jest paths>]" >&2; exit 2 ;;
    esac
    shift
  done

  log() { printf '[fresh-machine] %s\n' "$*" >&2; }
  die() { log "ERROR: $*"; exit 1; }
  summary=()
  phase_began=0
  phase_start() { phase_name="$1"; phase_began=$SECONDS; log "== $1"; }
  phase_end() { summary+=("$(printf '%-34s %5d s' "$phase_name" $((SECONDS - phase_began)))"); log "   done in $((SECONDS - phase_began)) s"; }

  [[ "$(id -u)" -eq 0 ]] || die "needs root (it makes a chroot and mounts): run it as root, e.g. sudo npm run check:fresh-machine"
  bash "$here/ensure-system-packages.sh" "the fresh-machine check" mmdebstrap
  for tool in unshare chroot go node npm git tar; do
    command -v "$tool" >/dev/null || die "'$tool' is not on PATH: this check copies Go and Node from this machine and needs util-linux, coreutils, git and tar"
  done
  mkdir -p "$cache"
  total_began=$SECONDS

  # --- 1. the clean root, made once and kept as a tarball --------------------------------------
  phase_start "base root (mmdebstrap minbase $suite)"
  if [[ -s "$base_tar" ]]; then
    log "cached: $base_tar"
  else
    mmdebstrap --variant=minbase --format=tar --quiet "$suite" "$base_tar.partial" \
      "deb http://deb.debian.org/debian $suite main" \
      "deb http://deb.debian.org/debian $suite-updates main" \
      "deb http://deb.debian.org/debian-security $suite-security main"
    mv "$base_tar.partial" "$base_tar"
  fi
  phase_end
  $prepare_only && { log "base root ready: $base_tar"; exit 0; }

  # --- 2. this run's root: the base, plus Go, Node and a clone ---------------------------------
  phase_start "run root (extract, add Go + Node, clone)"
  run_dir="$(mktemp -d "$cache/run-XXXXXX")"
  root="$run_dir/root"
  log_file="$cache/last-run.log"
  ns_pid="" tail_pid=""

  mounts_under() { awk -v dir="$1" '$5 == dir || index($5, dir "/") == 1 { print $5 }' /proc/self/mountinfo; }
  processes_under() {
    local p link
    for p in /proc/[0-9]*; do
      link="$(readlink "$p/root" 2>/dev/null || true)"
      [[ "$link" == "$root" || "$link" == "$root/"* ]] && echo "${p#/proc/}"
    done
    return 0
  }
  cleanup() {
    local rc=$?
    set +e
    # unshare's --kill-child takes the whole namespace with it.
    [[ -n "$ns_pid" ]] && kill -KILL "$ns_pid" 2>/dev/null && wait "$ns_pid" 2>/dev/null
    [[ -n "$tail_pid" ]] && kill "$tail_pid" 2>/dev/null
    local left_mounts left_procs
    left_mounts="$(mounts_under "$run_dir")"
    left_procs="$(processes_under | tr '\n' ' ')"
    [[ -z "$left_mounts" ]] || log "ERROR: mounts left under $run_dir: $left_mounts"
    [[ -z "$left_procs" ]] || log "ERROR: processes left in the root: $left_procs"
    if $keep || [[ -n "$left_mounts" ]]; then
      log "kept $run_dir"
    else
      rm -rf --one-file-system "$run_dir"
    fi
    [[ -z "$left_mounts" && -z "$left_procs" ]] || rc=1
    exit "$rc"
  }
  trap cleanup EXIT
  trap 'exit 130' INT TERM

  mkdir "$root"
  tar -xf "$base_tar" -C "$root"
  cp -a "$(go env GOROOT)" "$root/usr/local/go"
  node_bin="$(readlink -f "$(command -v node)")"
  npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
  mkdir -p "$root/usr/local/bin" "$root/usr/local/lib/node_modules"
  cp "$node_bin" "$root/usr/local/bin/node"
  cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  # What every machine and container has, and a bare minbase root lacks (no netbase, no installer).
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' > "$root/etc/hosts"
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  ca_bundle="${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}"
  [[ -s "$ca_bundle" ]] && cp -L "$ca_bundle" "$root/usr/local/share/egress-ca.pem"
  commit="$(git -C "$repo" rev-parse HEAD)"
  [[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ]] || log "note: uncommitted changes in $repo are not part of this check"
  git clone --quiet --no-hardlinks "$repo" "$root/root/skyhook-ts"
  git -C "$root/root/skyhook-ts" checkout --quiet --detach "$commit"
  # Some tests read the upstream examples from ../shared/examples beside the repository, as laid out
  # in CI (test/unit/api/repo-paths.ts): the same layout here.
  if [[ -d "$repo/../shared/examples" ]]; then
    mkdir -p "$root/root/shared"
    cp -a "$repo/../shared/examples" "$root/root/shared/examples"
  else
    log "note: no $repo/../shared/examples: the tests that read the upstream examples will fail"
  fi
  cp "$here/fresh-machine-inside.sh" "$root/root/fresh-machine-inside.sh"
  gomodcache="$(go env GOMODCACHE)/cache/download"
  mkdir -p "$root/mnt/go-proxy"
  log "root $root: Debian $suite minbase + Go $(go env GOVERSION) + Node $(node -v) / npm $(npm -v); commit $commit"
  phase_end

  # --- 3. npm ci && npm test inside, in private mount and PID namespaces -----------------------
  phase_start "inside: npm ci && npm test${jest_paths[*]:+ -- ${jest_paths[*]}}"
  inner_env=(
    HOME=/root PATH=/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 TERM=dumb CI=true
    # The public proxy stays listed, as on any machine, so the build still needs (and installs)
    # ca-certificates; every module is found in the file proxy first.
    GOPROXY=file:///mnt/go-proxy,https://proxy.golang.org GOSUMDB=off
  )
  [[ -s "$root/usr/local/share/egress-ca.pem" ]] && inner_env+=(NODE_EXTRA_CA_CERTS=/usr/local/share/egress-ca.pem npm_config_cafile=/usr/local/share/egress-ca.pem)
  # PID 1 of the namespace is this bash: it mounts, then waits for the chroot, reaping every orphan
  # meanwhile as an init would (the tests check that stopped processes are gone, not zombies).
  # shellcheck disable=SC2016 # expanded by the inner bash
  setup='set -euo pipefail
  root="$1"; gomodcache="$2"; timeout_s="$3"; shift 3
  mount -t proc proc "$root/proc"
  mount -t sysfs -o ro sysfs "$root/sys"
  mount --rbind /dev "$root/dev"
  mount -t tmpfs -o mode=1777,size=8g tmpfs "$root/dev/shm"
  mount --bind "$gomodcache" "$root/mnt/go-proxy"
  mount -o remount,bind,ro "$root/mnt/go-proxy"
  timeout --signal=KILL "$timeout_s" chroot "$root" /usr/bin/env -i "$@"'
  unshare --mount --propagation private --pid --fork --kill-child \
    bash -c "$setup" setup "$root" "$gomodcache" "$timeout_s" "${inner_env[@]}" /bin/bash /root/fresh-machine-inside.sh "${jest_paths[@]}" \
    > "$log_file" 2>&1 &
  ns_pid=$!
  tail -n +1 -f --pid="$ns_pid" "$log_file" &
  tail_pid=$!
  set +e
  wait "$ns_pid"
  rc=$?
  set -e
  ns_pid=""
  wait "$tail_pid" || true
  tail_pid=""
  phase_end
  [[ $rc -eq 137 ]] && log "ERROR: killed after FRESH_MACHINE_TIMEOUT_S=$timeout_s s"

  # npm's `> skyhook-ts@… <script>` banners within `npm test`, stamped by the inner script, give
  # each step's duration.
  steps="$(sed -nE '/PHASE-START npm test/,$ { s/^\[ *([0-9]+) s\] > skyhook-ts@[^ ]+ ([^ ]+)$/\1 \2/p; s/^\[ *([0-9]+) s\] PHASE npm test .*/\1 end/p }' "$log_file" \
    | awk '$2 != "test" { if (name != "") printf "%s%s %d s", sep, name, $1 - at; if (name != "") sep = ", "; name = ($2 == "end" ? "" : $2); at = $1 }')"
  results="$root/root/skyhook-ts/.jest-results.json"
  [[ -s "$results" ]] && cp "$results" "$cache/last-jest-results.json"

  log "summary (commit ${commit:0:12}, log $log_file):"
  for line in "${summary[@]}"; do log "  $line"; done
  log "  $(printf '%-34s %5d s' total $((SECONDS - total_began)))"
  grep -E '^\[ *[0-9]+ s\] PHASE ' "$log_file" | sed 's/^/[fresh-machine]   /' >&2 || true
  [[ -n "$steps" ]] && log "  npm test steps: $steps"
  [[ -s "$cache/last-jest-results.json" ]] && node "$repo/scripts/test-summary.js" "$cache/last-jest-results.json" >&2 || true
  if [[ $rc -eq 0 ]]; then log "PASSED: npm ci && npm test in a clean Debian $suite root"; else log "FAILED (exit $rc)"; fi
  exit "$rc"
}

main "$@"
