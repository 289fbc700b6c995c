#!/usr/bin/env bash
# Builds the helm CLI from its Go module (helm.sh/helm/v4) into the same cache as the control-plane
# binaries, under its own key (bin/helm-<version>/helm), so that the chart tests (helm lint, helm
# template, and the helm install e2e) never depend on a downloaded binary, and a Helm bump never
# invalidates the ~9-minute control-plane build. Does nothing when the binary is already there, and
# nothing at all when HELM points at an executable.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

log() { printf '[helm:build] %s\n' "$*" >&2; }

if [[ -n "${HELM:-}" ]]; then
  [[ -x "$HELM" ]] && { log "using HELM=$HELM"; exit 0; }
  log "HELM=$HELM is not executable; building into the cache instead"
fi

cache_root="${SKYHOOK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skyhook-ts}"
bin_dir="$cache_root/bin/helm-$HELM_VERSION"
if [[ -x "$bin_dir/helm" ]]; then
  log "helm present in $bin_dir"
  exit 0
fi

command -v go >/dev/null 2>&1 || {
  log "ERROR: the 'go' command was not found on PATH; building helm needs Go >= 1.26 and the module proxy (or set HELM=/path/to/helm)"
  exit 1
}

mkdir -p "$bin_dir.partial"
export GOFLAGS="-buildvcs=false" CGO_ENABLED=0
start=$SECONDS
# helm's go.mod has no replace directives, so `go install module@version` builds it with its own
# go.mod (exact dependency versions); the ldflags are the ones helm's Makefile sets for a tagged release.
log "building helm $HELM_VERSION (cold: a few minutes on 2 cores)"
GOBIN="$bin_dir.partial" go install -trimpath \
  -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION -X helm.sh/helm/v4/internal/version.metadata= -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
  "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
rm -rf "$bin_dir"
mv "$bin_dir.partial" "$bin_dir"
log "done in $((SECONDS - start)) s: $bin_dir/helm"
