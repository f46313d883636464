package catalog

import (
	"fmt"
	"sort"
	"strings"
)

// CheckOptions describes how an instance type will be deployed.
type CheckOptions struct {
	// Nodes is the node count; values below 1 are read as 1.
	Nodes int
	// HPCCluster: an HPC cluster (HpcClusterId) will be attached.
	HPCCluster bool
	// ERDMA: eRDMA (HighPerformance ENIs) will be configured.
	ERDMA bool
	// Spot: spot instances.
	Spot bool
	// LowLatencyPlacement: the nodes go into a LowLatency deployment set.
	LowLatencyPlacement bool
}

// maxLowLatencyNodes is the LowLatency deployment set limit (SOURCES.md section 4, DEPLOYSET).
const maxLowLatencyNodes = 20

// Check evaluates one instance type for a scenario and deployment. scenario may
// be "" to run only the deployment checks (eRDMA, HPC cluster, spot and
// placement), e.g. for control-plane CPU types. Findings come errors first,
// then warnings, then info. The error is for an unknown scenario or type.
//
// Scenario checks (targets from SOURCES.md section 2):
//   - GPU memory below the scenario minimum (ai_training: 80 GB): error.
//   - a CPU-only type for a GPU scenario: error.
//   - GPU-GPU bandwidth inside a multi-GPU node below the target
//     (ai_training: 400 GB/s) or not stated: warning; one GPU per node: info.
//   - memory bandwidth below the target (molecular_dynamics: 1 TB/s) or not
//     stated: warning.
//   - FP64 needed and below 5 TFLOPS, n/a or not stated: warning.
//   - more than one node, RDMA between nodes needed and the type has none:
//     warning; the type has ERI but eRDMA is off: warning.
//   - ECC needed but not stated; MTBF target; vendor not naming the GPU model:
//     info. Family offered only by ticket / not recommended: warning.
//
// Deployment checks (SOURCES.md section 4), errors: eRDMA on a type without ERI;
// an SCC type without an HPC cluster; spot instances in a LowLatency
// deployment set; more than 20 nodes in a LowLatency deployment set.
func Check(scenario string, instanceType string, opts CheckOptions) ([]Finding, error) {
	t, err := ParseInstanceType(instanceType)
	if err != nil {
		return nil, err
	}
	var sc *Scenario
	if strings.TrimSpace(scenario) != "" {
		s, err := LookupScenario(scenario)
		if err != nil {
			return nil, err
		}
		sc = &s
	}
	return check(sc, t, opts), nil
}

func check(sc *Scenario, t InstanceType, opts CheckOptions) []Finding {
	var fs []Finding
	add := func(f Finding) { fs = append(fs, f) }
	nodes := max(opts.Nodes, 1)
	m, _ := modelByName(t.GPU)
	who := fmt.Sprintf("%s (%s)", t.ShortName(), t.GPU)

	if sc != nil && !t.IsGPU() {
		add(Finding{Severity: SeverityError, Code: CodeNoGPU,
			Requirement: "GPUs", Measured: "0 GPUs (" + t.ShortName() + ")",
			Message: fmt.Sprintf("%s has no GPU; %s needs GPU nodes", t.ShortName(), sc.Name),
			Hint:    "Use a GPU family (gn6i ... ebmgn8v); g7/c7 are for control planes."})
	}
	if sc != nil && t.IsGPU() {
		fs = append(fs, scenarioFindings(*sc, t, m, nodes, opts, who)...)
	}

	// Deployment checks.
	if opts.ERDMA && !t.ERI && t.IsGPU() { // a CPU control plane carries no NCCL traffic: it simply gets no eRDMA
		f := Finding{Severity: SeverityError, Code: CodeERDMAUnsupported,
			Requirement: "EriQuantity > 0", Measured: "no ERI on " + t.ShortName(),
			Message: fmt.Sprintf("eRDMA requested but %s has no elastic RDMA interface", t.ShortName()),
			Hint:    "Turn eRDMA off, or use a family with ERI: " + strings.Join(familiesWhere(func(x InstanceType) bool { return x.ERI }), ", ") + "."}
		if t.RoCEGbps > 0 {
			f.Hint = fmt.Sprintf("%s does RDMA over RoCE (%d Gbit/s) inside its HPC cluster; turn eRDMA off.", t.Family, t.RoCEGbps)
		}
		add(f)
	}
	if t.RequiresHPCCluster && !opts.HPCCluster {
		add(Finding{Severity: SeverityError, Code: CodeHPCClusterRequired,
			Requirement: "HpcClusterId", Measured: "none",
			Message: fmt.Sprintf("%s is a super computing cluster type and cannot be launched without an HPC cluster", t.ShortName()),
			Hint:    "Create an HPC cluster (CreateHpcCluster) and pass its id, or use ebmgn7ex for A100-class RDMA over eRDMA."})
	}
	if opts.Spot && opts.LowLatencyPlacement {
		add(Finding{Severity: SeverityError, Code: CodeSpotLowLatency,
			Requirement: "no spot instances in a deployment set", Measured: "spot + LowLatency deployment set",
			Message: "Spot instances cannot join a deployment set, so low-latency placement is impossible",
			Hint:    "Use pay-as-you-go or subscription nodes, or drop low-latency placement."})
	}
	if opts.LowLatencyPlacement && nodes > maxLowLatencyNodes {
		add(Finding{Severity: SeverityError, Code: CodeLowLatencyLimit,
			Requirement: fmt.Sprintf("<= %d instances per LowLatency deployment set", maxLowLatencyNodes),
			Measured:    fmt.Sprintf("%d nodes", nodes),
			Message:     fmt.Sprintf("A LowLatency deployment set holds at most %d instances in one zone", maxLowLatencyNodes),
			Hint:        "Split the nodes into groups of at most 20, or drop low-latency placement."})
	}
	sortFindings(fs)
	return fs
}

