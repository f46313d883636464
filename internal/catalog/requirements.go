package catalog

import (
	"fmt"
	"strings"
)

// This file measures an instance type against what a scenario needs, one
// requirement at a time, with the figures on both sides. Select ranks on the
// result (missed first, then unknown) and shows it in Candidate.Reasons.

// RequirementStatus is the outcome of one requirement.
type RequirementStatus string

// Requirement outcomes. Unknown: the vendor does not publish the figure (or
// only a derived one), so the catalog cannot say.
const (
	RequirementMet     RequirementStatus = "met"
	RequirementMissed  RequirementStatus = "missed"
	RequirementUnknown RequirementStatus = "unknown"
)

// Requirement is one scenario requirement measured on one instance type.
type Requirement struct {
	// Name is what is measured, e.g. "network", "FP64".
	Name string
	// Measured is the type's figure with its unit and qualifiers, e.g.
	// "160 Gbit/s with eRDMA"; Target the scenario's, e.g. ">= 100 Gbit/s with RDMA".
	Measured string
	Target   string
	Status   RequirementStatus
}

// String renders "network 160 Gbit/s with eRDMA (target >= 100 Gbit/s with RDMA): met".
func (r Requirement) String() string {
	return fmt.Sprintf("%s %s (target %s): %s", r.Name, r.Measured, r.Target, r.Status)
}

// Requirements measures t against the scenario's requirements for a
// deployment of nodes nodes, in the order: GPU memory, GPU-GPU link, network
// and RDMA between nodes, memory bandwidth, FP64, ECC. A requirement the
// scenario does not have is left out; so is the GPU-GPU link of a one-GPU type
// and RDMA between nodes for a single node (unless the scenario sets a network
// target, which every node type is measured against).
func Requirements(sc Scenario, t InstanceType, nodes int) []Requirement {
	m, ok := t.Model()
	if !ok {
		return nil
	}
	var rs []Requirement
	add := func(name, measured, target string, st RequirementStatus) {
		rs = append(rs, Requirement{Name: name, Measured: measured, Target: target, Status: st})
	}
	if sc.MinGPUMemoryGB > 0 {
		add("GPU memory", fmt.Sprintf("%d GB per GPU", t.GPUMemoryGB), fmt.Sprintf(">= %d GB", sc.MinGPUMemoryGB),
			atLeast(float64(t.GPUMemoryGB), float64(sc.MinGPUMemoryGB)))
	}
	if sc.MinGPULinkGBs > 0 && t.GPUs > 1 {
		target := fmt.Sprintf(">= %s GB/s", num(sc.MinGPULinkGBs))
		if bw, how := gpuLink(t, m); bw > 0 {
			add("GPU-GPU link", fmt.Sprintf("%s GB/s (%s)", num(bw), how), target, atLeast(bw, sc.MinGPULinkGBs))
		} else {
			add("GPU-GPU link", how, target, RequirementUnknown)
		}
	}
	switch {
	case sc.MinNetworkGbps > 0:
		rs = append(rs, networkRequirement(t, sc.MinNetworkGbps))
	case sc.NeedsInterNodeRDMA && nodes > 1:
		if kind := rdmaLabel(t); kind != "" {
			add("RDMA between nodes", kind, "RDMA between the "+fmt.Sprint(nodes)+" nodes", RequirementMet)
		} else {
			add("RDMA between nodes", fmt.Sprintf("none (%s Gbit/s TCP)", num(t.NetworkGbps)), "RDMA between the "+fmt.Sprint(nodes)+" nodes", RequirementMissed)
		}
	}
	if sc.MinMemoryBandwidthGBs > 0 {
		target := fmt.Sprintf(">= %s GB/s", num(sc.MinMemoryBandwidthGBs))
		if v, ok := sourcedFigure(m, FigureMemoryBandwidth); ok {
			add("memory bandwidth", fmt.Sprintf("%s GB/s (%s)", num(v), m.Name), target, atLeast(v, sc.MinMemoryBandwidthGBs))
		} else {
			add("memory bandwidth", "not stated for "+m.Name, target, RequirementUnknown)
		}
	}
	if sc.NeedsFP64 {
		target := fmt.Sprintf(">= %s TFLOPS", num(sc.MinFP64TFLOPS))
		switch {
		case m.FP64NotApplicable:
			add("FP64", "n/a for "+m.Name+" (datasheet)", target, RequirementMissed)
		case !m.Stated(FigureFP64):
			add("FP64", "not stated for "+m.Name, target, RequirementUnknown)
		case m.FP64Derived != "":
			// A derived figure decides a miss only when even it falls short.
			st := RequirementUnknown
			if m.FP64TFLOPS < sc.MinFP64TFLOPS {
				st = RequirementMissed
			}
			add("FP64", fmt.Sprintf("~%s TFLOPS (%s, derived, not an NVIDIA figure)", num(m.FP64TFLOPS), m.Name), target, st)
		default:
			add("FP64", fmt.Sprintf("%s TFLOPS (%s)", num(m.FP64TFLOPS), m.Name), target, atLeast(m.FP64TFLOPS, sc.MinFP64TFLOPS))
		}
	}
	if sc.NeedsECC {
		st := map[Tristate]RequirementStatus{Yes: RequirementMet, No: RequirementMissed, Unknown: RequirementUnknown}[m.ECC]
		add("ECC", string(m.ECC)+" for "+m.Name, "ECC GPU memory", st)
	}
	return rs
}

