#!/usr/bin/env bash
# make demo: build the provider, start the offline emulator, apply an example stack against it with
# real OpenTofu (by default examples/scenarios/ai-training: one module call for a training cluster),
# show the outputs a user cares about, destroy, check nothing is left, stop the emulator.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${BIN:-$root/bin}"
TOFU="${TOFU:-$BIN/tofu}"
STACK="$(cd "${STACK:-$root/examples/scenarios/ai-training}" && pwd)"

work="$(mktemp -d)"
emulator_pid=""
cleanup() {
  if [[ -n "$emulator_pid" ]] && kill -0 "$emulator_pid" 2>/dev/null; then
    kill "$emulator_pid" 2>/dev/null || true
    wait "$emulator_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n==> %s\n' "$*"; }

step "starting the emulator"
"$BIN/gpucluster-emulator" --listen 127.0.0.1:0 --state-file "$work/emulator-state.json" --boot-seconds 2 \
  >"$work/emulator.out" 2>"$work/emulator.err" &
emulator_pid=$!
url=""
for _ in $(seq 1 100); do
  url="$(sed -n 's/^listening on \(http:\/\/[^ ]*\)$/\1/p' "$work/emulator.out" | head -n1)"
  [[ -n "$url" ]] && break
  kill -0 "$emulator_pid" 2>/dev/null || { cat "$work/emulator.err" >&2; echo "the emulator exited" >&2; exit 1; }
  sleep 0.1
done
[[ -n "$url" ]] || { echo "the emulator did not say where it listens" >&2; exit 1; }
echo "emulator at $url"

# The provider binary just built is used in place of a registry download.
cat >"$work/tofurc" <<RC
provider_installation {
  dev_overrides {
    "registry.opentofu.org/gpucluster/gpucluster" = "$BIN"
  }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$work/tofurc"
export GPUCLUSTER_ENDPOINT="$url"
export ALIBABA_CLOUD_REGION="cn-wulanchabu"
export ALIBABA_CLOUD_ACCESS_KEY_ID="emulator"
export ALIBABA_CLOUD_ACCESS_KEY_SECRET="emulator-secret"
export TF_IN_AUTOMATION=1

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

step "tofu get (local modules; the provider comes from dev_overrides)"
"$TOFU" get -no-color

step "tofu apply ($(basename "$STACK"))"
"$TOFU" apply -auto-approve -input=false -no-color

step "outputs"
shown=0
for name in instance_type why nodes mount_command findings estimated_hourly_price; do
  if value="$("$TOFU" output -no-color "$name" 2>/dev/null)"; then
    printf '%s = %s\n' "$name" "$value"
    shown=1
  fi
done
((shown)) || "$TOFU" output -no-color

step "tofu destroy"
"$TOFU" destroy -auto-approve -input=false -no-color

step "checking the emulator holds nothing"
left="$(curl -fsS "$url/_emulator/resources")"
if grep -Eq '"[a-z_]+":\[[^]]' <<<"$left"; then
  echo "resources left behind: $left" >&2
  exit 1
fi
echo "nothing left: $left"
echo "API calls: $(curl -fsS "$url/_emulator/stats")"

step "stopping the emulator"
kill "$emulator_pid"
wait "$emulator_pid" 2>/dev/null || true
emulator_pid=""
echo "demo finished"