func scenarioFindings(sc Scenario, t InstanceType, m GPUModel, nodes int, opts CheckOptions, who string) []Finding {
	var fs []Finding
	add := func(f Finding) { fs = append(fs, f) }

	if !t.GPUModelStated {
		add(Finding{Severity: SeverityInfo, Code: CodeModelNotStated,
			Measured: t.GPUVendorName,
			Message:  fmt.Sprintf("The vendor does not name the GPU of %s; the catalog uses %s figures as an estimate", t.Family, m.Name),
			Hint:     "Confirm with nvidia-smi on a running node."})
	}
	if t.AvailabilityNote != "" {
		add(Finding{Severity: SeverityWarning, Code: CodeNotRecommended,
			Requirement: "generally available family", Measured: t.Family + ": " + t.AvailabilityNote,
			Message: fmt.Sprintf("%s is offered %s", t.Family, t.AvailabilityNote),
			Hint:    "Expect a support ticket and no stock guarantee; prefer gn7i, or gn8is where the region sells it (the vendor sells gn8is only in some regions, through sales)."})
	}
	if t.RegionLimited != "" {
		add(Finding{Severity: SeverityInfo, Code: CodeRegionLimited,
			Requirement: "sold in the deployment region", Measured: t.Family + ": " + t.RegionLimited,
			Message: fmt.Sprintf("The vendor sells %s only in some regions and through sales", t.Family),
			Hint: "Check the region with the gpucluster_instance_types data source (DescribeAvailableResource) and pass its names to " +
				"gpucluster_scenario's offered_instance_types, which then falls back to a type the region sells; contact Alibaba Cloud sales before relying on it."})
	}
	if sc.MinGPUMemoryGB > 0 && t.GPUMemoryGB < sc.MinGPUMemoryGB {
		add(Finding{Severity: SeverityError, Code: CodeGPUMemory,
			Requirement: fmt.Sprintf(">= %d GB per GPU", sc.MinGPUMemoryGB),
			Measured:    fmt.Sprintf("%d GB per GPU, %s", t.GPUMemoryGB, who),
			Message:     fmt.Sprintf("%s needs at least %d GB per GPU; %s (%s) has %d GB", sc.Name, sc.MinGPUMemoryGB, t.Family, t.GPU, t.GPUMemoryGB),
			Hint:        "Use a family with enough GPU memory: " + strings.Join(familiesWhere(func(x InstanceType) bool { return x.GPUMemoryGB >= sc.MinGPUMemoryGB }), ", ") + "."})
	}
	if sc.MinGPULinkGBs > 0 {
		if t.GPUs == 1 {
			add(Finding{Severity: SeverityInfo, Code: CodeSingleGPU,
				Requirement: fmt.Sprintf(">= %s GB/s GPU-GPU", num(sc.MinGPULinkGBs)), Measured: "1 GPU per node",
				Message: fmt.Sprintf("%s has one GPU: no GPU-GPU link inside the node, all scaling goes over the network", t.ShortName()),
				Hint:    "Use an 8-GPU NVLink size for multi-GPU training."})
		} else {
			bw, how := gpuLink(t, m)
			switch {
			case bw == 0:
				add(Finding{Severity: SeverityWarning, Code: CodeGPULink,
					Requirement: fmt.Sprintf(">= %s GB/s GPU-GPU", num(sc.MinGPULinkGBs)), Measured: "not stated (" + how + ")",
					Message: fmt.Sprintf("GPU-GPU bandwidth of %s is not stated", t.ShortName()),
					Hint:    "Use an NVLink family (gn7e, gn8v, ebmgn7ex, ebmgn8v, sccgn7ex)."})
			case bw < sc.MinGPULinkGBs:
				add(Finding{Severity: SeverityWarning, Code: CodeGPULink,
					Requirement: fmt.Sprintf(">= %s GB/s GPU-GPU", num(sc.MinGPULinkGBs)), Measured: fmt.Sprintf("%s GB/s (%s)", num(bw), how),
					Message: fmt.Sprintf("GPU-GPU bandwidth of %s is below the %s target", t.ShortName(), sc.Name),
					Hint:    "Use an NVLink family with >= 600 GB/s (gn7e class, gn8v, ebmgn8v)."})
			}
		}
	}
	if sc.MinMemoryBandwidthGBs > 0 {
		req := fmt.Sprintf(">= %s GB/s memory bandwidth", num(sc.MinMemoryBandwidthGBs))
		switch {
		case !m.Stated(FigureMemoryBandwidth):
			add(Finding{Severity: SeverityWarning, Code: CodeMemoryBandwidth, Requirement: req,
				Measured: "not stated for " + who,
				Message:  fmt.Sprintf("Memory bandwidth of %s is not stated by the vendor", m.Name),
				Hint:     "Benchmark before committing, or use an A100-class or Hopper-class family."})
		case m.MemoryBandwidthGBs < sc.MinMemoryBandwidthGBs:
			add(Finding{Severity: SeverityWarning, Code: CodeMemoryBandwidth, Requirement: req,
				Measured: fmt.Sprintf("%s GB/s, %s", num(m.MemoryBandwidthGBs), who),
				Message:  fmt.Sprintf("%s memory bandwidth %s GB/s is below the %s GB/s %s needs", m.Name, num(m.MemoryBandwidthGBs), num(sc.MinMemoryBandwidthGBs), sc.Name),
				Hint:     "Use an A100-class (gn7, gn7e: 1.5-2 TB/s) or Hopper-class (gn8v: 4 TB/s) family."})
		}
	}
	if sc.NeedsFP64 {
		req := fmt.Sprintf("FP64 >= %s TFLOPS", num(sc.MinFP64TFLOPS))
		hint := "Use an A100-class (gn7, gn7e: 9.7 TFLOPS FP64) or V100 (gn6e, gn6v: 7.8) family."
		switch {
		case m.FP64NotApplicable:
			add(Finding{Severity: SeverityWarning, Code: CodeFP64, Requirement: req,
				Measured: "n/a for " + who,
				Message:  fmt.Sprintf("%s has no usable FP64 (datasheet: n/a) and %s needs double precision", m.Name, sc.Name), Hint: hint})
		case !m.Stated(FigureFP64):
			msg := fmt.Sprintf("FP64 of %s is not stated by the vendor and %s needs double precision", m.Name, sc.Name)
			if m.Series == "Hopper" {
				msg += "; the Hopper-class parts that NVIDIA sells without the H100 name (H20, H800) have about 1 TFLOPS FP64, far below H100's 34"
			}
			add(Finding{Severity: SeverityWarning, Code: CodeFP64, Requirement: req,
				Measured: "not stated for " + who, Message: msg, Hint: hint})
		case m.FP64TFLOPS < sc.MinFP64TFLOPS:
			add(Finding{Severity: SeverityWarning, Code: CodeFP64, Requirement: req,
				Measured: fmt.Sprintf("~%s TFLOPS, %s", num(m.FP64TFLOPS), who),
				Message:  fmt.Sprintf("%s FP64 (~%s TFLOPS) is too low for %s", m.Name, num(m.FP64TFLOPS), sc.Name), Hint: hint})
		}
	}
	if sc.NeedsECC {
		switch m.ECC {
		case No:
			add(Finding{Severity: SeverityWarning, Code: CodeECC, Requirement: "ECC GPU memory", Measured: "no ECC on " + m.Name,
				Message: m.Name + " has no ECC memory", Hint: "Use a GPU with ECC."})
		case Unknown:
			add(Finding{Severity: SeverityInfo, Code: CodeECC, Requirement: "ECC GPU memory", Measured: "not stated for " + m.Name,
				Message: fmt.Sprintf("ECC support of %s is not stated by the vendor", m.Name),
				Hint:    "Check with nvidia-smi -q -d ECC on a node and enable ECC before long runs."})
		}
	}
	if sc.MinMTBFHours > 0 {
		add(Finding{Severity: SeverityInfo, Code: CodeStability,
			Requirement: fmt.Sprintf("MTBF >= %d h", sc.MinMTBFHours), Measured: "not stated by the vendor",
			Message: "The vendor states no MTBF per instance type; stability cannot be checked here",
			Hint:    "Checkpoint long runs and keep software versions isolated per job."})
	}
	if nodes > 1 && sc.NeedsInterNodeRDMA {
		switch t.RDMA() {
		case "":
			add(Finding{Severity: SeverityWarning, Code: CodeInterNodeRDMA,
				Requirement: "RDMA between nodes", Measured: fmt.Sprintf("none; %s Gbit/s TCP on %s", num(t.NetworkGbps), t.ShortName()),
				Message: fmt.Sprintf("%d nodes of %s have no RDMA between them; %s scales poorly over TCP", nodes, t.ShortName(), sc.Name),
				Hint:    "Use a family with eRDMA or RoCE: " + strings.Join(familiesWhere(func(x InstanceType) bool { return x.RDMA() != "" }), ", ") + "."})
		case "erdma":
			if !opts.ERDMA {
				add(Finding{Severity: SeverityWarning, Code: CodeERDMADisabled,
					Requirement: "RDMA between nodes", Measured: "eRDMA supported but not enabled",
					Message: fmt.Sprintf("%s supports eRDMA but it is not enabled for these %d nodes", t.ShortName(), nodes),
					Hint:    "Enable eRDMA (HighPerformance ENI traffic mode) and install the eRDMA driver."})
			}
		}
	}
	return fs
}

