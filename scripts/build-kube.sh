#!/usr/bin/env bash
# Builds the offline test cluster into ./bin once; later runs reuse it (the Go build cache makes a
# rebuild in a fresh clone a link step, not a compile):
#   kube-apiserver, kube-controller-manager, kube-scheduler  k8s.io/kubernetes (tools/testkube/go.mod)
#   etcd                                                    go.etcd.io/etcd/server/v3 embedded (tools/testkube/cmd/etcd)
#   kwok                                                    sigs.k8s.io/kwok (node heartbeats, pod lifecycle)
#
# Why a module of our own for Kubernetes: k8s.io/kubernetes requires its staging modules at
# v0.0.0 and replaces them with its own tree, so `go install k8s.io/kubernetes/cmd/...@v1.37.2`
# is refused. tools/testkube/go.mod pins the staging modules to their published v0.37.2 releases
# instead. The three components are built in one `go build`: they share most packages, and
# kube-apiserver alone is ~11 minutes of compile on 2 cores when the cache is cold.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${root}/bin"
kube_version="$(sed -n 's/^[[:space:]]*k8s.io\/kubernetes v\([0-9.]*\).*/v\1/p' "${root}/tools/testkube/go.mod" | head -n1)"
kwok_version="${KWOK_VERSION:-v0.8.0}"
[[ -n "$kube_version" ]] || { echo "build-kube: no k8s.io/kubernetes version in tools/testkube/go.mod" >&2; exit 1; }

# The stamp names what the binaries in ./bin were built from; a change to the tool module or to
# this script (its flags) rebuilds.
stamp_file="${bin}/.testkube-stamp"
stamp="kube=${kube_version} kwok=${kwok_version} src=$(cat "$0" "${root}"/tools/testkube/go.mod "${root}"/tools/testkube/go.sum "${root}"/tools/testkube/cmd/etcd/*.go | sha256sum | cut -c1-16)"
all_present=true
for b in kube-apiserver kube-controller-manager kube-scheduler etcd kwok; do
  [[ -x "${bin}/${b}" ]] || all_present=false
done
if $all_present && [[ -f "$stamp_file" && "$(cat "$stamp_file")" == "$stamp" ]]; then
  exit 0
fi

mkdir -p "$bin"
major="${kube_version#v}"; major="${major%%.*}"
minor="${kube_version#v*.}"; minor="${minor%%.*}"
version_pkg="k8s.io/component-base/version"
ldflags="-s -w -X ${version_pkg}.gitVersion=${kube_version} -X ${version_pkg}.gitMajor=${major} -X ${version_pkg}.gitMinor=${minor} -X ${version_pkg}.gitTreeState=clean"

echo "build-kube: building Kubernetes ${kube_version} control plane and etcd (20+ minutes of compile on a cold 2-core cache)" >&2
(cd "${root}/tools/testkube" && CGO_ENABLED=0 GOWORK=off go build -trimpath -ldflags "$ldflags" -o "${bin}/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  ./cmd/etcd)

echo "build-kube: building kwok ${kwok_version}" >&2
# kwok's go.mod has no replace directives, so go install MODULE@VERSION works.
(cd "$root" && CGO_ENABLED=0 GOWORK=off GOBIN="$bin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@${kwok_version}")

"${bin}/kube-apiserver" --version
echo "$stamp" >"$stamp_file"
