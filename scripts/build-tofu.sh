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

src="$(go mod download -json "github.com/opentofu/opentofu@${version}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [[ -z "$src" || ! -d "$src" ]]; then
  echo "build-tofu: could not download github.com/opentofu/opentofu@${version} from the Go module proxy" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
cp -R "$src/." "$work/"
chmod -R u+w "$work"

echo "build-tofu: building OpenTofu ${version} (several minutes on a cold cache)" >&2
mkdir -p "$(dirname "$out")"
(cd "$work" && CGO_ENABLED=0 go build -trimpath \
  -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
  -o "$out" ./cmd/tofu)
"$out" version