// networkRequirement measures the RDMA bandwidth between nodes: the SCC
// RoCE fabric where the type has one, else the VPC bandwidth, which eRDMA
// traffic shares. Without RDMA the target is missed whatever the bandwidth.
func networkRequirement(t InstanceType, target float64) Requirement {
	r := Requirement{Name: "network", Target: fmt.Sprintf(">= %s Gbit/s with RDMA", num(target))}
	bw := InterNodeGbps(t)
	kind := rdmaLabel(t)
	switch {
	case bw == 0:
		r.Measured, r.Status = "bandwidth not stated", RequirementUnknown
	case kind == "":
		r.Measured, r.Status = fmt.Sprintf("%s Gbit/s, no RDMA", num(bw)), RequirementMissed
	default:
		r.Measured, r.Status = fmt.Sprintf("%s Gbit/s with %s", num(bw), kind), atLeast(bw, target)
	}
	return r
}

// InterNodeGbps is the bandwidth a type has towards other nodes in Gbit/s:
// RoCEGbps on SCC types, else the baseline VPC bandwidth (eRDMA rides on
// it). 0 when not stated.
func InterNodeGbps(t InstanceType) float64 {
	if t.RoCEGbps > 0 {
		return float64(t.RoCEGbps)
	}
	return t.NetworkGbps
}

func rdmaLabel(t InstanceType) string {
	switch t.RDMA() {
	case "erdma":
		return "eRDMA"
	case "roce":
		return "RoCE (SCC)"
	}
	return ""
}

func atLeast(v, target float64) RequirementStatus {
	if v >= target {
		return RequirementMet
	}
	return RequirementMissed
}

// sourcedFigure returns a GPU figure the vendor publishes; false where it is
// not stated, "n/a" or derived.
func sourcedFigure(m GPUModel, figure string) (float64, bool) {
	if !m.Stated(figure) {
		return 0, false
	}
	switch figure {
	case FigureMemoryBandwidth:
		return m.MemoryBandwidthGBs, m.MemoryBandwidthGBs > 0
	case FigureFP64:
		return m.FP64TFLOPS, !m.FP64NotApplicable && m.FP64Derived == "" && m.FP64TFLOPS > 0
	case FigureFP32:
		return m.FP32TFLOPS, m.FP32TFLOPS > 0
	case FigureTensorFP16:
		return m.TensorFP16TFLOPS, m.TensorFP16TFLOPS > 0
	case FigureLink:
		return m.LinkGBs, m.LinkGBs > 0
	}
	return 0, false
}

// figureLabels name the RankBy figures in Reasons.
var figureLabels = map[string]string{
	FigureTensorFP16:      "FP16/BF16 tensor %s TFLOPS per GPU",
	FigureMemoryBandwidth: "memory bandwidth %s GB/s per GPU",
	FigureFP64:            "FP64 %s TFLOPS per GPU",
	FigureFP32:            "FP32 %s TFLOPS per GPU",
	FigureLink:            "GPU-GPU link %s GB/s per GPU",
}

// rankFigures describes the RankBy figures of t's GPU for Reasons.
func rankFigures(sc Scenario, t InstanceType) string {
	m, ok := t.Model()
	if !ok || len(sc.RankBy) == 0 {
		return ""
	}
	var parts []string
	for _, f := range sc.RankBy {
		if v, ok := sourcedFigure(m, f); ok {
			parts = append(parts, fmt.Sprintf(figureLabels[f], num(v)))
		} else {
			parts = append(parts, strings.SplitN(figureLabels[f], " %s", 2)[0]+" not published")
		}
	}
	return fmt.Sprintf("ranked for %s by %s (%s; %s)", sc.Name, strings.Join(parts, ", "), m.Name, m.Source)
}

func countStatus(rs []Requirement, st RequirementStatus) int { return len(requirementNames(rs, st)) }
