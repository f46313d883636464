package catalog

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// GPUModels returns every GPU model, best first (by Rank). The result is a
// copy; callers may modify it.
func GPUModels() []GPUModel {
	out := make([]GPUModel, len(gpuModels))
	for i, m := range gpuModels {
		out[i] = cloneModel(m)
	}
	return out
}

// GPUModelNames returns the catalog keys of every GPU model, best first.
func GPUModelNames() []string {
	out := make([]string, len(gpuModels))
	for i, m := range gpuModels {
		out[i] = m.Name
	}
	return out
}

func cloneModel(m GPUModel) GPUModel {
	m.Aliases = slices.Clone(m.Aliases)
	m.Unstated = slices.Clone(m.Unstated)
	return m
}

// InstanceTypes returns every instance type, GPU and CPU, in the catalog's
// family order (SOURCES.md section 1) and the family's size order.
func InstanceTypes() []InstanceType { return slices.Clone(instanceTypes) }

// GPUInstanceTypes returns the instance types that have GPUs.
func GPUInstanceTypes() []InstanceType {
	var out []InstanceType
	for _, t := range instanceTypes {
		if t.IsGPU() {
			out = append(out, t)
		}
	}
	return out
}

// CPUInstanceTypes returns the general-purpose types without GPUs (g7, c7),
// meant for control planes; Select never returns them.
func CPUInstanceTypes() []InstanceType {
	var out []InstanceType
	for _, t := range instanceTypes {
		if !t.IsGPU() {
			out = append(out, t)
		}
	}
	return out
}

// Families returns every family name (GPU families first, then the CPU
// families g7 and c7), in table order.
func Families() []string { return slices.Clone(familyNames) }

// FamilyTypes returns the instance types of one family, in size order, or nil.
func FamilyTypes(family string) []InstanceType {
	var out []InstanceType
	for _, t := range instanceTypes {
		if t.Family == strings.ToLower(strings.TrimSpace(family)) {
			out = append(out, t)
		}
	}
	return out
}

// Scenarios returns the scenario profiles.
func Scenarios() []Scenario {
	out := make([]Scenario, len(scenarios))
	for i, s := range scenarios {
		out[i] = cloneScenario(s)
	}
	return out
}

// ScenarioNames returns the scenario names, in a fixed order.
func ScenarioNames() []string {
	out := make([]string, len(scenarios))
	for i, s := range scenarios {
		out[i] = s.Name
	}
	return out
}

func cloneScenario(s Scenario) Scenario {
	s.Precision = slices.Clone(s.Precision)
	s.RecommendedModels = slices.Clone(s.RecommendedModels)
	s.Other = slices.Clone(s.Other)
	return s
}

// LookupScenario returns the named scenario (case-insensitive; '-' and ' '
// are read as '_'). The error lists the known names.
func LookupScenario(name string) (Scenario, error) {
	n := strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(strings.TrimSpace(name)))
	for _, s := range scenarios {
		if s.Name == n {
			return cloneScenario(s), nil
		}
	}
	return Scenario{}, planerr.New("scenario", name, "is not a scenario", "set scenario to one of "+strings.Join(ScenarioNames(), ", "),
		fmt.Errorf("%w %q: known scenarios are %s", ErrUnknownScenario, name, strings.Join(ScenarioNames(), ", ")))
}

// LookupInstanceType finds an instance type by name, with or without the
// "ecs." prefix, case-insensitively.
func LookupInstanceType(name string) (InstanceType, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if !strings.HasPrefix(n, "ecs.") {
		n = "ecs." + n
	}
	i, ok := typeIndex[n]
	if !ok {
		return InstanceType{}, false
	}
	return instanceTypes[i], true
}

