#!/usr/bin/env bash
# Builds HashiCorp Terraform from the Go module proxy into ./bin/terraform (make terraform), so the
# acceptance and module tests can run on Terraform as well as on OpenTofu (scripts/build-tofu.sh).
# Nothing but the Go module proxy is needed: no release binary, no GitHub.
#
# Why it is more than `go build`: Terraform's go.mod requires ten nested modules of its own
# repository (the remote-state backends azure, consul, cos, gcs, kubernetes, oci, oss, pg, s3, and
# internal/legacy) through `replace ... => ./internal/...` directives. The module zip the proxy serves
# holds only the main module, so those directories are missing and the build stops at once. The
# steps below take them out:
#   1. download the module (read-only, in the module cache) and copy it to a writable directory;
#   2. remove the nine backends from internal/backend/init/init.go, the one file that imports them
#      (their import line and their entry in the backend table both name the import alias);
#   3. drop their require and replace lines, and internal/legacy's, from go.mod (`go mod edit`);
#   4. go build, with version.dev=no so `terraform version` says v1.13.3, not v1.13.3-dev.
# The result is an ordinary Terraform CLI with the local, http, inmem, remote and cloud backends;
# configurations that use one of the removed backends get Terraform's "unsupported backend" error.
set -euo pipefail

version="${TERRAFORM_VERSION:-v1.13.3}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${root}/bin/terraform"

# Reused when it is there and the pinned version (TF_CLI_CONFIG_FILE cleared: a missing file makes
# the CLI print a warning first).
if [[ -x "$out" ]] && TF_CLI_CONFIG_FILE= "$out" version 2>/dev/null | head -n1 | grep -qx "Terraform ${version}"; then
  exit 0
fi

# 1. Download and copy.
module="github.com/hashicorp/terraform"
# shellcheck source=lib/gomodule.sh
source "${root}/scripts/lib/gomodule.sh"
work=""
trap 'remove_dir "$work"' EXIT
work="$(module_copy "${module}@${version}")" || { echo "build-terraform: giving up" >&2; exit 1; }

# 2. and 3. The backends whose nested modules the zip leaves out: directory name and import alias
# in init.go.
missing_backends=(azure:backendAzure consul:backendConsul cos:backendCos gcs:backendGCS
  kubernetes:backendKubernetes oci:backendOCI oss:backendOSS pg:backendPg s3:backendS3)

init_go="$work/internal/backend/init/init.go"
edit=(go mod edit)
for entry in "${missing_backends[@]}"; do
  dir="${entry%%:*}" alias="${entry#*:}"
  path="${module}/internal/backend/remote-state/${dir}"
  grep -q "\b${alias}\b" "$init_go" || { echo "build-terraform: ${alias} not found in init.go; has ${version} changed its backends?" >&2; exit 1; }
  sed -i "/\b${alias}\b/d" "$init_go"
  edit+=(-droprequire="$path" -dropreplace="$path")
done
edit+=(-droprequire="${module}/internal/legacy" -dropreplace="${module}/internal/legacy")
(cd "$work" && "${edit[@]}")

# 4. Build.
echo "build-terraform: building Terraform ${version} (a few minutes on a cold cache)" >&2
mkdir -p "$(dirname "$out")"
(cd "$work" && CGO_ENABLED=0 go build -trimpath -buildvcs=false \
  -ldflags "-s -w -X ${module}/version.dev=no" \
  -o "$out" .)
TF_CLI_CONFIG_FILE= "$out" version
