package catalog

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
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
	// Availability, when set, is what the deployment region sells; types
	// it does not list are no candidates. nil: the whole catalog.
	Availability *RegionAvailability
}

// RegionAvailability lists the instance types a region sells, as the
// region itself answers (DescribeAvailableResource, through the
// gpucluster_instance_types data source).
type RegionAvailability struct {
	// Region names the region in messages, as a phrase: "region
	// cn-wulanchabu", "the deployment region".
	Region string
	// InstanceTypes the region sells, with or without the "ecs." prefix.
	InstanceTypes []string
}

func (a *RegionAvailability) offers(name string) bool {
	return slices.ContainsFunc(a.InstanceTypes, func(n string) bool {
		n = strings.ToLower(strings.TrimSpace(n))
		return n == name || "ecs."+n == name
	})
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
	// Requirements measures the type against each scenario requirement
	// (see Requirements); Reasons shows them.
	Requirements []Requirement
}

// Select returns the instance types that fit a request, best first, the
// findings about the request itself (model substitutes, the scenario's recommended
// models contradicting the scenario's requirements) and an error for an unknown
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
// Ranking, each key breaking ties of the one before; every key but the
// last three is a figure or a finding, never the catalog's opinion of a GPU:
//  1. fewer scenario requirements missed (Requirements: GPU memory, GPU-GPU
//     link, network and RDMA between nodes, memory bandwidth, FP64, ECC);
//  2. fewer requirements whose figure the vendor does not publish;
//  3. fewer warnings in the findings;
//  4. the scenario's RankBy figures (tensor throughput for training, FP64
//     for the double-precision scenarios, then memory bandwidth): higher
//     first, a published figure before an unpublished, derived or n/a one;
//  5. more memory per GPU;
//  6. the catalog's model order (GPUModel.Rank);
//  7. GPU count closest to the target: GPUsPerNode if set, else the
//     scenario's PreferredGPUsPerNode (8 for ai_training), else 1;
//  8. general-purpose before confidential computing (gn8v-tee);
//  9. less over-provisioning: fewer vCPUs, then less memory;
//  10. virtualised before bare metal, then the name, so the order is
//     deterministic.
//
// With Availability set, the ranking runs over the whole catalog first; types
// the region does not sell are then dropped, and when that drops the first
// choice a region_fallback finding names it and the new first candidate's
// Reasons say so. When the first candidate misses the scenario's network
// target, a network_target finding says that no candidate meets it.
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
		return nil, reqFindings, planerr.New("gpus_per_node", strconv.Itoa(req.GPUsPerNode), "must be positive", "set gpus_per_node to 1 or more, or leave it unset",
			fmt.Errorf("%w: gpus per node must be positive, got %d", ErrGPUCountNotOffered, req.GPUsPerNode))
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
			return nil, reqFindings, planerr.New("gpus_per_node", strconv.Itoa(req.GPUsPerNode), "no instance type has that many GPUs for this model",
				"set gpus_per_node to a size that exists ("+gpuCounts(ms)+"), or leave it unset",
				fmt.Errorf("%w: %s offered with %d GPUs per node; sizes that exist (GPUs per node by family): %s",
					ErrGPUCountNotOffered, modelLabel(what, sc.Name), req.GPUsPerNode, gpuCounts(ms)))
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
		alt := alternatives(req)
		return nil, reqFindings, planerr.New("gpu_model", req.GPUModel, "no type of this model is "+strings.Join(filters, " and "), alt,
			fmt.Errorf("%w %s: no type is %s; %s", ErrNoCandidate, what, strings.Join(filters, " and "), alt))
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
		cands = append(cands, Candidate{InstanceType: t, Findings: fs, EnableERDMA: erdma, NeedsHPCCluster: t.RequiresHPCCluster,
			Requirements: Requirements(sc, t, nodes)})
	}
	if len(cands) == 0 {
		var why []string
		for _, f := range excluded {
			why = append(why, f.Message)
		}
		alt := alternatives(req)
		return nil, append(reqFindings, excluded...), planerr.New("gpu_model", req.GPUModel, strings.Join(dedupe(why), "; "), alt,
			fmt.Errorf("%w %s: %s; %s", ErrNoCandidate, what, strings.Join(dedupe(why), "; "), alt))
	}

	target := req.GPUsPerNode
	if target == 0 {
		target = max(sc.PreferredGPUsPerNode, 1)
	}
	sort.SliceStable(cands, func(i, j int) bool { return less(cands[i], cands[j], sc, target) })
	var fallback string
	if a := req.Availability; a != nil {
		first := cands[0].InstanceType
		offered := slices.DeleteFunc(slices.Clone(cands), func(c Candidate) bool { return !a.offers(c.InstanceType.Name) })
		if len(offered) == 0 {
			why := fmt.Sprintf("%s sells none of the %d types that fit %s (first choice %s)", a.Region, len(cands), what, first.ShortName())
			fix := "deploy in a region that sells one of them (gpucluster_instance_types lists what a region sells), or relax gpu_model / gpus_per_node"
			return nil, reqFindings, planerr.New("offered_instance_types", strings.Join(a.InstanceTypes, ","), why, fix,
				fmt.Errorf("%w %s: %s; %s", ErrNoCandidate, what, why, fix))
		}
		if offered[0].InstanceType.Name != first.Name {
			fallback = fmt.Sprintf("%s does not sell the first choice %s; falling back to %s, the best type it sells", a.Region, first.ShortName(), offered[0].InstanceType.ShortName())
			reqFindings = append(reqFindings, Finding{Severity: SeverityWarning, Code: CodeRegionFallback,
				Requirement: "sold in " + a.Region, Measured: first.ShortName() + " not sold there",
				Message: "The first choice for " + what + ", " + first.ShortName() + ", is not sold in " + a.Region + "; the selection falls back to " + offered[0].InstanceType.ShortName(),
				Hint:    "Compare the two candidates' reasons; deploy in a region that sells " + first.ShortName() + " to get it."})
		}
		cands = offered
	}
	for i := range cands {
		cands[i].Rank = i + 1
		cands[i].Reasons = reasons(cands[i], sc, req, target, nodes)
	}
	if fallback != "" {
		cands[0].Reasons = append([]string{fallback}, cands[0].Reasons...)
	}
	if f, ok := networkShortfall(sc, cands[0], what); ok {
		reqFindings = append(reqFindings, f)
	}
	return cands, reqFindings, nil
}

