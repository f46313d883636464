#!/usr/bin/env bash
# Builds the real controllers the offline cluster tests run next to the control plane into ./bin
# once; later runs reuse them (like scripts/build-kube.sh):
#   kueue         sigs.k8s.io/kueue/cmd/kueue at manifests.KueueVersion (internal/manifests/queues.go)
#   mpi-operator  github.com/kubeflow/mpi-operator/cmd/mpi-operator at manifests.MPIOperatorVersion
#                 (internal/manifests/mpi.go), through tools/mpioperator/go.mod
# and their CustomResourceDefinitions, copied from each module's own files in the Go module cache
# into ./bin/crds/kueue and ./bin/crds/mpi-operator (nothing of theirs is kept in this repository).
#
# The versions are read from the constants the rendering is written for, so the tests run the
# releases the rendered queues and MPIJobs target. Kueue's go.mod has no replace directives, so
# `go install sigs.k8s.io/kueue/cmd/kueue@VERSION` builds it with its own go.sum. The MPI Operator's
# `go install ...@VERSION` is refused: the module proxy does not serve its version list, which go
# install reads for deprecation notices. tools/mpioperator/go.mod requires the operator alone, so
# its dependencies are those of the operator's own go.mod.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${BIN:-${root}/bin}"
const() { sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*\"\(v[0-9.]*\)\".*/\1/p" "$2" | head -n1; }
kueue_version="$(const KueueVersion "${root}/internal/manifests/queues.go")"
mpi_version="$(const MPIOperatorVersion "${root}/internal/manifests/mpi.go")"
[[ -n "$kueue_version" ]] || { echo "build-controllers: no KueueVersion in internal/manifests/queues.go" >&2; exit 1; }
[[ -n "$mpi_version" ]] || { echo "build-controllers: no MPIOperatorVersion in internal/manifests/mpi.go" >&2; exit 1; }
mpi_tool_version="$(sed -n 's/^[[:space:]]*\(require \)\{0,1\}github.com\/kubeflow\/mpi-operator \(v[0-9.]*\).*/\2/p' "${root}/tools/mpioperator/go.mod" | head -n1)"
[[ "$mpi_tool_version" == "$mpi_version" ]] || {
  echo "build-controllers: tools/mpioperator/go.mod requires the MPI Operator ${mpi_tool_version:-(none)}, internal/manifests renders for ${mpi_version}" >&2; exit 1; }
kueue_mod="sigs.k8s.io/kueue"
mpi_mod="github.com/kubeflow/mpi-operator"

stamp_file="${bin}/.controllers-stamp"
stamp="kueue=${kueue_version} mpi-operator=${mpi_version} src=$(cat "$0" "${root}"/tools/mpioperator/go.mod "${root}"/tools/mpioperator/go.sum | sha256sum | cut -c1-16)"
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
export CGO_ENABLED=0 GOWORK=off GOBIN="$bin"
go install -trimpath -ldflags "-s -w -X ${kueue_mod}/pkg/version.GitVersion=${kueue_version}" \
  "${kueue_mod}/cmd/kueue@${kueue_version}"
(cd "${root}/tools/mpioperator" && go build -trimpath -ldflags "-s -w -X ${mpi_mod}/pkg/version.Version=${mpi_version}" \
  -o "${bin}/mpi-operator" "${mpi_mod}/cmd/mpi-operator")

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
