// Package gpuhealthagent is the GPU health agent that runs on every GPU node (issue #33): it
// reads the node's GPU state as dcgm-exporter serves it, judges each GPU's last XID by the table
// of internal/health, and acts on the node through the Kubernetes API:
//
//   - a Node condition, GPUUnhealthy, True with the worst XID's code as its reason and every
//     failing GPU in its message, False once the GPUs are sound again (a problem condition, the
//     convention node-problem-detector's conditions follow: True means the problem is there);
//   - a NoSchedule taint, gpucluster.io/gpu-unhealthy=<reset|replace>, so nothing new lands on the
//     node, and removed when the GPUs recover. The agent never cordons (spec.unschedulable): a
//     person's cordon is theirs, and recovering never undoes it;
//   - the node's GPU pods evicted through the Eviction API, so PodDisruptionBudgets hold: an
//     eviction a budget refuses (429) is retried at the next round, never forced. A NoExecute taint
//     would have the kubelet delete them without asking the budgets, which is why the taint is
//     NoSchedule;
//   - for a GPU no reset mends (XID 79, 64: health.ActionReplace) the annotation
//     gpucluster.io/replace-requested, the request for a new instance that the node's pool acts on.
//
// The request is acted on by a Replacer once the node's GPU pods have gone: InstanceReplacer,
// signing with the node's instance RAM role from the metadata service, has Auto Scaling replace an
// autoscaled pool's instance (ESSReplacer) and tags a fixed pool's instance for its next apply
// (TagReplacer).
package gpuhealthagent