// networkShortfall is the finding that the best candidate, and so every
// candidate, misses the scenario's network target.
func networkShortfall(sc Scenario, best Candidate, what string) (Finding, bool) {
	for _, r := range best.Requirements {
		if r.Name == "network" && r.Status != RequirementMet {
			return Finding{Severity: SeverityWarning, Code: CodeNetworkTarget,
				Requirement: r.Target, Measured: best.InstanceType.ShortName() + ": " + r.Measured,
				Message: fmt.Sprintf("No candidate for %s meets the %s target of %s Gbit/s with RDMA between nodes; the best, %s, has %s",
					what, sc.Name, num(sc.MinNetworkGbps), best.InstanceType.ShortName(), r.Measured),
				Hint: "Drop the constraints that exclude them (gpus_per_node, gpu_model, the region) to reach types with eRDMA at 100 Gbit/s or more " +
					"(" + strings.Join(familiesWhere(func(x InstanceType) bool { return x.RDMA() != "" && InterNodeGbps(x) >= sc.MinNetworkGbps }), ", ") + ")."}, true
		}
	}
	return Finding{}, false
}

// less orders candidates by the ranking documented on Select (keys 1-5; then lessType).
func less(a, b Candidate, sc Scenario, target int) bool {
	for _, st := range []RequirementStatus{RequirementMissed, RequirementUnknown} {
		if na, nb := countStatus(a.Requirements, st), countStatus(b.Requirements, st); na != nb {
			return na < nb
		}
	}
	if wa, wb := countSeverity(a.Findings, SeverityWarning), countSeverity(b.Findings, SeverityWarning); wa != wb {
		return wa < wb
	}
	ma, _ := a.InstanceType.Model()
	mb, _ := b.InstanceType.Model()
	for _, f := range sc.RankBy {
		va, oka := sourcedFigure(ma, f)
		vb, okb := sourcedFigure(mb, f)
		if oka != okb {
			return oka
		}
		if oka && va != vb {
			return va > vb
		}
	}
	if a.InstanceType.GPUMemoryGB != b.InstanceType.GPUMemoryGB {
		return a.InstanceType.GPUMemoryGB > b.InstanceType.GPUMemoryGB
	}
	return lessType(a.InstanceType, b.InstanceType, target)
}