// ParseInstanceType is LookupInstanceType with an error that lists the sizes
// of the family the name seems to belong to, or the known families.
func ParseInstanceType(name string) (InstanceType, error) {
	if t, ok := LookupInstanceType(name); ok {
		return t, nil
	}
	short := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(name)), "ecs.")
	fam, _, _ := strings.Cut(short, ".")
	fam, _, _ = strings.Cut(fam, "-")
	if ts := FamilyTypes(fam); len(ts) > 0 {
		names := make([]string, len(ts))
		for i, t := range ts {
			names[i] = t.Name
		}
		return InstanceType{}, planerr.New("instance_type", name, "is not a size of family "+fam, "use one of "+strings.Join(names, ", "),
			fmt.Errorf("%w %q: family %s has %s", ErrUnknownInstanceType, name, fam, strings.Join(names, ", ")))
	}
	return InstanceType{}, planerr.New("instance_type", name, "belongs to no known GPU family", "use a type of one of the families "+strings.Join(familyNames, ", "),
		fmt.Errorf("%w %q: known families are %s", ErrUnknownInstanceType, name, strings.Join(familyNames, ", ")))
}

// normModel folds a GPU model spelling: lower case, no "nvidia"/"tesla"
// prefix, no spaces, '-' or '_'.
func normModel(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, p := range []string{"nvidia", "tesla"} {
		s = strings.TrimSpace(strings.TrimPrefix(s, p))
	}
	return strings.NewReplacer(" ", "", "-", "", "_", "").Replace(s)
}

// ParseGPUModel resolves a model name or alias case-insensitively, ignoring
// spaces, '-', '_' and an "NVIDIA" prefix ("a100-80gb", "A100 80GB", "h100",
// "v100s", "l20"). A bare series name picks the series' largest-memory part:
// "A100" -> A100-80GB, "V100" -> V100-32GB, "Hopper" -> Hopper-96GB (Select,
// InstanceTypeFor and MapGPUModel treat bare "A100" and "V100" as the whole
// series instead). The error lists the known models.
func ParseGPUModel(s string) (GPUModel, error) {
	n := normModel(s)
	if n != "" {
		for _, m := range gpuModels {
			if normModel(m.Name) == n {
				return cloneModel(m), nil
			}
			for _, a := range m.Aliases {
				if normModel(a) == n {
					return cloneModel(m), nil
				}
			}
		}
	}
	return GPUModel{}, planerr.New("gpu_model", s, "is not a GPU model the catalog knows", "set gpu_model to one of "+strings.Join(GPUModelNames(), ", "),
		fmt.Errorf("%w %q: known models are %s (bare A100 and V100 mean the whole series)",
			ErrUnknownGPUModel, s, strings.Join(GPUModelNames(), ", ")))
}

func modelByName(name string) (GPUModel, bool) {
	for _, m := range gpuModels {
		if m.Name == name {
			return m, true
		}
	}
	return GPUModel{}, false
}

// ModelMapping says which catalog GPU models and instance families serve a
// requested GPU model, and what the user must be told about it.
type ModelMapping struct {
	// Requested is the canonical request: a model name, or "A100" / "V100"
	// for a whole series.
	Requested string
	// Models are the catalog models that serve the request, best first.
	Models []string
	// Families serve the request, in preference order.
	Families []string
	// Substitute is true when no family offers the requested model itself.
	Substitute bool
	// Findings: warnings for substitutes, info for series requests.
	Findings []Finding
}

// seriesRequests are bare series names that stand for several memory sizes
// (SOURCES.md section 1, "Requested models with no family of that name": A100 -> gn7 (40 GB)
// and the 80 GB families).
var seriesRequests = map[string][]string{
	"a100": {"A100-80GB", "A100-40GB"},
	"v100": {"V100-32GB", "V100-16GB"},
}

