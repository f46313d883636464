// Package acceptance is the GPU pool's acceptance gate (issue #33): the checks a pool's new nodes
// pass before the apply hands them over, the script a control-plane node runs for them, the
// report it prints, and the verdict the provider reaches on it with internal/health's floors.
//
// How the results leave the cluster: the provider holds no credentials of the cluster, so it
// runs the script through Cloud Assistant on a running node of the control-plane pool (as it runs
// kubeadm upgrade apply and the etcd member removal, internal/nodepool) and reads the report from
// the invocation's output (DescribeInvocationResults). The script holds measurements only, never a
// verdict: the floors are the provider's, so a node is judged by the same figures whatever
// script version measured it.
package acceptance

// ReportPrefix starts the one line of the script's output that holds the report, as JSON.
// Everything else the script prints (kubectl's progress, a Job's log on failure) is context.
const ReportPrefix = "gpucluster-acceptance-report: "

// Report is what one run of the script measured on a pool's new nodes.
type Report struct {
	// Pool is the gpucluster_node_pool id the nodes belong to.
	Pool  string       `json:"pool"`
	Nodes []NodeResult `json:"nodes"`
	// AllReduce is nccl-tests' all_reduce_perf over every GPU of the nodes, launched by MPI
	// across them; nil for a one-node run.
	AllReduce *AllReduce `json:"all_reduce,omitempty"`
	// MPI is the strong-scaling run of an FP64 MPI benchmark (molecular dynamics and engineering
	// simulation pools); nil when not asked for or for one node.
	MPI *MPIScaling `json:"mpi,omitempty"`
}

// NodeResult is one node's checks.
type NodeResult struct {
	InstanceID string `json:"instance_id"`
	Node       string `json:"node"`
	// Error is why the node's checks did not run (the node is not Ready, its Job never started);
	// the node then fails.
	Error string `json:"error,omitempty"`
	DCGM  DCGM   `json:"dcgm"`
	// AllReduce is all_reduce_perf over the node's own GPUs; nil for a one-GPU node.
	AllReduce *AllReduce `json:"all_reduce,omitempty"`
}

// DCGM is dcgmi diag's outcome on the node: its level (2: PCIe, GPU memory and the links, a few
// minutes), its exit status, and the names of the tests that failed as its JSON output names them.
type DCGM struct {
	Level    int      `json:"level"`
	ExitCode int      `json:"exit_code"`
	Failed   []string `json:"failed,omitempty"`
	Detail   string   `json:"detail,omitempty"`
}

// AllReduce is what all_reduce_perf printed for its largest message: nccl-tests' algbw and busbw
// (health.URLNCCLTestsPerformance) in GB/s, or why it failed.
type AllReduce struct {
	Ranks    int     `json:"ranks"`
	Bytes    int64   `json:"bytes"`
	AlgBWGBs float64 `json:"algbw_gbs,omitempty"`
	BusBWGBs float64 `json:"busbw_gbs,omitempty"`
	Error    string  `json:"error,omitempty"`
}

// MPIScaling is one FP64 MPI benchmark run on one node (the baseline) and on all the nodes, the
// same problem both times (strong scaling): health.ParallelEfficiency reads the two times.
type MPIScaling struct {
	Benchmark   string  `json:"benchmark"`
	BaseNodes   int     `json:"base_nodes"`
	BaseSeconds float64 `json:"base_seconds"`
	Nodes       int     `json:"nodes"`
	Seconds     float64 `json:"seconds"`
	// FP64GFlops is the benchmark's own figure on all the nodes, reported, not judged.
	FP64GFlops float64 `json:"fp64_gflops,omitempty"`
	Error      string  `json:"error,omitempty"`
}
