package provider

// This file holds what the catalog-backed data sources and functions share: the filter
// attributes and their validators, the instance type, GPU model and finding objects, and the
// conversions from internal/catalog values to Terraform values. Each Terraform type keeps its
// own file; this is only the common vocabulary, so the three data sources describe an instance
// type with the same attribute names and the same words.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
)

// usableFP64TFLOPS is the FP64 figure from which the catalog treats double precision as worth
// using: the lowest MinFP64TFLOPS of the scenarios that need FP64 (5 TFLOPS in the catalog), so
// the `fp64` filter and the scenario checks can never disagree.
func usableFP64TFLOPS() float64 {
	limit := math.Inf(1)
	for _, sc := range catalog.Scenarios() {
		if sc.NeedsFP64 && sc.MinFP64TFLOPS > 0 {
			limit = min(limit, sc.MinFP64TFLOPS)
		}
	}
	if math.IsInf(limit, 1) {
		return 5
	}
	return limit
}

// hasUsableFP64 reports whether a type's GPU has stated FP64 of at least usableFP64TFLOPS.
// A figure the vendor does not state counts as not usable: the filter promises FP64, it does
// not guess it.
func hasUsableFP64(t catalog.InstanceType) bool {
	m, ok := t.Model()
	if !ok || !m.Stated(catalog.FigureFP64) || m.FP64NotApplicable {
		return false
	}
	return m.FP64TFLOPS >= usableFP64TFLOPS()
}

// --- filters ---

// catalogFilterModel is the filter part of gpucluster_gpu_catalog and gpucluster_instance_types.
type catalogFilterModel struct {
	GPUModel       types.String `tfsdk:"gpu_model"`
	Family         types.String `tfsdk:"family"`
	MinGPUMemoryGB types.Int64  `tfsdk:"min_gpu_memory_gb"`
	MinGPUs        types.Int64  `tfsdk:"min_gpus"`
	FP64           types.Bool   `tfsdk:"fp64"`
	ERDMA          types.Bool   `tfsdk:"erdma"`
	BareMetal      types.Bool   `tfsdk:"bare_metal"`
}

// catalogFilterAttributes returns the filter attributes, described from the same slices that
// feed their validators.
func catalogFilterAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"gpu_model": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Only types whose GPU serves this model, case-insensitive, aliases accepted. Known models: " +
				mdValues(catalog.GPUModelNames()) + ". Bare `A100` and `V100` mean the whole series. Models no Alibaba family " +
				"offers map to honest substitutes (`H100` -> gn8v / ebmgn8v, `A40` -> gn8is / gn7i, `V100S` -> gn6e / gn6v), " +
				"reported in `findings`.",
			Validators: []validator.String{gpuModelValidator{}},
		},
		"family": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Only this instance family, without the `ecs.` prefix. One of " + mdValues(catalog.Families()) +
				". The CPU families are listed only when named here (control planes).",
			Validators: []validator.String{stringvalidator.OneOf(catalog.Families()...)},
		},
		"min_gpu_memory_gb": schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: "Only types with at least this much memory per GPU, in GB.",
			Validators:          []validator.Int64{int64validator.AtLeast(1)},
		},
		"min_gpus": schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: "Only types with at least this many GPUs per instance.",
			Validators:          []validator.Int64{int64validator.AtLeast(1)},
		},
		"fp64": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: fmt.Sprintf("`true`: only types whose GPU has usable double precision (a stated FP64 of at least %g TFLOPS, "+
				"the catalog's threshold for molecular dynamics and engineering simulation; not stated counts as not usable). "+
				"`false`: only types without it. Unset: both.", usableFP64TFLOPS()),
		},
		"erdma": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: "`true`: only types with elastic RDMA interfaces (eRDMA over the VPC). `false`: only types without. " +
				"Unset: both. SCC types offer RoCE instead of eRDMA, see `rdma`.",
		},
		"bare_metal": schema.BoolAttribute{
			Optional:            true,
			MarkdownDescription: "`true`: only bare-metal (`ebm*`) types. `false`: only virtual machines. Unset: both.",
		},
	}
}