// lessType orders by the catalog's model order, GPU count distance from
// target, general-purpose before confidential computing, vCPUs, memory,
// virtualised before bare metal, and name (keys 6-10 of Select).
func lessType(a, b InstanceType, target int) bool {
	ra, rb := modelRank(a.GPU), modelRank(b.GPU)
	if ra != rb {
		return ra < rb
	}
	da, db := abs(a.GPUs-target), abs(b.GPUs-target)
	if da != db {
		return da < db
	}
	if a.ConfidentialComputing != b.ConfidentialComputing {
		return !a.ConfidentialComputing
	}
	if a.VCPU != b.VCPU {
		return a.VCPU < b.VCPU
	}
	if a.MemoryGiB != b.MemoryGiB {
		return a.MemoryGiB < b.MemoryGiB
	}
	if a.BareMetal != b.BareMetal {
		return !a.BareMetal
	}
	return a.Name < b.Name
}

func reasons(c Candidate, sc Scenario, req SelectRequest, target, nodes int) []string {
	t := c.InstanceType
	var rs []string
	missed, unknown := requirementNames(c.Requirements, RequirementMissed), requirementNames(c.Requirements, RequirementUnknown)
	switch {
	case len(missed) == 0 && len(unknown) == 0:
		rs = append(rs, fmt.Sprintf("meets every %s requirement the catalog measures (%d)", sc.Name, len(c.Requirements)))
	case len(missed) == 0:
		rs = append(rs, fmt.Sprintf("meets the %s requirements with published figures; not stated: %s", sc.Name, strings.Join(unknown, ", ")))
	default:
		s := fmt.Sprintf("misses %d of %d %s requirements: %s", len(missed), len(c.Requirements), sc.Name, strings.Join(missed, ", "))
		if len(unknown) > 0 {
			s += "; not stated: " + strings.Join(unknown, ", ")
		}
		rs = append(rs, s)
	}
	for _, r := range c.Requirements {
		rs = append(rs, r.String())
	}
	if s := rankFigures(sc, t); s != "" {
		rs = append(rs, s)
	}
	var warns []string
	for _, f := range c.Findings {
		if f.Severity == SeverityWarning {
			warns = append(warns, f.Code)
		}
	}
	if len(warns) > 0 {
		rs = append(rs, "warnings: "+strings.Join(warns, ", "))
	}
	gpu := fmt.Sprintf("GPU %s, %d GB per GPU", t.GPU, t.GPUMemoryGB)
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
	if t.ConfidentialComputing {
		rs = append(rs, "confidential computing (TEE): ranked after general-purpose types")
	}
	return rs
}

// requirementNames lists the names of the requirements with status st.
func requirementNames(rs []Requirement, st RequirementStatus) []string {
	var out []string
	for _, r := range rs {
		if r.Status == st {
			out = append(out, r.Name)
		}
	}
	return out
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
		return InstanceType{}, planerr.New("gpus_per_node", strconv.Itoa(gpusPerNode), mm.Requested+" is not offered with that many GPUs per node",
			"use a size that exists ("+gpuCounts(mm.Models)+")",
			fmt.Errorf("%w: %s is not offered with %d GPUs per node; sizes that exist (GPUs per node by family): %s",
				ErrGPUCountNotOffered, mm.Requested, gpusPerNode, gpuCounts(mm.Models)))
	}
	sort.SliceStable(pool, func(i, j int) bool { return lessType(pool[i], pool[j], gpusPerNode) })
	return pool[0], nil
}

// matrixFindings warns when the scenario's recommended models include the requested model
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
		Message: fmt.Sprintf("The scenario's recommended models include %s for %s, but %s misses the scenario's own requirements", requested, sc.Name, m.Name),
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
