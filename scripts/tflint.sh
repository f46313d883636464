#!/usr/bin/env bash
# make lint, HCL half: tflint (./bin/tflint, built by scripts/build-lint-tools.sh) with .tflint.hcl
# on every directory under modules/ and examples/ that holds .tf files. No plugin is downloaded:
# the terraform ruleset is bundled in the binary.
#
# The documentation snippets (examples/provider, resources, ephemeral-resources, data-sources,
# functions) are fragments shown on registry pages, and modules/*/tests/* hold fixtures for
# `tofu test` (as testing/* holds helper modules for them); none is a root module a user runs, so they are not asked for a terraform block
# with required_version and provider version constraints. Every other rule applies to them, and any finding, notices
# included, fails.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
tflint="${TFLINT:-$root/bin/tflint}"
cd "$root"

snippet_rules=(--disable-rule=terraform_required_version --disable-rule=terraform_required_providers)

failed=0
checked=0
while IFS= read -r dir; do
  args=(--config "$root/.tflint.hcl" --chdir "$dir" --no-color --minimum-failure-severity=notice)
  case "$dir" in
    examples/provider* | examples/resources/* | examples/ephemeral-resources/* | examples/data-sources/* | examples/functions/* | modules/*/tests/* | testing/*)
      args+=("${snippet_rules[@]}") ;;
  esac
  checked=$((checked + 1))
  # The CLI configuration is not needed to lint, and the machine's TF_CLI_CONFIG_FILE may name a
  # file that does not exist.
  if ! out="$(env -u TF_CLI_CONFIG_FILE "$tflint" "${args[@]}" 2>&1)"; then
    printf '== %s\n%s\n' "$dir" "$out"
    failed=1
  elif [[ -n "$out" ]]; then
    printf '== %s\n%s\n' "$dir" "$out"
  fi
# modules/scenario-cluster/shared holds files linked into the scenario modules, not a module: it is
# linted through each module that links it.
done < <(find modules examples testing -name '*.tf' -not -path '*/.terraform/*' -not -path 'modules/scenario-cluster/shared/*' -printf '%h\n' 2>/dev/null | sort -u)

if [[ $failed -ne 0 ]]; then
  echo "tflint: problems above ($checked directories checked)" >&2
  exit 1
fi
echo "tflint: $checked directories clean"
