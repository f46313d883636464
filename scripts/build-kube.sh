#!/usr/bin/env bash
# Builds the offline test cluster into ./bin once; later runs reuse it (the Go build cache makes a
# rebuild in a fresh clone a link step, not a compile):
#   kube-apiserver, kube-controller-manager, kube-scheduler  k8s.io/kubernetes (tools/testkube/go.mod)
#   etcd                                                    go.etcd.io/etcd/server/v3 embedded (tools/testkube/cmd/etcd)
#   kwok                                                    sigs.k8s.io/kwok (node heartbeats, pod lifecycle)
# and into ./bin/previous the control plane of the minor before (tools/testkube-previous/go.mod),
# which a test forms a cluster on before it upgrades it to ./bin's (offlinekube controlplane.go).
#
# Why a module of our own for Kubernetes: k8s.io/kubernetes requires its staging modules at
# v0.0.0 and replaces them with its own tree, so `go install k8s.io/kubernetes/cmd/...@v1.37.2`
# is refused. tools/testkube/go.mod pins the staging modules to their published v0.37.2 releases
# instead. The three components are built in one `go build`: they share most packages, and
# kube-apiserver alone is ~11 minutes of compile on 2 cores when the cache is cold.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${root}/bin"
kube_version_of() { sed -n 's/^[[:space:]]*k8s.io\/kubernetes v\([0-9.]*\).*/v\1/p' "$1" | head -n1; }
kube_version="$(kube_version_of "${root}/tools/testkube/go.mod")"
previous_version="$(kube_version_of "${root}/tools/testkube-previous/go.mod")"
kwok_version="${KWOK_VERSION:-v0.8.0}"
[[ -n "$kube_version" ]] || { echo "build-kube: no k8s.io/kubernetes version in tools/testkube/go.mod" >&2; exit 1; }
[[ -n "$previous_version" ]] || { echo "build-kube: no k8s.io/kubernetes version in tools/testkube-previous/go.mod" >&2; exit 1; }

# The stamp names what the binaries in ./bin were built from; a change to the tool module or to
# this script (its flags) rebuilds.
stamp_file="${bin}/.testkube-stamp"
stamp="kube=${kube_version} previous=${previous_version} kwok=${kwok_version} src=$(cat "$0" "${root}"/tools/testkube/go.mod "${root}"/tools/testkube/go.sum \
  "${root}"/tools/testkube/cmd/etcd/*.go "${root}"/tools/testkube-previous/go.mod "${root}"/tools/testkube-previous/go.sum | sha256sum | cut -c1-16)"
all_present=true
for b in kube-apiserver kube-controller-manager kube-scheduler etcd kwok previous/kube-apiserver previous/kube-controller-manager previous/kube-scheduler; do
  [[ -x "${bin}/${b}" ]] || all_present=false
done
if $all_present && [[ -f "$stamp_file" && "$(cat "$stamp_file")" == "$stamp" ]]; then
  exit 0
fi

mkdir -p "$bin" "${bin}/previous"
# ldflags_for v1.37.2: the version the binaries report (/version, --version), as a release build
# stamps it; without it they say v0.0.0.
ldflags_for() {
  local major="${1#v}" minor="${1#v*.}"
  major="${major%%.*}"; minor="${minor%%.*}"
  local version_pkg="k8s.io/component-base/version"
  echo "-s -w -X ${version_pkg}.gitVersion=$1 -X ${version_pkg}.gitMajor=${major} -X ${version_pkg}.gitMinor=${minor} -X ${version_pkg}.gitTreeState=clean"
}

echo "build-kube: building Kubernetes ${kube_version} control plane and etcd (20+ minutes of compile on a cold 2-core cache)" >&2
(cd "${root}/tools/testkube" && CGO_ENABLED=0 GOWORK=off go build -trimpath -ldflags "$(ldflags_for "$kube_version")" -o "${bin}/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  ./cmd/etcd)

echo "build-kube: building Kubernetes ${previous_version} control plane into bin/previous (another 15+ minutes cold)" >&2
(cd "${root}/tools/testkube-previous" && CGO_ENABLED=0 GOWORK=off go build -trimpath -ldflags "$(ldflags_for "$previous_version")" -o "${bin}/previous/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler)

echo "build-kube: building kwok ${kwok_version}" >&2
# kwok's go.mod has no replace directives, so go install MODULE@VERSION works.
(cd "$root" && CGO_ENABLED=0 GOWORK=off GOBIN="$bin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@${kwok_version}")

"${bin}/kube-apiserver" --version
"${bin}/previous/kube-apiserver" --version
echo "$stamp" >"$stamp_file"
