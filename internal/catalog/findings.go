package catalog

import (
	"errors"
	"fmt"
)

// Severity grades a Finding.
type Severity string

// The three severities. Errors mean the combination cannot work (or cannot meet
// a hard requirement) and exclude a candidate from selection; warnings mean it
// works but falls short of the scenario's targets; info records a fact the user
// should know (for example that the vendor does not name a GPU model).
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Finding is one result of a check: what was required, what was measured and
// what to do about it. Code is a stable, machine-readable identifier (see the
// Code* constants); Message is a one-line human summary.
type Finding struct {
	Severity    Severity
	Code        string
	Requirement string
	Measured    string
	Hint        string
	Message     string
}

// String renders the finding as "severity [code]: message (requirement; measured) hint".
func (f Finding) String() string {
	s := fmt.Sprintf("%s [%s]: %s", f.Severity, f.Code, f.Message)
	if f.Requirement != "" || f.Measured != "" {
		s += fmt.Sprintf(" (required: %s; measured: %s)", orDash(f.Requirement), orDash(f.Measured))
	}
	if f.Hint != "" {
		s += " Hint: " + f.Hint
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Finding codes. They are stable identifiers that callers may switch on.
const (
	CodeNoGPU               = "no_gpu"               // a CPU-only type used for a GPU scenario
	CodeGPUMemory           = "gpu_memory"           // GPU memory per GPU below the scenario's minimum
	CodeGPULink             = "gpu_interconnect"     // GPU-GPU bandwidth inside a node
	CodeInterNodeRDMA       = "inter_node_rdma"      // RDMA between nodes
	CodeMemoryBandwidth     = "memory_bandwidth"     // GPU memory bandwidth
	CodeFP64                = "fp64"                 // double precision throughput
	CodeECC                 = "ecc"                  // ECC memory
	CodeStability           = "stability"            // MTBF / long-run stability
	CodeModelNotStated      = "model_not_stated"     // the vendor does not name the GPU model
	CodeModelSubstitute     = "model_substitute"     // requested model not offered; a substitute is used
	CodeSeriesRequest       = "series_request"       // a bare series name (A100, V100) stands for several memory sizes
	CodeMatrixContradiction = "matrix_contradiction" // a scenario's recommended model misses the scenario's own requirements
	CodeNotRecommended      = "not_recommended"      // family offered by ticket / not recommended by the vendor
	CodeRegionLimited       = "region_limited"       // the vendor sells the family only in some regions, through sales
	CodeERDMAUnsupported    = "erdma_unsupported"    // eRDMA requested on a type without ERI
	CodeERDMADisabled       = "erdma_disabled"       // the type has ERI but eRDMA is not enabled
	CodeHPCClusterRequired  = "hpc_cluster_required" // SCC type without an HPC cluster
	CodeSpotLowLatency      = "spot_low_latency"     // spot instances in a deployment set
	CodeLowLatencyLimit     = "low_latency_limit"    // more instances than a LowLatency deployment set holds
	CodeSingleGPU           = "single_gpu"           // one GPU per node: no GPU-GPU link inside the node
	CodeRDMAKind            = "rdma_kind"            // which RDMA the type offers and how to enable it
	CodeRegionFallback      = "region_fallback"      // the region does not sell the first choice; the next is used
	CodeNetworkTarget       = "network_target"       // no candidate meets the scenario's RDMA bandwidth target between nodes
)

// Sentinel errors, wrapped by the errors this package returns so callers can
// use errors.Is.
var (
	ErrUnknownGPUModel     = errors.New("unknown GPU model")
	ErrUnknownScenario     = errors.New("unknown scenario")
	ErrUnknownInstanceType = errors.New("unknown instance type")
	ErrGPUCountNotOffered  = errors.New("GPU count per node not offered")
	ErrNoCandidate         = errors.New("no instance type fits")
	ErrInvalidDisk         = errors.New("invalid disk")
)

// HasErrors reports whether any finding has SeverityError.
func HasErrors(fs []Finding) bool { return countSeverity(fs, SeverityError) > 0 }

// Worst returns the most severe severity among fs, or "" when fs is empty.
func Worst(fs []Finding) Severity {
	switch {
	case countSeverity(fs, SeverityError) > 0:
		return SeverityError
	case countSeverity(fs, SeverityWarning) > 0:
		return SeverityWarning
	case countSeverity(fs, SeverityInfo) > 0:
		return SeverityInfo
	}
	return ""
}

func countSeverity(fs []Finding, s Severity) int {
	n := 0
	for _, f := range fs {
		if f.Severity == s {
			n++
		}
	}
	return n
}