// filterCatalog applies the filters to the catalog's types, in the catalog's order. Without a
// family filter naming a CPU family, only GPU types are listed. The findings are those of the
// model mapping (substitutes, series requests).
func filterCatalog(f catalogFilterModel) ([]catalog.InstanceType, []catalog.Finding, error) {
	var models []string
	var findings []catalog.Finding
	if v := f.GPUModel.ValueString(); !f.GPUModel.IsNull() && v != "" {
		mm, err := catalog.MapGPUModel(v)
		if err != nil {
			return nil, nil, err
		}
		models = mm.Models
		findings = mm.Findings
	}
	family := f.Family.ValueString()
	var out []catalog.InstanceType
	for _, t := range catalog.InstanceTypes() {
		switch {
		case family != "" && t.Family != family,
			family == "" && !t.IsGPU(),
			models != nil && !slices.Contains(models, t.GPU),
			!f.MinGPUMemoryGB.IsNull() && int64(t.GPUMemoryGB) < f.MinGPUMemoryGB.ValueInt64(),
			!f.MinGPUs.IsNull() && int64(t.GPUs) < f.MinGPUs.ValueInt64(),
			!f.FP64.IsNull() && hasUsableFP64(t) != f.FP64.ValueBool(),
			!f.ERDMA.IsNull() && t.ERI != f.ERDMA.ValueBool(),
			!f.BareMetal.IsNull() && t.BareMetal != f.BareMetal.ValueBool():
			continue
		}
		out = append(out, t)
	}
	return out, findings, nil
}

// gpuModelValidator accepts what catalog.MapGPUModel accepts, and names the known models when
// it does not, at validate time so `tofu validate` already says it.
type gpuModelValidator struct{}

var _ validator.String = gpuModelValidator{}

func (gpuModelValidator) Description(context.Context) string {
	return "must be a GPU model the catalog knows: " + strings.Join(catalog.GPUModelNames(), ", ") + " (or a bare series A100, V100)"
}

func (v gpuModelValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (gpuModelValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := catalog.MapGPUModel(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Unknown GPU model",
			fmt.Sprintf("%s: %v. Use one of the known models, spelled as listed or by an alias such as \"a100 80gb\".", req.Path, err))
	}
}

// --- instance types ---

// instanceTypeModel is one instance type as the catalog describes it. Figures the vendor does
// not state are null, never 0.
type instanceTypeModel struct {
	Name                 types.String  `tfsdk:"name"`
	Family               types.String  `tfsdk:"family"`
	VCPU                 types.Int64   `tfsdk:"vcpu"`
	MemoryGiB            types.Float64 `tfsdk:"memory_gib"`
	GPUs                 types.Int64   `tfsdk:"gpus"`
	GPUModel             types.String  `tfsdk:"gpu_model"`
	GPUVendorName        types.String  `tfsdk:"gpu_vendor_name"`
	GPUModelStated       types.Bool    `tfsdk:"gpu_model_stated"`
	GPUMemoryGB          types.Int64   `tfsdk:"gpu_memory_gb"`
	GPUMemoryMiB         types.Int64   `tfsdk:"gpu_memory_mib"`
	FP64Usable           types.Bool    `tfsdk:"fp64_usable"`
	NVLink               types.Bool    `tfsdk:"nvlink"`
	NVSwitch             types.Bool    `tfsdk:"nvswitch"`
	NVLinkGBs            types.Float64 `tfsdk:"nvlink_gbs"`
	ERI                  types.Bool    `tfsdk:"eri"`
	ERIQuantity          types.Int64   `tfsdk:"eri_quantity"`
	ERIGbps              types.Float64 `tfsdk:"eri_gbps"`
	RDMA                 types.String  `tfsdk:"rdma"`
	NetworkGbps          types.Float64 `tfsdk:"network_gbps"`
	BareMetal            types.Bool    `tfsdk:"bare_metal"`
	SCC                  types.Bool    `tfsdk:"scc"`
	RoCEGbps             types.Int64   `tfsdk:"roce_gbps"`
	GPUDirect            types.Bool    `tfsdk:"gpudirect"`
	RequiresHPCCluster   types.Bool    `tfsdk:"requires_hpc_cluster"`
	LocalNVMe            types.String  `tfsdk:"local_nvme"`
	ElasticEphemeralDisk types.Bool    `tfsdk:"elastic_ephemeral_disk"`
	MaxDiskIOPS          types.Int64   `tfsdk:"max_disk_iops"`
	MaxDiskMBps          types.Int64   `tfsdk:"max_disk_mbps"`
	AvailabilityNote     types.String  `tfsdk:"availability_note"`
	Notes                types.String  `tfsdk:"notes"`
}

