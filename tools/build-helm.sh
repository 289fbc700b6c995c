#!/usr/bin/env bash
# Builds the helm CLI from its Go module (helm.sh/helm/v4) into the sandbox cache (bin/helm-<version>/helm),
# so that the chart tests (helm lint, helm template, and the helm install e2e) never depend on a downloaded
# binary. Nothing to do when it is cached or when HELM points at an executable.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
# shellcheck source=lib/build-go-tool.sh
source "$here/lib/build-go-tool.sh"

# The ldflags are the ones helm's Makefile sets for a tagged release.
build_go_tool helm "$HELM_VERSION" HELM "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" \
  "-X helm.sh/helm/v4/internal/version.version=$HELM_VERSION -X helm.sh/helm/v4/internal/version.metadata= -X helm.sh/helm/v4/internal/version.gitTreeState=clean"