// gpuLink returns the GPU-GPU bandwidth of a multi-GPU type in GB/s (0 when
// not stated) and where the figure comes from.
func gpuLink(t InstanceType, m GPUModel) (float64, string) {
	switch {
	case t.NVLinkGBs > 0:
		return t.NVLinkGBs, "NVLink, vendor figure"
	case t.NVLink && m.LinkGBs > 0:
		src := m.Name + " datasheet"
		if !t.GPUModelStated {
			src += ", model not stated by the vendor"
		}
		return m.LinkGBs, "NVLink, " + src
	case !t.NVLink && m.Link == "PCIe Gen4":
		return m.LinkGBs, "PCIe Gen4, no NVLink"
	case !t.NVLink && m.Link == "NVLink":
		// An NVLink-capable GPU in a family whose page is silent on NVLink (ebmgn7).
		return 0, "NVLink not stated for " + t.Family
	case !t.NVLink:
		return 0, "no NVLink, PCIe bandwidth not stated"
	}
	return 0, "NVLink bandwidth not stated"
}

func familiesWhere(pred func(InstanceType) bool) []string {
	var out []string
	for _, f := range familyNames {
		for _, t := range FamilyTypes(f) {
			if pred(t) {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

var severityOrder = map[Severity]int{SeverityError: 0, SeverityWarning: 1, SeverityInfo: 2}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool { return severityOrder[fs[i].Severity] < severityOrder[fs[j].Severity] })
}

// num formats a figure without trailing zeros and with thousands separators.
func num(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	intPart, frac, _ := strings.Cut(s, ".")
	if len(intPart) > 3 {
		var b strings.Builder
		for i, c := range intPart {
			if i > 0 && (len(intPart)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		intPart = b.String()
	}
	if frac != "" {
		return intPart + "." + frac
	}
	return intPart
}
