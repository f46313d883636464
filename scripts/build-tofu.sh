#!/usr/bin/env bash
# Builds OpenTofu from the Go module proxy into ./bin/tofu.
#
# Why not `go install`: OpenTofu's go.mod carries a replace directive, which `go install pkg@version`
# refuses. Downloading the module and building inside a writable copy of it works, and needs nothing
# but the Go module proxy (no release binaries are reachable from these machines).
set -euo pipefail

version="${TOFU_VERSION:-v1.12.6}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${root}/bin/tofu"

if [[ -x "$out" ]] && "$out" version 2>/dev/null | grep -q "OpenTofu ${version}"; then
  exit 0
fi

# shellcheck source=lib/gomodule.sh
source "${root}/scripts/lib/gomodule.sh"
work=""
trap 'remove_dir "$work"' EXIT
work="$(module_copy "github.com/opentofu/opentofu@${version}")" || { echo "build-tofu: giving up" >&2; exit 1; }

echo "build-tofu: building OpenTofu ${version} (several minutes on a cold cache)" >&2
mkdir -p "$(dirname "$out")"
(cd "$work" && CGO_ENABLED=0 go build -trimpath \
  -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
  -o "$out" ./cmd/tofu)
"$out" version