func instanceTypeAttributes() map[string]schema.Attribute {
	str := func(d string) schema.Attribute { return schema.StringAttribute{Computed: true, MarkdownDescription: d} }
	i64 := func(d string) schema.Attribute { return schema.Int64Attribute{Computed: true, MarkdownDescription: d} }
	f64 := func(d string) schema.Attribute {
		return schema.Float64Attribute{Computed: true, MarkdownDescription: d}
	}
	boolean := func(d string) schema.Attribute { return schema.BoolAttribute{Computed: true, MarkdownDescription: d} }
	return map[string]schema.Attribute{
		"name":             str("Instance type as `RunInstances` takes it, with the `ecs.` prefix, such as `ecs.gn7e-c16g1.32xlarge`."),
		"family":           str("Instance family without the `ecs.` prefix, such as `gn7e`."),
		"vcpu":             i64("vCPUs."),
		"memory_gib":       f64("Instance memory in GiB."),
		"gpus":             i64("GPUs per instance; 0 for CPU types."),
		"gpu_model":        str("The catalog's GPU model (a key of `gpu_models`); an estimate of the same class where `gpu_model_stated` is false. Empty for CPU types."),
		"gpu_vendor_name":  str("The GPU as Alibaba Cloud names it, such as `model not stated (A100 80 GB class)`."),
		"gpu_model_stated": boolean("Whether Alibaba Cloud names the GPU model. When false, `gpu_model` is the datasheet model of the same class."),
		"gpu_memory_gb":    i64("Memory per GPU in GB."),
		"gpu_memory_mib":   i64("Memory per GPU as `nvidia-smi` reports it, in MiB; null where not stated."),
		"fp64_usable": boolean(fmt.Sprintf("Whether the GPU has a stated FP64 of at least %g TFLOPS (see the `fp64` filter).",
			usableFP64TFLOPS())),
		"nvlink":                 boolean("NVLink between the GPUs of an instance."),
		"nvswitch":               boolean("NVSwitch fabric between the GPUs of an instance."),
		"nvlink_gbs":             f64("Vendor-stated NVLink bandwidth in GB/s; null where not stated or without NVLink."),
		"eri":                    boolean("Elastic RDMA interfaces (eRDMA over the VPC) supported."),
		"eri_quantity":           i64("Number of elastic RDMA interfaces; null where supported but the count is not stated, or without ERI."),
		"eri_gbps":               f64("Stated eRDMA bandwidth in Gbit/s; null where not stated."),
		"rdma":                   str("RDMA between instances: `erdma` (HighPerformance ENIs over the VPC), `roce` (SCC RoCE inside an HPC cluster) or empty (none)."),
		"network_gbps":           f64("Baseline VPC bandwidth in Gbit/s; null where not stated."),
		"bare_metal":             boolean("Bare-metal (`ebm*`) type."),
		"scc":                    boolean("Super computing cluster (`scc*`) type with RoCE."),
		"roce_gbps":              i64("RoCE bandwidth of SCC types in Gbit/s; null for other types."),
		"gpudirect":              boolean("GPUDirect RDMA over RoCE."),
		"requires_hpc_cluster":   boolean("`RunInstances` needs an HPC cluster (`HpcClusterId`) for this type."),
		"local_nvme":             str("Local NVMe disks: `yes`, `no` or `not stated`."),
		"elastic_ephemeral_disk": boolean("Supports elastic ephemeral disks (`elastic_ephemeral_disk_standard|premium`, 64-8,192 GiB)."),
		"max_disk_iops":          i64("Cap on total disk IOPS of the instance; null where not stated."),
		"max_disk_mbps":          i64("Cap on total disk throughput in MB/s; null where not stated."),
		"availability_note":      str("Vendor restriction on the family, such as `by ticket, not recommended`; empty when none."),
		"notes":                  str("Further qualifications from the catalog."),
	}
}

