package acceptance

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
)

// The script a control-plane node runs for the gate, with kubectl and the cluster's admin
// kubeconfig kubeadm writes there (/etc/kubernetes/admin.conf, on control-plane nodes only):
//
//  1. per node, a Job pinned to it (spec.nodeName, every toleration, all its GPUs): an init
//     container runs DCGM's level-2 diagnostic, `dcgmi diag -r 2 -j`, which checks the
//     deployment, PCIe and GPU memory in a few minutes
//     (https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html), with a
//     host engine of its own (`nv-hostengine -n`) from the dcgm-exporter image, which is built on
//     DCGM's datacenter-gpu-manager package (https://github.com/NVIDIA/dcgm-exporter, Dockerfile);
//     then nccl-tests' all_reduce_perf over the node's GPUs from 1 GiB to 8 GiB
//     (https://github.com/NVIDIA/nccl-tests, README: -b, -e, -f, -g);
//  2. across the pool (more than one node), the torchrun all-reduce validation of
//     internal/manifests (RenderPoolAllReduce), one pod per node on the host network;
//  3. for molecular dynamics and simulation pools, HPCG under the MPI Operator on one node and on
//     all of them, the same global problem both times (the local grid's z divided by the node
//     count), which reads FP64 sparse performance and how it scales;
//  4. one report line (ReportPrefix + JSON) assembled with python3, which every image with
//     cloud-init carries (cloud-init is Python 3: https://cloudinit.readthedocs.io/).
//
// Images come from the cluster's registry (the in-region mirror of a mainland cluster), named by
// internal/images' rule, as every add-on's are.

// Node is one node the gate checks: its instance and its Kubernetes name (kubeadm names a node
// after the guest's host name, lowercased).
type Node struct {
	InstanceID string
	Name       string
}

// Options are what the script needs of the pool.
type Options struct {
	PoolID string
	// GPUs is the GPUs per node, all of them given to each node's Job.
	GPUs  int
	Nodes []Node
	// MPI runs the HPCG scaling check (molecular dynamics and engineering simulation).
	MPI bool
	// ImageRegistry is the registry the cluster's images are pulled from ("" is upstream).
	ImageRegistry string
	// PoolAllReduceYAML is the cross-node all-reduce validation (manifests.RenderPoolAllReduce
	// for the pool's nodes, in Namespace), applied when there is more than one node.
	PoolAllReduceYAML string
}

// reportAssembler turns the Jobs' output into the report line (python3 on the node).
//
//go:embed assemble.py
var reportAssembler string

// Namespace holds the gate's Jobs; the script deletes what it created when it ends.
const Namespace = "gpucluster-acceptance"

// MarkerLine is the script's second line: what says a Cloud Assistant command is the gate's.
const MarkerLine = "# gpucluster-acceptance: the acceptance checks of a GPU pool's new nodes"

var (
	poolIDRE   = regexp.MustCompile(`^np-[0-9a-z]+$`)
	instanceRE = regexp.MustCompile(`^i-[0-9a-z]+$`)
	nodeNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)
)

// Script renders the gate's script for o; an error for a value a script line cannot take.
func Script(o Options) (string, error) {
	if !poolIDRE.MatchString(o.PoolID) {
		return "", fmt.Errorf("pool id %q is not one of the provider's (np-...)", o.PoolID)
	}
	if o.GPUs < 1 || len(o.Nodes) == 0 {
		return "", fmt.Errorf("pool %s: %d GPUs per node, %d nodes: nothing to check", o.PoolID, o.GPUs, len(o.Nodes))
	}
	pairs := make([]string, len(o.Nodes))
	for i, n := range o.Nodes {
		if !instanceRE.MatchString(n.InstanceID) || !nodeNameRE.MatchString(n.Name) {
			return "", fmt.Errorf("node %q of instance %q: not a name a script line takes unquoted", n.Name, n.InstanceID)
		}
		pairs[i] = n.InstanceID + "=" + n.Name
	}
	if strings.Contains(o.PoolAllReduceYAML, "\nEOF_ALLREDUCE") {
		return "", fmt.Errorf("the all-reduce manifest holds the here-document's end marker")
	}
	mpi := "none"
	if o.MPI {
		mpi = "hpcg"
	}
	var b strings.Builder
	err := scriptTemplate.Execute(&b, map[string]any{
		"Marker": MarkerLine, "Pool": o.PoolID, "GPUs": o.GPUs, "MPI": mpi, "Nodes": strings.Join(pairs, " "),
		"Registry": o.ImageRegistry, "Namespace": Namespace, "ReportPrefix": ReportPrefix,
		"DCGMImage": images.RefIn(images.DCGMExporter, o.ImageRegistry), "NCCLImage": images.RefIn(images.NCCLTests, o.ImageRegistry),
		"HPCGImage": images.RefIn(images.HPCG, o.ImageRegistry), "AllReduce": o.PoolAllReduceYAML,
	})
	return b.String(), err
}

