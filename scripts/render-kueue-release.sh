#!/usr/bin/env bash
# Writes internal/manifests/releases/kueue.yaml: Kueue's release manifest at manifests.KueueVersion
# (internal/manifests/queues.go), rendered offline by tools/kueuerelease from the sigs.k8s.io/kueue
# module's config/default as `kubectl kustomize` would, CRD descriptions removed. Run it after
# raising KueueVersion; internal/manifests TestKueueReleaseIsTheModules fails until then.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
version="$(sed -n 's/^[[:space:]]*KueueVersion[[:space:]]*=[[:space:]]*"\(v[0-9.]*\)".*/\1/p' "${root}/internal/manifests/queues.go" | head -n1)"
[[ -n "$version" ]] || { echo "render-kueue-release: no KueueVersion in internal/manifests/queues.go" >&2; exit 1; }
cd "${root}/tools/kueuerelease"
dir="$(GOWORK=off go mod download -json "sigs.k8s.io/kueue@${version}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -d "${dir}/config/default" ]] || { echo "render-kueue-release: no config/default in sigs.k8s.io/kueue@${version}" >&2; exit 1; }
GOWORK=off go run . "$dir" >"${root}/internal/manifests/releases/kueue.yaml.tmp"
mv "${root}/internal/manifests/releases/kueue.yaml.tmp" "${root}/internal/manifests/releases/kueue.yaml"
echo "render-kueue-release: internal/manifests/releases/kueue.yaml from sigs.k8s.io/kueue@${version}" >&2
