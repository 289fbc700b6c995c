#!/usr/bin/env bash
# Shared by the tool builders (build-helm.sh, build-registry.sh, build-cosign.sh): builds one command of
# an upstream Go module with `go install module/cmd@version` into the sandbox cache, under its own key
# (bin/<name>-<version>/<name>), so a bump of one tool never invalidates the others or the control-plane
# build. Does nothing when the binary is already cached, and nothing at all when the override variable
# names an executable. Source it, then call build_go_tool.
#
#   build_go_tool <name> <version> <override-var> <package@version> [ldflags]
#
# Only modules whose go.mod has no replace directives build this way: `go install pkg@version` then
# uses the module's own go.mod (its exact dependency versions).

build_go_tool() {
  local name="$1" version="$2" override_var="$3" package="$4" ldflags="${5:-}"
  local override="${!override_var:-}"
  _log() { printf '[%s:build] %s\n' "$name" "$*" >&2; }

  if [[ -n "$override" ]]; then
    if [[ -x "$override" ]]; then
      _log "using $override_var=$override"
      return 0
    fi
    _log "$override_var=$override is not executable; building into the cache instead"
  fi

  local cache_root="${SKYHOOK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skyhook-ts}"
  local bin_dir="$cache_root/bin/$name-$version"
  if [[ -x "$bin_dir/$name" ]]; then
    _log "$name present in $bin_dir"
    return 0
  fi

  command -v go >/dev/null 2>&1 || {
    _log "ERROR: the 'go' command was not found on PATH; building $name needs Go >= 1.26 and the module proxy (or set $override_var=/path/to/$name)"
    return 1
  }

  # A half-finished build never counts as cached: it lands in .partial and moves into place at the end.
  rm -rf "$bin_dir.partial"
  mkdir -p "$bin_dir.partial"
  local start=$SECONDS
  _log "building $name $version (cold: a few minutes on 2 cores)"
  GOFLAGS="-buildvcs=false" CGO_ENABLED=0 GOBIN="$bin_dir.partial" \
    go install -trimpath -ldflags "-s -w $ldflags" "$package"
  rm -rf "$bin_dir"
  mv "$bin_dir.partial" "$bin_dir"
  _log "done in $((SECONDS - start)) s: $bin_dir/$name"
}