// statedInt and statedFloat turn the catalog's "0 = not stated" into null.
func statedInt(v int) types.Int64 {
	if v == 0 {
		return types.Int64Null()
	}
	return types.Int64Value(int64(v))
}

func statedFloat(v float64) types.Float64 {
	if v == 0 {
		return types.Float64Null()
	}
	return types.Float64Value(v)
}

func newInstanceTypeModel(t catalog.InstanceType) instanceTypeModel {
	return instanceTypeModel{
		Name:                 types.StringValue(t.Name),
		Family:               types.StringValue(t.Family),
		VCPU:                 types.Int64Value(int64(t.VCPU)),
		MemoryGiB:            types.Float64Value(t.MemoryGiB),
		GPUs:                 types.Int64Value(int64(t.GPUs)),
		GPUModel:             types.StringValue(t.GPU),
		GPUVendorName:        types.StringValue(t.GPUVendorName),
		GPUModelStated:       types.BoolValue(t.GPUModelStated),
		GPUMemoryGB:          types.Int64Value(int64(t.GPUMemoryGB)),
		GPUMemoryMiB:         statedInt(t.GPUMemoryMiB),
		FP64Usable:           types.BoolValue(hasUsableFP64(t)),
		NVLink:               types.BoolValue(t.NVLink),
		NVSwitch:             types.BoolValue(t.NVSwitch),
		NVLinkGBs:            statedFloat(t.NVLinkGBs),
		ERI:                  types.BoolValue(t.ERI),
		ERIQuantity:          statedInt(t.ERIQuantity),
		ERIGbps:              statedFloat(t.ERIGbps),
		RDMA:                 types.StringValue(t.RDMA()),
		NetworkGbps:          statedFloat(t.NetworkGbps),
		BareMetal:            types.BoolValue(t.BareMetal),
		SCC:                  types.BoolValue(t.SCC),
		RoCEGbps:             statedInt(t.RoCEGbps),
		GPUDirect:            types.BoolValue(t.GPUDirect),
		RequiresHPCCluster:   types.BoolValue(t.RequiresHPCCluster),
		LocalNVMe:            types.StringValue(string(t.LocalNVMe)),
		ElasticEphemeralDisk: types.BoolValue(t.ElasticEphemeralDisk),
		MaxDiskIOPS:          statedInt(t.MaxDiskIOPS),
		MaxDiskMBps:          statedInt(t.MaxDiskMBps),
		AvailabilityNote:     types.StringValue(t.AvailabilityNote),
		Notes:                types.StringValue(t.Notes),
	}
}

// --- GPU models ---

type gpuModelModel struct {
	Name               types.String  `tfsdk:"name"`
	Aliases            []string      `tfsdk:"aliases"`
	Series             types.String  `tfsdk:"series"`
	Architecture       types.String  `tfsdk:"architecture"`
	Rank               types.Int64   `tfsdk:"rank"`
	MemoryGB           types.Int64   `tfsdk:"memory_gb"`
	MemoryType         types.String  `tfsdk:"memory_type"`
	MemoryBandwidthGBs types.Float64 `tfsdk:"memory_bandwidth_gbs"`
	FP64TFLOPS         types.Float64 `tfsdk:"fp64_tflops"`
	FP64NotApplicable  types.Bool    `tfsdk:"fp64_not_applicable"`
	FP32TFLOPS         types.Float64 `tfsdk:"fp32_tflops"`
	TensorFP16TFLOPS   types.Float64 `tfsdk:"tensor_fp16_tflops"`
	Link               types.String  `tfsdk:"link"`
	LinkGBs            types.Float64 `tfsdk:"link_gbs"`
	ECC                types.String  `tfsdk:"ecc"`
	Offered            types.Bool    `tfsdk:"offered"`
	Unstated           []string      `tfsdk:"unstated"`
	Notes              types.String  `tfsdk:"notes"`
	Source             types.String  `tfsdk:"source"`
}

