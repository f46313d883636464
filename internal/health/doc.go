// Package health holds the thresholds of the GPU fleet's acceptance gate (issue #33) as data
// with their sources, and pure functions over them, so the gate's workflow, the node agent's
// model of the hardware (internal/emulator/nodeagent, gpuhealth.go) and the tests judge a node by
// the same figures:
//
//   - busbw.go: the all-reduce bus bandwidth floor of a pool, from the catalog's interconnect
//     (NVLink or PCIe inside a node, the eRDMA/RoCE/VPC bandwidth between nodes) and nccl-tests'
//     bus bandwidth definition;
//   - efficiency.go: the MPI parallel-efficiency target of a scenario, read from
//     internal/catalog's scenario table;
//   - xid.go: which NVIDIA XID errors an application recovers from, which a GPU reset clears,
//     and which mean the instance is replaced.
//
// The package knows no Terraform type and does no I/O; the gate's checks and verdict are
// internal/acceptance's, its workflow (run the checks, replace a failed node, check again)
// internal/nodepool's acceptance.go.
package health
