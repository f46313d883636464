#!/usr/bin/env bash
# make testmodules: `tofu test` (or `terraform test`, CLI_PATH=./bin/terraform) in every modules/*
# directory against one offline emulator, with the provider binary just built (dev_overrides).
# Exits non-zero on any failure; leaves nothing running.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${BIN:-$root/bin}"
# shellcheck source=lib/cli.sh
source "$root/scripts/lib/cli.sh"

work="$(mktemp -d)"
cleanup() {
  stop_emulator
  rm -rf "$work"
}
trap cleanup EXIT

[[ -x "$BIN/terraform-provider-gpucluster" && -x "$BIN/gpucluster-emulator" ]] || make -C "$root" build

start_emulator "$work" --boot-seconds 1
write_cli_config "$work/clirc" "$BIN"
export TF_CLI_CONFIG_FILE="$work/clirc"
emulator_env "$emulator_url"

echo "module tests with $("$CLI_PATH" version | head -n1)"
failed=()
# MODULES="cluster-core ai-training" runs those modules only (default: every module).
dirs=("$root"/modules/*/)
if [[ -n "${MODULES:-}" ]]; then
  dirs=()
  for m in $MODULES; do dirs+=("$root/modules/$m/"); done
fi
for dir in "${dirs[@]}"; do
  name="$(basename "$dir")"
  compgen -G "$dir/tests/*.tftest.hcl" >/dev/null || { echo "modules/$name has no tests/*.tftest.hcl" >&2; failed+=("$name"); continue; }
  start=$SECONDS
  # get (not init): with dev_overrides init would ask the registry for the provider; get
  # installs only the local module calls. TF_DATA_DIR keeps .terraform out of the tree.
  export TF_DATA_DIR="$work/data/$name"
  if (cd "$dir" && "$CLI_PATH" get -no-color >/dev/null && "$CLI_PATH" test -no-color >"$work/$name.log" 2>&1); then
    echo "ok    modules/$name ($cli_name test, $((SECONDS - start))s)"
  else
    echo "FAIL  modules/$name ($cli_name test, $((SECONDS - start))s)"
    cat "$work/$name.log"
    failed+=("$name")
  fi
  rm -f "$dir/errored_test.tfstate"
done

check_no_leaks "$emulator_url" >/dev/null || failed+=("(leaks)")

if ((${#failed[@]})); then
  echo "module tests failed ($cli_name): ${failed[*]}" >&2
  exit 1
fi
echo "module tests passed ($cli_name)"
