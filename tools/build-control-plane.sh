#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kubelet (for the
# sandbox's real nodes) and kwok from
# upstream Go modules into a cache outside the repository, keyed by version. Does nothing when the
# binaries are already there, and nothing at all when KUBEBUILDER_ASSETS points at a complete set.
# SKYHOOK_K8S=oldest (or the argument `oldest`) builds the oldest supported release instead of the
# newest (versions.env); src/sandbox/binaries.ts reads the same variable.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

release="${1:-${SKYHOOK_K8S:-newest}}"
case "$release" in
  newest | '') ;;
  oldest) K8S_VERSION="$OLDEST_K8S_VERSION" ETCD_VERSION="$OLDEST_ETCD_VERSION" ;;
  *) echo "[cluster:build] unknown release '$release': expected newest (the default) or oldest" >&2; exit 2 ;;
esac

names=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kwok)
cache_root="${SKYHOOK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skyhook-ts}"
bin_dir="$cache_root/bin/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION"

has_all() {
  local dir="$1" n
  for n in "${names[@]}"; do [[ -x "$dir/$n" ]] || return 1; done
}

log() { printf '[cluster:build] %s\n' "$*" >&2; }

if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  if has_all "$KUBEBUILDER_ASSETS"; then
    log "using binaries from KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
    exit 0
  fi
  log "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS lacks some of: ${names[*]}; building into the cache instead"
fi

if has_all "$bin_dir"; then
  log "binaries present in $bin_dir"
  exit 0
fi

missing_go() {
  cat >&2 <<MSG
[cluster:build] ERROR: $1
  Building the control plane needs Go >= 1.26 and access to the Go module proxy.
  Either install Go (https://go.dev/dl) and make the module proxy reachable (GOPROXY), or supply
  prebuilt binaries: put ${names[*]} in one directory and run
    export KUBEBUILDER_ASSETS=/path/to/that/dir
MSG
  exit 1
}

command -v go >/dev/null 2>&1 || missing_go "the 'go' command was not found on PATH"
go_minor="$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')"
[[ "$go_minor" =~ ^[0-9]+$ && "$go_minor" -ge 26 ]] || missing_go "go $(go env GOVERSION) is too old"

# Go fetches modules over HTTPS trusting only the system's CA bundle, and a minimal Debian has none
# (the files below are where Go looks for one).
has_ca_bundle() {
  local f
  [[ -n "${SSL_CERT_FILE:-}" && -s "$SSL_CERT_FILE" ]] && return 0
  for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/ca-bundle.pem \
    /etc/pki/tls/cacert.pem /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem /etc/ssl/cert.pem; do
    [[ -s "$f" ]] && return 0
  done
  return 1
}
if [[ "$(go env GOPROXY)" == *https://* ]] && ! has_ca_bundle; then
  bash "$here/ensure-system-packages.sh" "building the control plane (Go downloads modules over HTTPS)" ca-certificates
fi

work="$cache_root/work"
mkdir -p "$work" "$bin_dir.partial"
export GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0
start=$SECONDS

# --- kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kubelet ---------------
k8s_work="$work/k8s-$K8S_VERSION"
mkdir -p "$k8s_work"
log "fetching k8s.io/kubernetes@$K8S_VERSION's go.mod to generate the staging replace list"
k8s_gomod="$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -nE 's/^\s*"GoMod": "(.*)",?$/\1/p')" \
  || missing_go "could not download k8s.io/kubernetes@$K8S_VERSION from the module proxy"
[[ -f "$k8s_gomod" ]] || missing_go "could not download k8s.io/kubernetes@$K8S_VERSION from the module proxy"
staging_version="v0.${K8S_VERSION#v1.}"
godebug_line="$(grep -E '^godebug ' "$k8s_gomod" || true)"
{
  echo "module skyhook-ts.invalid/k8s-bins"
  echo
  echo "go 1.26"
  [[ -n "$godebug_line" ]] && echo "$godebug_line"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  echo "replace ("
  # Every staging module that the tag requires at the fake version v0.0.0 maps to its published tag.
  grep -E '^\s+k8s\.io/[a-z0-9-]+ v0\.0\.0$' "$k8s_gomod" | awk -v v="$staging_version" '{ printf "\t%s => %s %s\n", $1, $1, v }'
  echo ")"
} > "$k8s_work/go.mod"
log "$(grep -c '=>' "$k8s_work/go.mod") staging modules replaced at $staging_version"
cat > "$k8s_work/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
GO
k8s_minor="${K8S_VERSION#v1.}"; k8s_minor="${k8s_minor%%.*}"
ldflags="-s -w \
 -X k8s.io/component-base/version.gitVersion=$K8S_VERSION \
 -X k8s.io/component-base/version.gitMajor=1 \
 -X k8s.io/component-base/version.gitMinor=$k8s_minor \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/component-base/version.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ) \
 -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION \
 -X k8s.io/client-go/pkg/version.gitMajor=1 \
 -X k8s.io/client-go/pkg/version.gitMinor=$k8s_minor"
log "building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kubelet $K8S_VERSION (cold: 10 to 30 min on 2 cores)"
(cd "$k8s_work" && go build -trimpath -tags tools -ldflags "$ldflags" -o "$bin_dir.partial/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl k8s.io/kubernetes/cmd/kubelet)
log "k8s binaries built after $((SECONDS - start)) s"

# --- etcd: a wrapper main, since etcd's own modules carry local replace directives ------------
etcd_work="$work/etcd-$ETCD_VERSION"
mkdir -p "$etcd_work"
cat > "$etcd_work/go.mod" <<MOD
module skyhook-ts.invalid/etcd-bin

go 1.26

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
MOD
cat > "$etcd_work/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
log "building etcd $ETCD_VERSION"
(cd "$etcd_work" && go mod tidy >/dev/null && go build -trimpath -ldflags "-s -w" -o "$bin_dir.partial/etcd" .)

# --- kwok: no replace directives, so go install builds it with its own go.mod ---------------
log "building kwok $KWOK_VERSION"
GOBIN="$bin_dir.partial" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"

if [[ -d "$bin_dir" ]]; then
  # An older set lacking a binary (kubelet joined later): rename each file over the old one, so a
  # control plane starting meanwhile never finds the directory missing.
  for f in "$bin_dir.partial"/*; do mv -f "$f" "$bin_dir/"; done
  rmdir "$bin_dir.partial"
else
  mv "$bin_dir.partial" "$bin_dir"
fi
log "done in $((SECONDS - start)) s: $bin_dir"
