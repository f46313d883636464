package catalog

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// SelectRequest asks for instance types for a scenario.
type SelectRequest struct {
	// Scenario is required: one of ScenarioNames().
	Scenario string
	// GPUModel optionally restricts the GPU (anything ParseGPUModel accepts,
	// or a bare series "A100" / "V100"); substitutes apply, see MapGPUModel.
	GPUModel string
	// GPUsPerNode optionally fixes the GPU count per node (0 = any).
	GPUsPerNode int
	// RequireERDMA keeps only types with RDMA between nodes: ERI > 0
	// (eRDMA) or SCC RoCE. Candidate.EnableERDMA says whether to turn
	// eRDMA on; for RoCE types it stays off.
	RequireERDMA bool
	// RequireBareMetal keeps only bare-metal (ebm*) types.
	RequireBareMetal bool
	// Nodes is the planned node count (values below 1 are read as 1); with
	// more than one node, types without RDMA get a warning where the
	// scenario needs RDMA between nodes.
	Nodes int
}

// Candidate is one ranked instance type.
type Candidate struct {
	InstanceType InstanceType
	// Rank is 1 for the best candidate.
	Rank int
	// Reasons explain the rank, most important first.
	Reasons []string
	// Findings are the Check results under the deployment Select assumes
	// (see Select); they hold no errors.
	Findings []Finding
	// EnableERDMA: configure eRDMA (HighPerformance ENIs) on these nodes.
	EnableERDMA bool
	// NeedsHPCCluster: the type needs an HPC cluster (HpcClusterId).
	NeedsHPCCluster bool
}

// Select returns the instance types that fit a request, best first, the
// findings about the request itself (model substitutes, the scenario's selection matrix
// contradicting the scenario's requirements) and an error for an unknown
// scenario or model, a GPU count the model is not offered with (the error
// lists the counts that exist) or no fitting type (the error says why).
// On ErrNoCandidate the findings also hold the errors that excluded the types.
//
// Filters, in order: GPU types only (g7/c7 never); the requested model's
// families (MapGPUModel); GPUsPerNode; RequireBareMetal; RequireERDMA (ERI
// or SCC RoCE). Each remaining type is checked as Check would with:
// Nodes from the request, an HPC cluster provided for SCC types, and eRDMA
// enabled where the type has ERI and eRDMA is required or the scenario needs
// RDMA between several nodes. Types with an error finding are excluded.
//
// Ranking, each key breaking ties of the one before:
//  1. scenario fit: fewer warnings first;
//  2. newer/better GPU first (GPUModel.Rank: H100, Hopper-96GB, A100-80GB,
//     A100-40GB, L20, A40, A10, A30, V100S, V100-32GB, V100-16GB, T4);
//  3. GPU count closest to the target: GPUsPerNode if set, else the
//     scenario's PreferredGPUsPerNode (8 for ai_training), else 1;
//  4. less over-provisioning: fewer vCPUs, then less memory;
//  5. instance type name, so the order is deterministic.
func Select(req SelectRequest) ([]Candidate, []Finding, error) {
	sc, err := LookupScenario(req.Scenario)
	if err != nil {
		return nil, nil, err
	}
	nodes := max(req.Nodes, 1)
	var reqFindings []Finding
	var models []string
	what := sc.Name
	if strings.TrimSpace(req.GPUModel) != "" {
		mm, err := MapGPUModel(req.GPUModel)
		if err != nil {
			return nil, nil, err
		}
		models = mm.Models
		what += " with " + mm.Requested
		reqFindings = append(reqFindings, mm.Findings...)
		reqFindings = append(reqFindings, matrixFindings(sc, mm.Requested)...)
	}
	if req.GPUsPerNode < 0 {
		return nil, reqFindings, fmt.Errorf("%w: gpus per node must be positive, got %d", ErrGPUCountNotOffered, req.GPUsPerNode)
	}

	pool := filterTypes(func(t InstanceType) bool {
		return t.IsGPU() && (models == nil || slices.Contains(models, t.GPU))
	})
	if req.GPUsPerNode > 0 {
		pool = filter(pool, func(t InstanceType) bool { return t.GPUs == req.GPUsPerNode })
		if len(pool) == 0 {
			ms := models
			if ms == nil {
				ms = GPUModelNames()
			}
			return nil, reqFindings, fmt.Errorf("%w: %s offered with %d GPUs per node; sizes that exist (GPUs per node by family): %s",
				ErrGPUCountNotOffered, modelLabel(what, sc.Name), req.GPUsPerNode, gpuCounts(ms))
		}
	}
	var filters []string
	if req.RequireBareMetal {
		pool = filter(pool, func(t InstanceType) bool { return t.BareMetal })
		filters = append(filters, "bare metal")
	}
	if req.RequireERDMA {
		pool = filter(pool, func(t InstanceType) bool { return t.RDMA() != "" })
		filters = append(filters, "eRDMA or RoCE")
	}
	if len(pool) == 0 {
		return nil, reqFindings, fmt.Errorf("%w %s: no type is %s; %s", ErrNoCandidate, what, strings.Join(filters, " and "), alternatives(req))
	}

	var cands []Candidate
	var excluded []Finding
	for _, t := range pool {
		erdma := t.ERI && (req.RequireERDMA || (nodes > 1 && sc.NeedsInterNodeRDMA))
		fs := check(&sc, t, CheckOptions{Nodes: nodes, HPCCluster: t.RequiresHPCCluster, ERDMA: erdma})
		if HasErrors(fs) {
			for _, f := range fs {
				if f.Severity == SeverityError && !slices.ContainsFunc(excluded, func(e Finding) bool { return e.Code == f.Code && e.Message == f.Message }) {
					excluded = append(excluded, f)
				}
			}
			continue
		}
		cands = append(cands, Candidate{InstanceType: t, Findings: fs, EnableERDMA: erdma, NeedsHPCCluster: t.RequiresHPCCluster})
	}
	if len(cands) == 0 {
		var why []string
		for _, f := range excluded {
			why = append(why, f.Message)
		}
		return nil, append(reqFindings, excluded...), fmt.Errorf("%w %s: %s; %s", ErrNoCandidate, what, strings.Join(dedupe(why), "; "), alternatives(req))
	}

	target := req.GPUsPerNode
	if target == 0 {
		target = max(sc.PreferredGPUsPerNode, 1)
	}
	sort.SliceStable(cands, func(i, j int) bool { return less(cands[i], cands[j], target) })
	for i := range cands {
		cands[i].Rank = i + 1
		cands[i].Reasons = reasons(cands[i], sc, req, target, nodes)
	}
	return cands, reqFindings, nil
}

