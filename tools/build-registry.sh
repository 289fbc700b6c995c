#!/usr/bin/env bash
# Builds CNCF Distribution's registry from its Go module (github.com/distribution/distribution/v3) into
# the sandbox cache (bin/registry-<version>/registry): the sandbox serves the package images from it over
# TLS with basic auth, and real nodes' containerd pulls through it as a mirror, as an air-gapped cluster
# does. Nothing to do when it is cached or when SKYHOOK_REGISTRY_BIN points at an executable.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
# shellcheck source=lib/build-go-tool.sh
source "$here/lib/build-go-tool.sh"

# The ldflags set the version `registry --version` prints.
build_go_tool registry "$REGISTRY_VERSION" SKYHOOK_REGISTRY_BIN \
  "github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION" \
  "-X github.com/distribution/distribution/v3/version.version=$REGISTRY_VERSION"
