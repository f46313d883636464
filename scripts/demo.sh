#!/usr/bin/env bash
# make demo: build the provider, start the offline emulator, apply an example stack against it with
# real OpenTofu, or HashiCorp Terraform with CLI_PATH=./bin/terraform (make demo CLI=terraform)
# (by default examples/scenarios/ai-training: one module call for a training cluster), show the
# outputs a user cares about, destroy, check nothing is left, stop the emulator.
#
# make demo-cluster (CLUSTER=1) runs the same stack with the offline Kubernetes: the test cluster
# (bin/gpucluster-offlinekube, from make kube) starts first, the emulator's node agent registers
# each instance whose bootstrap would work on the real cloud as one of its Nodes and applies the
# control plane's add-ons there, the stack turns on its validation jobs, and after apply the demo
# prints one line, "kubernetes: R/N nodes Ready, S/P validation pods scheduled on GPU nodes", with
# the reason for each node or pod that is not, then each node's modeled time from RunInstances to
# Ready (the node agent's model of the real boot). It fails when the cluster does not get there.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${BIN:-$root/bin}"
# shellcheck source=lib/cli.sh
source "$root/scripts/lib/cli.sh"
# shellcheck source=lib/nodes.sh
source "$root/scripts/lib/nodes.sh"
STACK="$(cd "${STACK:-$root/examples/scenarios/ai-training}" && pwd)"

work="$(mktemp -d)"
cluster_pid=""
cleanup() {
  stop_emulator
  if [[ -n "$cluster_pid" ]]; then
    kill "$cluster_pid" 2>/dev/null || true
    wait "$cluster_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n==> %s\n' "$*"; }

emulator_flags=(--state-file "$work/emulator-state.json" --boot-seconds 2)
if [[ "${CLUSTER:-}" == 1 ]]; then
  step "starting the offline Kubernetes (kube-apiserver, controller-manager, scheduler, etcd, kwok)"
  "$BIN/gpucluster-offlinekube" --bin "$BIN" >"$work/cluster.out" 2>"$work/cluster.err" &
  cluster_pid=$!
  kubeconfig=""
  for _ in $(seq 1 1200); do
    kubeconfig="$(sed -n 's/^kubeconfig //p' "$work/cluster.out" | head -n1)"
    [[ -n "$kubeconfig" ]] && break
    kill -0 "$cluster_pid" 2>/dev/null || { cat "$work/cluster.err" >&2; echo "the test cluster exited" >&2; exit 1; }
    sleep 0.1
  done
  [[ -n "$kubeconfig" ]] || { cat "$work/cluster.err" >&2; echo "the test cluster did not become ready" >&2; exit 1; }
  echo "API server ready (kubeconfig $kubeconfig)"
  emulator_flags+=(--kubeconfig "$kubeconfig")
  export TF_VAR_validation_jobs=true
fi

step "starting the emulator"
start_emulator "$work" "${emulator_flags[@]}"
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

# Without the offline Kubernetes nothing answers the acceptance gate's checks (a control-plane node
# runs them as Kubernetes Jobs), so the gate is turned off by an override file, the CLI's own way to
# change a copy's module call (https://opentofu.org/docs/language/files/override/); with it
# (make demo-cluster) the gate runs as on the cloud.
if [[ "${CLUSTER:-}" != 1 ]]; then
  for m in $(sed -n 's/^module "\([^"]*\)" {$/\1/p' ./*.tf); do
    printf 'module "%s" {\n  acceptance = { enabled = false }\n}\n' "$m" >>demo_override.tf
  done
fi

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

if [[ "${CLUSTER:-}" == 1 ]]; then
  step "the cluster in Kubernetes"
  "$BIN/gpucluster-offlinekube" report --kubeconfig "$kubeconfig" --emulator "$url" || cluster_failed=1
  step "modeled time to Ready per node (the node agent's model, GET /_emulator/nodes; no instance waits for it)"
  curl -fsS "$url/_emulator/nodes" | print_modeled_times || echo "  (could not read $url/_emulator/nodes)"
fi

step "$cli_name destroy"
"$CLI_PATH" destroy -auto-approve -input=false -no-color

step "checking the emulator holds nothing"
check_no_leaks "$url"
echo "API calls: $(curl -fsS "$url/_emulator/stats")"

step "stopping the emulator"
stop_emulator
if [[ -n "${cluster_failed:-}" ]]; then
  echo "demo finished, but the cluster did not come up (see the lines under 'the cluster in Kubernetes')" >&2
  exit 1
fi
echo "demo finished"