func gpuModelAttributes() map[string]schema.Attribute {
	str := func(d string) schema.Attribute { return schema.StringAttribute{Computed: true, MarkdownDescription: d} }
	f64 := func(d string) schema.Attribute {
		return schema.Float64Attribute{Computed: true, MarkdownDescription: d}
	}
	figures := mdValues([]string{catalog.FigureMemoryBandwidth, catalog.FigureFP64, catalog.FigureFP32, catalog.FigureTensorFP16, catalog.FigureLink, catalog.FigureECC})
	return map[string]schema.Attribute{
		"name":                 str("Catalog key, such as `A100-80GB`; what `gpu_model` of an instance type refers to."),
		"aliases":              schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Other spellings the `gpu_model` arguments accept."},
		"series":               str("Series grouping memory variants, such as `A100`."),
		"architecture":         str("NVIDIA architecture, such as `Ampere`."),
		"rank":                 schema.Int64Attribute{Computed: true, MarkdownDescription: "1 for the newest/strongest model; selection prefers lower ranks after scenario fit. A catalog decision, not a vendor figure."},
		"memory_gb":            schema.Int64Attribute{Computed: true, MarkdownDescription: "Memory per GPU in GB."},
		"memory_type":          str("Memory technology, such as `HBM2e`; empty where not stated."),
		"memory_bandwidth_gbs": f64("Memory bandwidth per GPU in GB/s; null where not stated."),
		"fp64_tflops":          f64("Dense FP64 TFLOPS from the datasheet; null where not stated or not applicable. For A40, A10 and T4 NVIDIA publishes no FP64 figure: theirs is derived from FP32, and `notes` says how."),
		"fp64_not_applicable":  schema.BoolAttribute{Computed: true, MarkdownDescription: "The datasheet gives FP64 as n/a."},
		"fp32_tflops":          f64("Dense FP32 TFLOPS; null where not stated."),
		"tensor_fp16_tflops":   f64("Dense FP16/BF16 tensor TFLOPS; null where not stated."),
		"link":                 str("GPU-GPU link: `NVLink`, `NVLink bridge`, `PCIe Gen4` or `none`; empty where not stated."),
		"link_gbs":             f64("GPU-GPU bandwidth per GPU in GB/s; null where not stated or without a link."),
		"ecc":                  str("ECC memory: `yes`, `no` or `not stated`."),
		"offered":              schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether an Alibaba family offers this model; `H100`, `A40` and `V100S` are served by substitutes."},
		"unstated":             schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Figures the sources do not state, from " + figures + "."},
		"notes":                str("Qualifications from the datasheet."),
		"source":               str("Where the figures come from."),
	}
}

func newGPUModelModel(m catalog.GPUModel) gpuModelModel {
	figure := func(name string, v float64) types.Float64 {
		if !m.Stated(name) {
			return types.Float64Null()
		}
		return statedFloat(v)
	}
	fp64 := figure(catalog.FigureFP64, m.FP64TFLOPS)
	if m.FP64NotApplicable {
		fp64 = types.Float64Null()
	}
	return gpuModelModel{
		Name:               types.StringValue(m.Name),
		Aliases:            append([]string{}, m.Aliases...),
		Series:             types.StringValue(m.Series),
		Architecture:       types.StringValue(m.Architecture),
		Rank:               types.Int64Value(int64(m.Rank)),
		MemoryGB:           types.Int64Value(int64(m.MemoryGB)),
		MemoryType:         types.StringValue(m.MemoryType),
		MemoryBandwidthGBs: figure(catalog.FigureMemoryBandwidth, m.MemoryBandwidthGBs),
		FP64TFLOPS:         fp64,
		FP64NotApplicable:  types.BoolValue(m.FP64NotApplicable),
		FP32TFLOPS:         figure(catalog.FigureFP32, m.FP32TFLOPS),
		TensorFP16TFLOPS:   figure(catalog.FigureTensorFP16, m.TensorFP16TFLOPS),
		Link:               types.StringValue(m.Link),
		LinkGBs:            figure(catalog.FigureLink, m.LinkGBs),
		ECC:                types.StringValue(string(m.ECC)),
		Offered:            types.BoolValue(m.Offered),
		Unstated:           append([]string{}, m.Unstated...),
		Notes:              types.StringValue(m.Notes),
		Source:             types.StringValue(m.Source),
	}
}

