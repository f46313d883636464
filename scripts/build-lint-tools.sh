#!/usr/bin/env bash
# Builds the lint tools from the Go module proxy into ./bin once; later runs reuse them.
#
#   golangci-lint  github.com/golangci/golangci-lint/v2  (GOLANGCI_LINT_VERSION)
#   tflint         github.com/terraform-linters/tflint   (TFLINT_VERSION; its terraform ruleset is
#                                                         bundled, so no plugin is downloaded)
#
# They are not pinned in go.mod: their dependency trees are large and would drag the provider's
# own dependencies along. The versions live here instead, and `go version -m` on the binary tells
# whether the one in ./bin is the pinned one. Arguments name the tools to build (default: both).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${root}/bin"

golangci_version="${GOLANGCI_LINT_VERSION:-v2.15.0}"
tflint_version="${TFLINT_VERSION:-v0.64.0}"

# build NAME MODULE PACKAGE VERSION
build() {
  local name="$1" module="$2" pkg="$3" version="$4" out="${bin}/$1"
  if [[ -x "$out" ]] && go version -m "$out" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]]+${module}[[:space:]]+${version}([[:space:]]|$)"; then
    return 0
  fi
  echo "build-lint-tools: building ${name} ${version} (a few minutes on a cold cache)" >&2
  mkdir -p "$bin"
  local start=$SECONDS
  # Outside the provider's module, so its go.mod plays no part; GOFLAGS cleared so -mod settings
  # of the caller cannot leak in.
  (cd "$bin" && GOFLAGS=-buildvcs=false GOBIN="$bin" CGO_ENABLED=0 \
    go install -trimpath -ldflags "-s -w" "${pkg}@${version}")
  echo "build-lint-tools: ${name} ${version} built in $((SECONDS - start))s" >&2
}

tools=("$@")
[[ ${#tools[@]} -gt 0 ]] || tools=(golangci-lint tflint)
for t in "${tools[@]}"; do
  case "$t" in
    golangci-lint)
      build golangci-lint github.com/golangci/golangci-lint/v2 \
        github.com/golangci/golangci-lint/v2/cmd/golangci-lint "$golangci_version" ;;
    tflint)
      build tflint github.com/terraform-linters/tflint \
        github.com/terraform-linters/tflint "$tflint_version" ;;
    *) echo "build-lint-tools: unknown tool $t" >&2; exit 2 ;;
  esac
done
