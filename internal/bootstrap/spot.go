package bootstrap

// The spot-interruption handler of spot nodes: a systemd service that polls the instance
// metadata for the reclaim notice and, when it comes, cordons the node and evicts its pods, so
// they are rescheduled (and the Cluster Autoscaler adds a node for them) before the instance goes.
//
// The notice, from the vendor's "Detect and respond to preemptible instance interruptions"
// (https://www.alibabacloud.com/help/en/ecs/user-guide/best-practices-for-preemptible-instances):
// GET http://100.100.100.200/latest/meta-data/instance/spot/termination-time answers HTTP 404
// while no reclaim is scheduled and a UTC time (such as 2015-01-05T18:02:00Z) once the instance
// will be reclaimed; the metadata server's hardened mode first asks for a token with
// PUT /latest/api/token and the header X-aliyun-ecs-metadata-token-ttl-seconds, sent back as
// X-aliyun-ecs-metadata-token. The handler asks for a token and goes on without one if that fails,
// so it works in both modes.
//
// It needs no credentials of its own: it uses the kubelet's (/etc/kubernetes/kubelet.conf). The
// NodeRestriction admission plugin lets a kubelet update its own Node (cordon: spec.unschedulable;
// not its taints) and evict pods bound to itself, and the Node authorizer lets it list the pods
// on its node by field selector. The drain is the one the provider's drain before a stop runs
// (drain.go).

import "github.com/gpucluster/terraform-provider-gpucluster/internal/ecsmetadata"

// Paths and unit of the handler.
const (
	SpotHandlerScriptPath = "/usr/local/sbin/gpucluster-spot-interruption.sh"
	spotHandlerService    = "gpucluster-spot-interruption.service"
	// SpotMetadataPath is the vendor's reclaim notice item of the instance metadata.
	SpotMetadataPath = "/latest/meta-data/instance/spot/termination-time"
	metadataEndpoint = ecsmetadata.Endpoint
)

// spotHandlerScript polls every INTERVAL seconds. METADATA_URL, KUBECONFIG, NODE_NAME, INTERVAL
// and ONCE (one check, for tests) may be set in the environment.
var spotHandlerScript = `#!/bin/bash
# Cordons and drains this node when the instance metadata announces its spot reclaim.
# Rendered by terraform-provider-gpucluster.
set -uo pipefail
MD="${METADATA_URL:-` + metadataEndpoint + `}"
export KUBECONFIG="${KUBECONFIG:-/etc/kubernetes/kubelet.conf}"
NODE="${NODE_NAME:-$(hostname | tr '[:upper:]' '[:lower:]')}"
INTERVAL="${INTERVAL:-5}"
GRACE=90
ROUNDS=30

termination_time() {
  local token
  token=$(curl -fsS --max-time 2 -X PUT -H 'X-aliyun-ecs-metadata-token-ttl-seconds: 60' "$MD/latest/api/token" 2>/dev/null) || token=""
  if [ -n "$token" ]; then
    curl -fsS --max-time 2 -H "X-aliyun-ecs-metadata-token: $token" "$MD` + SpotMetadataPath + `" 2>/dev/null
  else
    curl -fsS --max-time 2 "$MD` + SpotMetadataPath + `" 2>/dev/null
  fi
}

` + drainFunctions + `
while true; do
  if when=$(termination_time) && [ -n "$when" ]; then
    echo "spot reclaim of $NODE announced for $when: cordon and drain"
    drain
    exit $?
  fi
  if [ -n "${ONCE:-}" ]; then exit 0; fi
  sleep "$INTERVAL"
done
`

const spotHandlerUnit = `[Unit]
Description=Cordon and drain this spot node when the instance metadata announces its reclaim
Wants=network-online.target
After=network-online.target kubelet.service
ConditionPathExists=/etc/kubernetes/kubelet.conf

[Service]
ExecStart=` + SpotHandlerScriptPath + `
Restart=on-failure
RestartSec=5

[Install]
WantedBy=multi-user.target
`

// spotHandlerFiles are the files of the handler; the bootstrap script enables the unit after
// the node joined (its kubeconfig exists from then on).
func spotHandlerFiles() []writeFile {
	return []writeFile{
		{Path: SpotHandlerScriptPath, Permissions: "0700", Owner: "root:root", Content: spotHandlerScript},
		{Path: systemdDir + spotHandlerService, Permissions: "0644", Owner: "root:root", Content: spotHandlerUnit},
	}
}

// SpotHandlerScript is the handler's script, for tests that run it.
func SpotHandlerScript() string { return spotHandlerScript }
