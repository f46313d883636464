#!/usr/bin/env bash
# make testmodules: `tofu test` in every modules/* directory against one offline emulator, with the
# provider binary just built (dev_overrides). Exits non-zero on any failure; leaves nothing running.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${BIN:-$root/bin}"
TOFU="${TOFU:-$BIN/tofu}"

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

[[ -x "$BIN/terraform-provider-gpucluster" && -x "$BIN/gpucluster-emulator" ]] || make -C "$root" build

"$BIN/gpucluster-emulator" --listen 127.0.0.1:0 --boot-seconds 1 >"$work/emulator.out" 2>"$work/emulator.err" &
emulator_pid=$!
url=""
for _ in $(seq 1 100); do
  url="$(sed -n 's/^listening on \(http:\/\/[^ ]*\)$/\1/p' "$work/emulator.out" | head -n1)"
  [[ -n "$url" ]] && break
  kill -0 "$emulator_pid" 2>/dev/null || { cat "$work/emulator.err" >&2; echo "the emulator exited" >&2; exit 1; }
  sleep 0.1
done
[[ -n "$url" ]] || { echo "the emulator did not say where it listens" >&2; exit 1; }

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

failed=()
for dir in "$root"/modules/*/; do
  name="$(basename "$dir")"
  compgen -G "$dir/tests/*.tftest.hcl" >/dev/null || { echo "modules/$name has no tests/*.tftest.hcl" >&2; failed+=("$name"); continue; }
  start=$SECONDS
  # tofu get (not init): with dev_overrides init would ask the registry for the provider; get
  # installs only the local module calls. TF_DATA_DIR keeps .terraform out of the tree.
  export TF_DATA_DIR="$work/data/$name"
  if (cd "$dir" && "$TOFU" get -no-color >/dev/null && "$TOFU" test -no-color >"$work/$name.log" 2>&1); then
    echo "ok    modules/$name ($((SECONDS - start))s)"
  else
    echo "FAIL  modules/$name ($((SECONDS - start))s)"
    cat "$work/$name.log"
    failed+=("$name")
  fi
  rm -f "$dir/errored_test.tfstate"
done

left="$(curl -fsS "$url/_emulator/resources")"
if grep -Eq '"[a-z_]+":\[[^]]' <<<"$left"; then
  echo "resources left behind in the emulator: $left" >&2
  failed+=("(leaks)")
fi

if ((${#failed[@]})); then
  echo "module tests failed: ${failed[*]}" >&2
  exit 1
fi
echo "module tests passed"