// gpuModelsFor returns every catalog model, or with a requested model the requested one and
// the models that serve it (its substitutes or its series), best first.
func gpuModelsFor(requested types.String) ([]gpuModelModel, error) {
	var keep []string
	if v := requested.ValueString(); !requested.IsNull() && v != "" {
		mm, err := catalog.MapGPUModel(v)
		if err != nil {
			return nil, err
		}
		keep = append(keep, mm.Models...)
		if m, err := catalog.ParseGPUModel(v); err == nil && mm.Substitute {
			keep = append(keep, m.Name)
		}
	}
	out := []gpuModelModel{}
	for _, m := range catalog.GPUModels() {
		if keep == nil || slices.Contains(keep, m.Name) {
			out = append(out, newGPUModelModel(m))
		}
	}
	return out, nil
}

// --- findings ---

type findingModel struct {
	Severity    types.String `tfsdk:"severity"`
	Code        types.String `tfsdk:"code"`
	Message     types.String `tfsdk:"message"`
	Requirement types.String `tfsdk:"requirement"`
	Measured    types.String `tfsdk:"measured"`
	Hint        types.String `tfsdk:"hint"`
}

var severities = []string{string(catalog.SeverityError), string(catalog.SeverityWarning), string(catalog.SeverityInfo)}

func findingsAttribute(description string) schema.Attribute {
	return schema.ListNestedAttribute{
		Computed:            true,
		MarkdownDescription: description,
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"severity":    schema.StringAttribute{Computed: true, MarkdownDescription: "One of " + mdValues(severities) + ": error cannot work, warning works but misses the scenario's target, info is worth knowing."},
			"code":        schema.StringAttribute{Computed: true, MarkdownDescription: "Stable identifier to switch on, such as `fp64` or `model_substitute`."},
			"message":     schema.StringAttribute{Computed: true, MarkdownDescription: "One-line summary."},
			"requirement": schema.StringAttribute{Computed: true, MarkdownDescription: "What the scenario or request requires; empty when not applicable."},
			"measured":    schema.StringAttribute{Computed: true, MarkdownDescription: "What the instance type or model offers; empty when not applicable."},
			"hint":        schema.StringAttribute{Computed: true, MarkdownDescription: "What to do about it."},
		}},
	}
}

func newFindingModels(fs []catalog.Finding) []findingModel {
	out := make([]findingModel, 0, len(fs))
	for _, f := range fs {
		out = append(out, findingModel{
			Severity:    types.StringValue(string(f.Severity)),
			Code:        types.StringValue(f.Code),
			Message:     types.StringValue(f.Message),
			Requirement: types.StringValue(f.Requirement),
			Measured:    types.StringValue(f.Measured),
			Hint:        types.StringValue(f.Hint),
		})
	}
	return out
}

// findingText renders a finding without its severity, for lists already grouped by severity:
// "[code]: message (required: ...; measured: ...) Hint: ...".
func findingText(f catalog.Finding) string {
	return strings.TrimPrefix(f.String(), string(f.Severity)+" ")
}

// warningsText joins the warning findings for a warning diagnostic; "" when there are none.
func warningsText(fs []catalog.Finding) string {
	var lines []string
	for _, f := range fs {
		if f.Severity == catalog.SeverityWarning {
			lines = append(lines, "- "+f.Message+". "+f.Hint)
		}
	}
	return strings.Join(lines, "\n")
}

// catalogErrorFix adds the fix to a catalog error, by its sentinel.
func catalogErrorFix(err error) string {
	switch {
	case errors.Is(err, catalog.ErrUnknownGPUModel):
		return err.Error() + ". Set gpu_model to one of the known models."
	case errors.Is(err, catalog.ErrGPUCountNotOffered):
		return err.Error() + ". Set gpus_per_node to one of the sizes that exist, or leave it unset to let the catalog choose."
	case errors.Is(err, catalog.ErrUnknownScenario):
		return err.Error() + "."
	case errors.Is(err, catalog.ErrUnknownInstanceType):
		return err.Error() + ". Use a name from the gpucluster_gpu_catalog data source."
	case errors.Is(err, catalog.ErrNoCandidate):
		return err.Error() + ". Relax gpu_model, gpus_per_node, erdma or bare_metal."
	}
	return err.Error()
}
