#!/usr/bin/env bash
# Builds CNCF Distribution's registry from its Go module (github.com/distribution/distribution/v3)
# into the same cache as the control-plane binaries, under its own key (bin/registry-<version>/registry):
# the sandbox serves the package images from it over TLS with basic auth, and real nodes' containerd
# pulls through it as a mirror, as an air-gapped cluster does. Does nothing when the binary is
# already there, and nothing at all when SKYHOOK_REGISTRY_BIN points at an executable.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

log() { printf '[registry:build] %s\n' "$*" >&2; }

if [[ -n "${SKYHOOK_REGISTRY_BIN:-}" ]]; then
  [[ -x "$SKYHOOK_REGISTRY_BIN" ]] && { log "using SKYHOOK_REGISTRY_BIN=$SKYHOOK_REGISTRY_BIN"; exit 0; }
  log "SKYHOOK_REGISTRY_BIN=$SKYHOOK_REGISTRY_BIN is not executable; building into the cache instead"
fi

cache_root="${SKYHOOK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skyhook-ts}"
bin_dir="$cache_root/bin/registry-$REGISTRY_VERSION"
if [[ -x "$bin_dir/registry" ]]; then
  log "registry present in $bin_dir"
  exit 0
fi

command -v go >/dev/null 2>&1 || {
  log "ERROR: the 'go' command was not found on PATH; building the registry needs Go >= 1.26 and the module proxy (or set SKYHOOK_REGISTRY_BIN=/path/to/registry)"
  exit 1
}

rm -rf "$bin_dir.partial"
mkdir -p "$bin_dir.partial"
export GOFLAGS="-buildvcs=false" CGO_ENABLED=0
start=$SECONDS
# distribution's go.mod has no replace directives, so `go install module@version` builds it with its
# own go.mod (exact dependency versions); the ldflags set the version `registry --version` prints.
log "building registry $REGISTRY_VERSION (cold: a few minutes on 2 cores)"
GOBIN="$bin_dir.partial" go install -trimpath \
  -ldflags "-s -w -X github.com/distribution/distribution/v3/version.version=$REGISTRY_VERSION" \
  "github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION"
rm -rf "$bin_dir"
mv "$bin_dir.partial" "$bin_dir"
log "done in $((SECONDS - start)) s: $bin_dir/registry"