// less orders candidates by the ranking documented on Select (keys 1-5).
func less(a, b Candidate, target int) bool {
	wa, wb := countSeverity(a.Findings, SeverityWarning), countSeverity(b.Findings, SeverityWarning)
	if wa != wb {
		return wa < wb
	}
	return lessType(a.InstanceType, b.InstanceType, target)
}

// lessType orders by GPU rank, GPU count distance from target, vCPUs,
// memory and name.
func lessType(a, b InstanceType, target int) bool {
	ra, rb := modelRank(a.GPU), modelRank(b.GPU)
	if ra != rb {
		return ra < rb
	}
	da, db := abs(a.GPUs-target), abs(b.GPUs-target)
	if da != db {
		return da < db
	}
	if a.VCPU != b.VCPU {
		return a.VCPU < b.VCPU
	}
	if a.MemoryGiB != b.MemoryGiB {
		return a.MemoryGiB < b.MemoryGiB
	}
	return a.Name < b.Name
}

func reasons(c Candidate, sc Scenario, req SelectRequest, target, nodes int) []string {
	t := c.InstanceType
	var rs []string
	var warns []string
	for _, f := range c.Findings {
		if f.Severity == SeverityWarning {
			warns = append(warns, f.Code)
		}
	}
	if len(warns) == 0 {
		rs = append(rs, fmt.Sprintf("meets every %s requirement the catalog can check (no warnings)", sc.Name))
	} else {
		rs = append(rs, fmt.Sprintf("falls short of %s on %d point(s): %s", sc.Name, len(warns), strings.Join(warns, ", ")))
	}
	gpu := fmt.Sprintf("GPU %s (rank %d of %d), %d GB per GPU", t.GPU, modelRank(t.GPU), len(gpuModels), t.GPUMemoryGB)
	if !t.GPUModelStated {
		gpu += "; vendor: " + t.GPUVendorName
	}
	rs = append(rs, gpu)
	switch {
	case req.GPUsPerNode > 0:
		rs = append(rs, fmt.Sprintf("%d GPUs per node as requested", t.GPUs))
	case sc.PreferredGPUsPerNode > 0:
		rs = append(rs, fmt.Sprintf("%d GPUs per node (%s prefers %d)", t.GPUs, sc.Name, target))
	default:
		rs = append(rs, fmt.Sprintf("%d GPUs per node (smallest sizes first)", t.GPUs))
	}
	rs = append(rs, fmt.Sprintf("%d vCPU, %s GiB memory, %s Gbit/s network", t.VCPU, num(t.MemoryGiB), num(t.NetworkGbps)))
	switch t.RDMA() {
	case "erdma":
		if c.EnableERDMA {
			rs = append(rs, "eRDMA enabled (HighPerformance ENI)")
		} else {
			rs = append(rs, "eRDMA available, not needed for this request")
		}
	case "roce":
		rs = append(rs, fmt.Sprintf("RDMA over RoCE %d Gbit/s; needs an HPC cluster (HpcClusterId), no eRDMA", t.RoCEGbps))
	default:
		if nodes > 1 {
			rs = append(rs, "no RDMA between nodes")
		}
	}
	if t.BareMetal {
		rs = append(rs, "bare metal")
	}
	return rs
}