// substitutes maps models no family offers to honest substitutes (SOURCES.md
// section 1, "Requested models with no family of that name").
var substitutes = map[string]struct {
	models []string
	f      Finding
}{
	"H100": {[]string{"Hopper-96GB"}, Finding{
		Severity: SeverityWarning, Code: CodeModelSubstitute,
		Requirement: "H100 (FP64 34 TFLOPS, 80 GB HBM3, 3.35 TB/s)",
		Measured:    "gn8v / ebmgn8v: Hopper-class 96 GB HBM3, 4 TB/s, NVLink 900 GB/s; model, FP64 and tensor throughput not stated by the vendor",
		Message:     "No Alibaba family offers H100; gn8v / ebmgn8v offer a Hopper-class 96 GB GPU for which the vendor publishes no FP64 or tensor throughput",
		Hint: "The vendor positions gn8v for large language model inference and small and medium-scale training. For training on published " +
			"figures or for double precision, choose an A100-class family (ebmgn7ex, gn7e, sccgn7ex; NVIDIA's A100 datasheet: 312 TFLOPS FP16/BF16 tensor, 9.7 TFLOPS FP64).",
	}},
	"A40": {[]string{"L20", "A10"}, Finding{
		Severity: SeverityWarning, Code: CodeModelSubstitute,
		Requirement: "A40 (48 GB GDDR6, 696 GB/s, FP64 ~0.59 TFLOPS)",
		Measured:    "gn8is: L20 48 GB, 864 GB/s, FP64 n/a; gn7i: A10 24 GB, 600 GB/s, FP64 ~0.98 TFLOPS (derived from FP32, not an NVIDIA figure)",
		Message:     "No Alibaba family offers A40; gn8is (L20) or gn7i (A10) is used instead, and neither has FP64 worth using",
		Hint:        "For double precision choose an A100-class family (gn7, gn7e) or V100 (gn6e).",
	}},
	"V100S": {[]string{"V100-32GB", "V100-16GB"}, Finding{
		Severity: SeverityWarning, Code: CodeModelSubstitute,
		Requirement: "V100S PCIe (32 GB, 1,134 GB/s, FP64 8.2 TFLOPS)",
		Measured:    "gn6e: V100 SXM2 32 GB, 900 GB/s, FP64 7.8 TFLOPS; then gn6v: V100 SXM2 16 GB",
		Message:     "No Alibaba family offers V100S; gn6e (V100 SXM2 32 GB) is used, then gn6v (16 GB)",
		Hint:        "Expect about 20% less memory bandwidth than V100S; gn6v halves the GPU memory.",
	}},
}

// MapGPUModel resolves a requested GPU model to the catalog models and
// families that serve it. Models with no family of that name map to honest
// substitutes with a warning: H100 -> gn8v / ebmgn8v (FP64 far below H100),
// A40 -> gn8is (L20) then gn7i (A10), V100S -> gn6e then gn6v. Bare "A100"
// means gn7e / ebmgn7e / ebmgn7ex / sccgn7ex (80 GB) then gn7 (40 GB).
func MapGPUModel(s string) (ModelMapping, error) {
	var mm ModelMapping
	if ms, ok := seriesRequests[normModel(s)]; ok {
		mm.Requested = strings.ToUpper(normModel(s))
		mm.Models = slices.Clone(ms)
		mm.Findings = append(mm.Findings, Finding{
			Severity: SeverityInfo, Code: CodeSeriesRequest,
			Message: fmt.Sprintf("%s stands for the whole series: %s", mm.Requested, strings.Join(ms, ", ")),
			Hint:    fmt.Sprintf("Request %s to pin the memory size.", strings.Join(ms, " or ")),
		})
	} else {
		m, err := ParseGPUModel(s)
		if err != nil {
			return ModelMapping{}, err
		}
		mm.Requested = m.Name
		if sub, ok := substitutes[m.Name]; ok {
			mm.Substitute = true
			mm.Models = slices.Clone(sub.models)
			mm.Findings = append(mm.Findings, sub.f)
		} else {
			mm.Models = []string{m.Name}
		}
	}
	for _, name := range mm.Models {
		for _, f := range families {
			if f.t.GPU == name {
				mm.Families = append(mm.Families, f.t.Family)
			}
		}
	}
	return mm, nil
}

// gpuCounts lists, per family serving the models, the GPU counts offered.
func gpuCounts(models []string) string {
	var parts []string
	for _, f := range families {
		if f.t.GPU == "" || !slices.Contains(models, f.t.GPU) {
			continue
		}
		seen := map[int]bool{}
		var counts []int
		for _, t := range FamilyTypes(f.t.Family) {
			if !seen[t.GPUs] {
				seen[t.GPUs] = true
				counts = append(counts, t.GPUs)
			}
		}
		sort.Ints(counts)
		cs := make([]string, len(counts))
		for i, c := range counts {
			cs[i] = fmt.Sprint(c)
		}
		parts = append(parts, fmt.Sprintf("%s: %s", f.t.Family, strings.Join(cs, ", ")))
	}
	return strings.Join(parts, "; ")
}
