#!/usr/bin/env bash
# Builds sigstore's cosign CLI from its Go module (github.com/sigstore/cosign/v3) into the sandbox cache
# (bin/cosign-<version>/cosign): the signing tests sign package images in the sandbox registry with it,
# exactly as a package author does, and the verifier under test must accept what it writes. Nothing to do
# when it is cached or when SKYHOOK_COSIGN_BIN points at an executable.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
# shellcheck source=lib/build-go-tool.sh
source "$here/lib/build-go-tool.sh"

# The ldflag sets the version `cosign version` prints, as cosign's Makefile does for a release.
build_go_tool cosign "$COSIGN_VERSION" SKYHOOK_COSIGN_BIN \
  "github.com/sigstore/cosign/v3/cmd/cosign@$COSIGN_VERSION" \
  "-X sigs.k8s.io/release-utils/version.gitVersion=$COSIGN_VERSION"