var scriptTemplate = template.Must(template.New("acceptance").Parse(`#!/bin/bash
{{.Marker}}. Rendered by terraform-provider-gpucluster, which runs it through Cloud Assistant on a
# control-plane node and reads the report line it prints. It measures; the provider judges.
set -uo pipefail
export KUBECONFIG=/etc/kubernetes/admin.conf
pool={{.Pool}}
gpus={{.GPUs}}
mpi={{.MPI}}
nodes='{{.Nodes}}'
image_registry={{.Registry}}
ns={{.Namespace}}
work=$(mktemp -d)
trap 'kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1; rm -rf "$work"' EXIT
# A control-plane node made in the same apply may still be in kubeadm init: wait for its API,
# and stop when it never answers (every node would fail, and none is to blame).
ready=
for _ in $(seq 180); do kubectl get --raw=/readyz >/dev/null 2>&1 && { ready=1; break; }; sleep 5; done
if [ -z "$ready" ]; then
  echo "gpucluster-acceptance: the cluster's API server did not answer on this node in 15 minutes:"
  kubectl get --raw=/readyz 2>&1
  exit 1
fi
kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f - >/dev/null

# The nodes join on their own schedule: wait for each to register (kubectl wait fails at once on
# a node that does not exist yet), then to be Ready, 15 minutes in all; a node that is not has its
# Job stay Pending, and says why below.
deadline=$((SECONDS + 900))
for pair in $nodes; do
  until kubectl get node "${pair#*=}" >/dev/null 2>&1 || [ "$SECONDS" -ge "$deadline" ]; do sleep 5; done
  kubectl wait --for=condition=Ready --timeout=$((deadline > SECONDS ? deadline - SECONDS : 1))s "node/${pair#*=}" >/dev/null 2>&1 || true
done

# 1. Each node: DCGM's level-2 diagnostic, then all_reduce_perf over its GPUs.
for pair in $nodes; do
  id=${pair%%=*} node=${pair#*=}
  cat <<EOF_JOB | kubectl apply -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: check-$id, namespace: $ns, labels: {gpucluster.io/pool: $pool}}
spec:
  backoffLimit: 0
  activeDeadlineSeconds: 1500
  template:
    spec:
      nodeName: $node
      restartPolicy: Never
      tolerations: [{operator: Exists}]
      initContainers:
      - name: dcgm
        image: {{.DCGMImage}}
        securityContext: {capabilities: {add: [SYS_ADMIN]}}
        command: [/bin/bash, -c, 'nv-hostengine -n >/dev/null 2>&1 & sleep 5; dcgmi diag -r 2 -j >/tmp/d.json; c=\$?; echo "dcgm-exit: \$c"; tr -d "\n" </tmp/d.json; echo']
        resources: {limits: {nvidia.com/gpu: "$gpus"}}
      containers:
      - name: nccl
        image: {{.NCCLImage}}
        command: [/bin/bash, -c, 'if [ "$gpus" -gt 1 ]; then all_reduce_perf -b 1G -e 8G -f 2 -g $gpus; fi']
        resources: {limits: {nvidia.com/gpu: "$gpus"}}
EOF_JOB
done
for pair in $nodes; do
  id=${pair%%=*}
  kubectl -n "$ns" wait --for=condition=complete --timeout=1500s "job/check-$id" >/dev/null 2>&1 ||
    kubectl -n "$ns" describe "job/check-$id" >"$work/$id.why" 2>&1
  kubectl -n "$ns" logs "job/check-$id" -c dcgm >"$work/$id.dcgm" 2>&1
  kubectl -n "$ns" logs "job/check-$id" -c nccl >"$work/$id.nccl" 2>&1
done

# 2. Across the pool: the torchrun all-reduce, one pod per node.
count=$(echo $nodes | wc -w)
if [ "$count" -gt 1 ]; then
  cat <<'EOF_ALLREDUCE' | kubectl apply -f - >"$work/pool.apply" 2>&1
{{.AllReduce}}
EOF_ALLREDUCE
  kubectl -n "$ns" wait --for=condition=complete --timeout=1500s job/nccl-all-reduce-pool >/dev/null 2>&1
  kubectl -n "$ns" logs job/nccl-all-reduce-pool >"$work/pool.nccl" 2>&1
fi

# 3. FP64 MPI scaling: HPCG on one node, then on every node, the same global problem.
if [ "$mpi" = hpcg ] && [ "$count" -gt 1 ]; then
  for n in 1 "$count"; do
    cat <<EOF_MPI | kubectl apply -f - >>"$work/mpi.apply" 2>&1
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: hpcg-$n, namespace: $ns}
spec:
  slotsPerWorker: $gpus
  runPolicy: {cleanPodPolicy: Running}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          tolerations: [{operator: Exists}]
          containers:
          - name: launcher
            image: {{.HPCGImage}}
            command: [/bin/bash, -c, 'cd /workspace && mpirun --allow-run-as-root -np $((n * gpus)) ./hpcg.sh --nx 256 --ny 256 --nz $((256 / n)) --rt 60 && cat HPCG-Benchmark*.txt']
    Worker:
      replicas: $n
      template:
        spec:
          tolerations: [{operator: Exists}]
          containers:
          - name: worker
            image: {{.HPCGImage}}
            resources: {limits: {nvidia.com/gpu: "$gpus"}}
EOF_MPI
    kubectl -n "$ns" wait --for=condition=Succeeded --timeout=1200s "mpijob/hpcg-$n" >/dev/null 2>&1
    kubectl -n "$ns" logs "job/hpcg-$n-launcher" >"$work/hpcg-$n.log" 2>&1 ||
      kubectl -n "$ns" logs -l training.kubeflow.org/job-name=hpcg-$n,training.kubeflow.org/job-role=launcher >"$work/hpcg-$n.log" 2>&1
  done
fi

# 4. The report.
POOL=$pool GPUS=$gpus MPI=$mpi NODES="$nodes" WORK=$work python3 - <<'EOF_REPORT'
` + reportAssembler + `EOF_REPORT
`))
