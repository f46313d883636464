# Sourced (not run) by the scripts that drive a CLI against the offline emulator: module-tests.sh,
# demo.sh. Expects `root` and `BIN` to be set.

# The CLI to drive: CLI_PATH (the Makefile passes ./bin/tofu or ./bin/terraform, or
# TF_ACC_TERRAFORM_PATH), else TOFU (the older name), else ./bin/tofu. cli_name is what messages
# call it ("tofu" or "terraform").
CLI_PATH="${CLI_PATH:-${TOFU:-$BIN/tofu}}"
[[ -x "$CLI_PATH" ]] || { echo "no CLI at $CLI_PATH: run make tofu or make terraform (or set CLI_PATH)" >&2; exit 1; }
case "$(TF_CLI_CONFIG_FILE= "$CLI_PATH" version 2>/dev/null | grep -m1 -oE '^(OpenTofu|Terraform) v')" in
  OpenTofu*) cli_name=tofu ;;
  Terraform*) cli_name=terraform ;;
  *) echo "$CLI_PATH version printed neither OpenTofu nor Terraform" >&2; exit 1 ;;
esac

# write_cli_config FILE PLUGIN_DIR: a CLI configuration that serves the provider from PLUGIN_DIR
# instead of a registry. The override names the short source gpucluster/gpucluster: each CLI
# qualifies it with its own registry (registry.opentofu.org or registry.terraform.io), exactly as
# it qualifies the `source = "gpucluster/gpucluster"` in the configurations, so one file serves
# both. A fully qualified registry.opentofu.org/... key would be ignored by Terraform, which would
# then look the provider up in a registry.
write_cli_config() {
  cat >"$1" <<RC
provider_installation {
  dev_overrides {
    "gpucluster/gpucluster" = "$2"
  }
  direct {}
}
RC
}

# start_emulator WORK_DIR [FLAGS...]: starts $BIN/gpucluster-emulator on a free loopback port and
# waits until it says where it listens. Sets emulator_pid and emulator_url; the caller stops it
# (stop_emulator, from its EXIT trap).
emulator_pid=""
emulator_url=""
start_emulator() {
  local work="$1"
  shift
  "$BIN/gpucluster-emulator" --listen 127.0.0.1:0 "$@" >"$work/emulator.out" 2>"$work/emulator.err" &
  emulator_pid=$!
  for _ in $(seq 1 100); do
    emulator_url="$(sed -n 's/^listening on \(http:\/\/[^ ]*\)$/\1/p' "$work/emulator.out" | head -n1)"
    [[ -n "$emulator_url" ]] && return 0
    kill -0 "$emulator_pid" 2>/dev/null || { cat "$work/emulator.err" >&2; echo "the emulator exited" >&2; exit 1; }
    sleep 0.1
  done
  echo "the emulator did not say where it listens" >&2
  exit 1
}

stop_emulator() {
  if [[ -n "$emulator_pid" ]] && kill -0 "$emulator_pid" 2>/dev/null; then
    kill "$emulator_pid" 2>/dev/null || true
    wait "$emulator_pid" 2>/dev/null || true
  fi
  emulator_pid=""
}

# emulator_env URL: the provider's endpoint and the emulator's default region and credentials, as
# a user with GPUCLUSTER_ENDPOINT set would run.
emulator_env() {
  export GPUCLUSTER_ENDPOINT="$1"
  export ALIBABA_CLOUD_REGION="cn-wulanchabu"
  export ALIBABA_CLOUD_ACCESS_KEY_ID="emulator"
  export ALIBABA_CLOUD_ACCESS_KEY_SECRET="emulator-secret"
  export TF_IN_AUTOMATION=1
  export CHECKPOINT_DISABLE=1
}

# check_no_leaks URL: fails when the emulator still holds a resource.
check_no_leaks() {
  local left
  left="$(curl -fsS "$1/_emulator/resources")"
  if grep -Eq '"[a-z_]+":\[[^]]' <<<"$left"; then
    echo "resources left behind in the emulator: $left" >&2
    return 1
  fi
  echo "nothing left: $left"
}
