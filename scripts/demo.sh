#!/usr/bin/env bash
# make demo: build the provider, start the offline emulator, apply an example stack against it with
# real OpenTofu, or HashiCorp Terraform with CLI_PATH=./bin/terraform (make demo CLI=terraform)
# (by default examples/scenarios/ai-training: one module call for a training cluster), show the
# outputs a user cares about, destroy, check nothing is left, stop the emulator.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${BIN:-$root/bin}"
# shellcheck source=lib/cli.sh
source "$root/scripts/lib/cli.sh"
STACK="$(cd "${STACK:-$root/examples/scenarios/ai-training}" && pwd)"

work="$(mktemp -d)"
cleanup() {
  stop_emulator
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n==> %s\n' "$*"; }

step "starting the emulator"
start_emulator "$work" --state-file "$work/emulator-state.json" --boot-seconds 2
url="$emulator_url"
echo "emulator at $url"

# The provider binary just built is used in place of a registry download.
write_cli_config "$work/clirc" "$BIN"
export TF_CLI_CONFIG_FILE="$work/clirc"
emulator_env "$url"
echo "driving $("$CLI_PATH" version | head -n1)"

# Work on a copy laid out like the repository, so relative module sources (../../../modules/...)
# resolve and nothing is written into the checkout.
rel="${STACK#"$root"/}"
mkdir -p "$work/src/$(dirname "$rel")"
cp -R "$root/modules" "$work/src/modules"
cp -R "$STACK" "$work/src/$rel"
cd "$work/src/$rel"
export TF_DATA_DIR="$work/tfdata"
# The kubeadm join token is derived from this salt; a real stack takes it from a secret store.
TF_VAR_join_token_salt="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export TF_VAR_join_token_salt

step "$cli_name get (local modules; the provider comes from dev_overrides)"
"$CLI_PATH" get -no-color

step "$cli_name apply ($(basename "$STACK"))"
"$CLI_PATH" apply -auto-approve -input=false -no-color

step "outputs"
shown=0
for name in instance_type why nodes mount_command findings estimated_hourly_price; do
  if value="$("$CLI_PATH" output -no-color "$name" 2>/dev/null)"; then
    printf '%s = %s\n' "$name" "$value"
    shown=1
  fi
done
((shown)) || "$CLI_PATH" output -no-color

step "$cli_name destroy"
"$CLI_PATH" destroy -auto-approve -input=false -no-color

step "checking the emulator holds nothing"
check_no_leaks "$url"
echo "API calls: $(curl -fsS "$url/_emulator/stats")"

step "stopping the emulator"
stop_emulator
echo "demo finished"
