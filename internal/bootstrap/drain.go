package bootstrap

// Draining a node before the provider stops it (issue #34). The kubelet's graceful node shutdown
// (daytwo.go) terminates a node's pods when the machine stops, but it does not ask the API: a
// PodDisruptionBudget is not consulted, so a roll that stops the next wave as soon as the last
// one joined can take a workload's last running replica while its other replica still waits for
// the new node (seen offline: a two-replica GPU Deployment on a two-node pool ran 0 of 2 during a
// worker roll). The Eviction API is the one that honours PodDisruptionBudgets: it answers 429
// while an eviction would leave a budget short
// (https://kubernetes.io/docs/concepts/scheduling-eviction/api-eviction/).
//
// The provider holds no credentials of the cluster, so the node drains itself: the pool runs
// DrainScript on it through Cloud Assistant before the stop. It uses the kubelet's own
// credentials (/etc/kubernetes/kubelet.conf): the NodeRestriction admission plugin lets a kubelet
// update its own Node (cordon: spec.unschedulable; not its taints) and create evictions of the
// pods bound to it, and the Node authorizer lets it list the pods on its node by field selector
// (https://kubernetes.io/docs/reference/access-authn-authz/node/,
// https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#noderestriction).
// `kubectl drain` is not used: it reads every DaemonSet of the node's pods, which a kubelet may not.

import (
	"fmt"
	"time"
)

// DrainInterval is the wait between two rounds of evictions: a refused one is tried again then.
const DrainInterval = 5 * time.Second

// Exit codes of DrainScript besides 0 (drained).
const (
	// DrainExitPodsLeft: the rounds ran out with pods left, their evictions refused (a
	// PodDisruptionBudget) or not yet done; the output names them.
	DrainExitPodsLeft = 2
	// DrainExitNoAPI: the node could not cordon itself (its API server did not answer).
	DrainExitNoAPI = 3
)

// drainFunctions are the shell functions of a drain: evict one pod, and drain the node NODE in at
// most ROUNDS rounds DrainInterval apart (GRACE, when set, is each eviction's grace period in
// seconds; otherwise the pod's own). drain returns 0 once only DaemonSet and static (mirror) pods
// are left on the node, DrainExitPodsLeft when the rounds ran out (naming the pods on stderr),
// DrainExitNoAPI when the cordon failed 15 times.
var drainFunctions = fmt.Sprintf(`evict() {
  local opts=""
  if [ -n "${GRACE:-}" ]; then opts=$(printf ',"deleteOptions":{"gracePeriodSeconds":%%d}' "$GRACE"); fi
  printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"%%s","namespace":"%%s"}%%s}' "$2" "$1" "$opts" |
    kubectl create --raw "/api/v1/namespaces/$1/pods/$2/eviction" -f - >/dev/null
}

drain() {
  local round n=0 ns name owner mirror left pods p
  until kubectl cordon "$NODE"; do n=$((n+1)); if [ "$n" -ge 15 ]; then echo "node $NODE: cordon failed 15 times" >&2; return %[2]d; fi; sleep 2; done
  # Evictions a PodDisruptionBudget refuses (429) are tried again each round until the pods are
  # gone (an evicted pod stays listed for its grace period) or the rounds run out.
  for round in $(seq 0 "$ROUNDS"); do
    left=0; pods=""
    while read -r ns name owner mirror; do
      # DaemonSet pods would come back at once, and static (mirror) pods cannot be evicted.
      if [ "$owner" = DaemonSet ] || [ "$mirror" != "<none>" ]; then continue; fi
      left=$((left + 1)); pods="$pods $ns/$name"
    done < <(kubectl get pods --all-namespaces --field-selector "spec.nodeName=$NODE" --no-headers \
      -o 'custom-columns=NS:.metadata.namespace,NAME:.metadata.name,OWNER:.metadata.ownerReferences[0].kind,MIRROR:.metadata.annotations.kubernetes\.io/config\.mirror')
    if [ "$left" -eq 0 ]; then echo "node $NODE drained"; return 0; fi
    if [ "$round" -eq "$ROUNDS" ]; then break; fi
    for p in $pods; do evict "${p%%%%/*}" "${p#*/}" && echo "evicted $p"; done
    sleep %[1]d
  done
  echo "node $NODE: pods left after $ROUNDS rounds:$pods" >&2
  return %[3]d
}
`, int(DrainInterval.Seconds()), DrainExitNoAPI, DrainExitPodsLeft)

// DrainScriptMarker opens the second line of every DrainScript (the node agent recognizes it).
const DrainScriptMarker = "# gpucluster-drain:"

// DrainScript cordons node and evicts its pods through the Eviction API, as the node's kubelet,
// trying refused evictions again for at most timeout; for Cloud Assistant. Its exit code is 0
// (drained, or nothing to drain: a node that never joined has no kubelet credentials),
// DrainExitPodsLeft (the node uncordoned again) or DrainExitNoAPI.
func DrainScript(node string, timeout time.Duration) (string, error) {
	if !etcdMemberNameRE.MatchString(node) { // kubeadm names an etcd member after its node
		return "", fmt.Errorf("drain: %q is not a node name (lowercase letters, digits, '.' and '-')", node)
	}
	rounds := max(1, int(timeout/DrainInterval))
	return fmt.Sprintf(`#!/bin/bash
%s node %s before the provider stops it. Rendered by terraform-provider-gpucluster.
set -uo pipefail
export KUBECONFIG=/etc/kubernetes/kubelet.conf
NODE=%s
ROUNDS=%d
if [ ! -r "$KUBECONFIG" ]; then echo "node $NODE: no $KUBECONFIG, the node never joined: nothing to drain"; exit 0; fi
%s
drain; rc=$?
# A node kept by a budget stays in service: the provider stops nothing and the apply ends.
if [ "$rc" -eq %d ]; then kubectl uncordon "$NODE" >/dev/null 2>&1 || true; fi
exit "$rc"
`, DrainScriptMarker, node, node, rounds, drainFunctions, DrainExitPodsLeft), nil
}