// InstanceTypeFor returns the best instance type for a GPU model and GPU
// count, scenario-neutral: the model's families (substitutes included, see
// MapGPUModel) with exactly gpusPerNode GPUs, ranked by GPU rank, then fewer
// vCPUs, less memory and name. The error lists the GPU counts that exist.
func InstanceTypeFor(gpuModel string, gpusPerNode int) (InstanceType, error) {
	mm, err := MapGPUModel(gpuModel)
	if err != nil {
		return InstanceType{}, err
	}
	pool := filterTypes(func(t InstanceType) bool { return slices.Contains(mm.Models, t.GPU) && t.GPUs == gpusPerNode })
	if len(pool) == 0 {
		return InstanceType{}, fmt.Errorf("%w: %s is not offered with %d GPUs per node; sizes that exist (GPUs per node by family): %s",
			ErrGPUCountNotOffered, mm.Requested, gpusPerNode, gpuCounts(mm.Models))
	}
	sort.SliceStable(pool, func(i, j int) bool { return lessType(pool[i], pool[j], gpusPerNode) })
	return pool[0], nil
}

// matrixFindings warns when the scenario's selection matrix recommends the requested model
// for the scenario but the model's own datasheet misses the requirements.
func matrixFindings(sc Scenario, requested string) []Finding {
	if !slices.ContainsFunc(sc.RecommendedModels, func(r string) bool { return normModel(r) == normModel(requested) }) {
		return nil
	}
	m, err := ParseGPUModel(requested)
	if err != nil {
		return nil
	}
	var short []string
	if sc.MinGPUMemoryGB > 0 && m.MemoryGB < sc.MinGPUMemoryGB {
		short = append(short, fmt.Sprintf("%d GB < %d GB per GPU", m.MemoryGB, sc.MinGPUMemoryGB))
	}
	if sc.MinMemoryBandwidthGBs > 0 && m.Stated(FigureMemoryBandwidth) && m.MemoryBandwidthGBs < sc.MinMemoryBandwidthGBs {
		short = append(short, fmt.Sprintf("memory bandwidth %s GB/s < %s GB/s", num(m.MemoryBandwidthGBs), num(sc.MinMemoryBandwidthGBs)))
	}
	if sc.NeedsFP64 && m.Stated(FigureFP64) && (m.FP64NotApplicable || m.FP64TFLOPS < sc.MinFP64TFLOPS) {
		short = append(short, fmt.Sprintf("FP64 ~%s TFLOPS < %s TFLOPS", num(m.FP64TFLOPS), num(sc.MinFP64TFLOPS)))
	}
	if len(short) == 0 {
		return nil
	}
	return []Finding{{Severity: SeverityWarning, Code: CodeMatrixContradiction,
		Requirement: requirementSummary(sc), Measured: m.Name + ": " + strings.Join(short, "; "),
		Message: fmt.Sprintf("The scenario's selection matrix recommends %s for %s, but %s misses the scenario's own requirements", requested, sc.Name, m.Name),
		Hint:    "Treat the matrix entry as a budget option, or pick a model that meets the requirements (A100 class for FP64 and >= 1 TB/s)."}}
}

func requirementSummary(sc Scenario) string {
	var rs []string
	if sc.MinGPUMemoryGB > 0 {
		rs = append(rs, fmt.Sprintf(">= %d GB per GPU", sc.MinGPUMemoryGB))
	}
	if sc.MinMemoryBandwidthGBs > 0 {
		rs = append(rs, fmt.Sprintf(">= %s GB/s memory bandwidth", num(sc.MinMemoryBandwidthGBs)))
	}
	if sc.NeedsFP64 {
		rs = append(rs, fmt.Sprintf("FP64 >= %s TFLOPS", num(sc.MinFP64TFLOPS)))
	}
	return strings.Join(rs, ", ")
}

// alternatives names what would fit the scenario with the request's other
// constraints but any GPU model.
func alternatives(req SelectRequest) string {
	if strings.TrimSpace(req.GPUModel) == "" {
		return "no instance type in the catalog fits; relax the constraints"
	}
	alt := req
	alt.GPUModel = ""
	cs, _, err := Select(alt)
	if err != nil {
		return "no other GPU model fits these constraints either"
	}
	var fams []string
	for _, c := range cs {
		fams = append(fams, c.InstanceType.Family+" ("+c.InstanceType.GPU+")")
	}
	return "families that fit: " + strings.Join(dedupe(fams), ", ")
}

func modelLabel(what, scenario string) string {
	if what == scenario {
		return "no GPU model is"
	}
	return strings.TrimPrefix(what, scenario+" with ") + " is not"
}

func modelRank(name string) int {
	if m, ok := modelByName(name); ok {
		return m.Rank
	}
	return len(gpuModels) + 1
}

func filterTypes(pred func(InstanceType) bool) []InstanceType { return filter(instanceTypes, pred) }

func filter(ts []InstanceType, pred func(InstanceType) bool) []InstanceType {
	var out []InstanceType
	for _, t := range ts {
		if pred(t) {
			out = append(out, t)
		}
	}
	return out
}

func dedupe(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
