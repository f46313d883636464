#!/usr/bin/env bash
# Builds the real controllers the offline cluster tests run next to the control plane into ./bin
# once; later runs reuse them (like scripts/build-kube.sh):
#   kueue         sigs.k8s.io/kueue/cmd/kueue at manifests.KueueVersion (internal/manifests/queues.go)
#   mpi-operator  github.com/kubeflow/mpi-operator/cmd/mpi-operator at manifests.MPIOperatorVersion
#                 (internal/manifests/mpi.go)
# both through tools/controllers/go.mod, in one go build: the Kubernetes libraries they share
# compile once, and at the versions tools/manifestcheck's tests compile too (same flags: no
# -trimpath, the default CGO_ENABLED), so whichever runs second reuses the other's build cache.
# and their CustomResourceDefinitions, copied from each module's own files in the Go module cache
# into ./bin/crds/kueue and ./bin/crds/mpi-operator (nothing of theirs is kept in this repository).
#
# The versions are read from the constants the rendering is written for, so the tests run the
# releases the rendered queues and MPIJobs target, and tools/controllers/go.mod must require them.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${BIN:-${root}/bin}"
const() { sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*\"\(v[0-9.]*\)\".*/\1/p" "$2" | head -n1; }
kueue_version="$(const KueueVersion "${root}/internal/manifests/queues.go")"
mpi_version="$(const MPIOperatorVersion "${root}/internal/manifests/mpi.go")"
[[ -n "$kueue_version" ]] || { echo "build-controllers: no KueueVersion in internal/manifests/queues.go" >&2; exit 1; }
[[ -n "$mpi_version" ]] || { echo "build-controllers: no MPIOperatorVersion in internal/manifests/mpi.go" >&2; exit 1; }
required() { sed -n "s/^[[:space:]]*\(require \)\{0,1\}$1 \(v[0-9.]*\).*/\2/p" "${root}/tools/controllers/go.mod" | head -n1; }
for pair in "sigs.k8s.io/kueue:${kueue_version}" "github.com/kubeflow/mpi-operator:${mpi_version}"; do
  mod="${pair%%:*}" want="${pair#*:}"
  got="$(required "${mod//\//\\/}")"
  [[ "$got" == "$want" ]] || { echo "build-controllers: tools/controllers/go.mod requires ${mod} ${got:-(none)}, internal/manifests renders for ${want}" >&2; exit 1; }
done
kueue_mod="sigs.k8s.io/kueue"
mpi_mod="github.com/kubeflow/mpi-operator"

stamp_file="${bin}/.controllers-stamp"
stamp="kueue=${kueue_version} mpi-operator=${mpi_version} src=$(cat "$0" "${root}"/tools/controllers/go.mod "${root}"/tools/controllers/go.sum | sha256sum | cut -c1-16)"
all_present=true
for f in kueue mpi-operator; do
  [[ -x "${bin}/${f}" ]] || all_present=false
done
compgen -G "${bin}/crds/kueue/*.yaml" >/dev/null || all_present=false
compgen -G "${bin}/crds/mpi-operator/*.yaml" >/dev/null || all_present=false
if $all_present && [[ -f "$stamp_file" && "$(cat "$stamp_file")" == "$stamp" ]]; then
  exit 0
fi
rm -f "$stamp_file"
mkdir -p "$bin"

echo "build-controllers: building Kueue ${kueue_version} and the MPI Operator ${mpi_version}" >&2
cd "$root"
(cd "${root}/tools/controllers" && GOWORK=off go build \
  -ldflags "-s -w -X ${kueue_mod}/pkg/version.GitVersion=${kueue_version} -X ${mpi_mod}/pkg/version.Version=${mpi_version}" \
  -o "${bin}/" "${mpi_mod}/cmd/mpi-operator" "${kueue_mod}/cmd/kueue")

# The CRDs from the same module versions, as the modules ship them.
moddir() { go mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'; }
kueue_dir="$(moddir "$kueue_mod" "$kueue_version")"
mpi_dir="$(moddir "$mpi_mod" "$mpi_version")"
[[ -d "${kueue_dir}/config/components/crd/bases" ]] || { echo "build-controllers: no CRDs in ${kueue_dir}" >&2; exit 1; }
[[ -f "${mpi_dir}/manifests/base/kubeflow.org_mpijobs.yaml" ]] || { echo "build-controllers: no MPIJob CRD in ${mpi_dir}" >&2; exit 1; }
rm -rf "${bin}/crds/kueue" "${bin}/crds/mpi-operator"
mkdir -p "${bin}/crds/kueue" "${bin}/crds/mpi-operator"
install -m 0644 "${kueue_dir}"/config/components/crd/bases/*.yaml "${bin}/crds/kueue/"
install -m 0644 "${mpi_dir}/manifests/base/kubeflow.org_mpijobs.yaml" "${bin}/crds/mpi-operator/"

echo "$stamp" >"$stamp_file"
