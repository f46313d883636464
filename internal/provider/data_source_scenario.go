package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
)

var _ datasource.DataSource = (*scenarioDataSource)(nil)

func newScenarioDataSource() datasource.DataSource { return &scenarioDataSource{} }

// scenarioDataSource turns a research scenario (and optionally a GPU model, a GPU count, eRDMA,
// bare metal and a node count) into the scenario's requirements and ranked instance types, from
// the catalog alone (catalog.Select). Offline, like gpucluster_gpu_catalog.
type scenarioDataSource struct{}

func (d *scenarioDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_scenario"
}

func (d *scenarioDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := joinAttributes(scenarioQueryAttributes(), scenarioAnswerAttributes())
	resp.Schema = schema.Schema{
		MarkdownDescription: "Requirements of a research scenario and the instance types that meet them, ranked, with the findings " +
			"that explain each. Offline: computed from the provider's catalog, no API call; pass `offered_instance_types` from " +
			"`gpucluster_instance_types` to limit it to what the region sells. Ranking: fewer scenario requirements missed " +
			"(GPU memory, GPU-GPU link, 100 Gbit/s RDMA between nodes for `ai_training`, memory bandwidth, FP64, ECC), then fewer " +
			"whose figure the vendor does not publish, then fewer warnings, then the scenario's published figures (FP16/BF16 tensor " +
			"throughput for training, FP64 for the others, then memory bandwidth; an unpublished or derived figure ranks last), then " +
			"the GPU count closest to the target (`gpus_per_node`, else 8 for `ai_training`, else the smallest size), then fewer " +
			"vCPUs and less memory. `why` and each candidate's `reasons` show every requirement met, missed or unknown with the figures.",
		Attributes: attrs,
	}
}

// scenarioQueryAttributes: what the scenario is asked for (scenario, GPU, node shape, count).
func scenarioQueryAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"name": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "Scenario. One of " + mdValues(catalog.ScenarioNames()) + ".",
			Validators:          []validator.String{stringvalidator.OneOf(catalog.ScenarioNames()...)},
		},
		"gpu_model": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Restrict to this GPU model, case-insensitive, aliases accepted. Known models: " +
				mdValues(catalog.GPUModelNames()) + ". Bare `A100` and `V100` mean the whole series; `H100`, `A40` and `V100S` " +
				"map to substitutes with a warning in `findings`.",
			Validators: []validator.String{gpuModelValidator{}},
		},
		"gpus_per_node": schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: "Restrict to types with exactly this many GPUs. Unset: any size.",
			Validators:          []validator.Int64{int64validator.AtLeast(1)},
		},
		"erdma": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: "`true`: only types with RDMA between nodes (eRDMA, or RoCE on SCC types); eRDMA is then enabled " +
				"on the candidates that have it. `false` or unset: no restriction.",
		},
		"bare_metal": schema.BoolAttribute{
			Optional:            true,
			MarkdownDescription: "`true`: only bare-metal (`ebm*`) types. `false` or unset: no restriction.",
		},
		"offered_instance_types": schema.ListAttribute{
			Optional:    true,
			ElementType: types.StringType,
			MarkdownDescription: "Instance types the deployment region sells, as the region answers: typically " +
				"`data.gpucluster_instance_types.<name>.names` (with `in_stock_only = true` for what is in stock now). Set: only these " +
				"are candidates, and when the catalog's first choice is not among them the next one is recommended with a " +
				"`region_fallback` finding and a line in `why`. Unset: the whole catalog.",
		},
		"node_count": schema.Int64Attribute{
			Optional: true,
			MarkdownDescription: "Planned number of nodes, default 1. With more than one node, scenarios that need RDMA between " +
				"nodes warn about types without it, and eRDMA is enabled on types that have it.",
			Validators: []validator.Int64{int64validator.AtLeast(1)},
		},
	}
}

// scenarioAnswerAttributes: what the catalog answers (requirements, candidates, findings, the recommendation).
func scenarioAnswerAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"requirements": schema.SingleNestedAttribute{
			Computed:            true,
			MarkdownDescription: "The scenario's requirements as the catalog checks them.",
			Attributes: map[string]schema.Attribute{
				"title":                    scenarioComputedString("Short title."),
				"description":              scenarioComputedString("What the scenario is."),
				"min_gpu_memory_gb":        schema.Int64Attribute{Computed: true, MarkdownDescription: "Minimum memory per GPU in GB; below it is an error. Null: no minimum."},
				"min_gpu_link_gbs":         schema.Float64Attribute{Computed: true, MarkdownDescription: "GPU-GPU bandwidth target inside a node in GB/s; below it is a warning. Null: no target."},
				"min_memory_bandwidth_gbs": schema.Float64Attribute{Computed: true, MarkdownDescription: "GPU memory bandwidth target in GB/s; below it is a warning. Null: no target."},
				"needs_fp64":               schema.BoolAttribute{Computed: true, MarkdownDescription: "Double precision required."},
				"min_fp64_tflops":          schema.Float64Attribute{Computed: true, MarkdownDescription: "FP64 TFLOPS below which double precision counts as not worth using. Null when FP64 is not needed."},
				"precision":                scenarioComputedList("Precisions the workload uses."),
				"needs_ecc":                schema.BoolAttribute{Computed: true, MarkdownDescription: "ECC GPU memory required."},
				"needs_inter_node_rdma":    schema.BoolAttribute{Computed: true, MarkdownDescription: "Multi-node runs need RDMA between nodes."},
				"min_parallel_efficiency":  schema.Float64Attribute{Computed: true, MarkdownDescription: "Stated parallel efficiency target (fraction); not measurable by the catalog. Null: none."},
				"min_mtbf_hours":           schema.Int64Attribute{Computed: true, MarkdownDescription: "Stated stability target (MTBF hours); not measurable by the catalog. Null: none."},
				"recommended_models":       scenarioComputedList("The GPU models recommended for the scenario; where it contradicts the requirements, `findings` says so."),
				"preferred_gpus_per_node":  schema.Int64Attribute{Computed: true, MarkdownDescription: "GPU count ranking aims for when `gpus_per_node` is unset. Null: the smallest size."},
				"gpu_util_alert_percent":   schema.Int64Attribute{Computed: true, MarkdownDescription: "Alert when GPU utilisation falls below this percentage."},
				"other":                    scenarioComputedList("Requirements the catalog does not check (storage, network plan, software versions)."),
			},
		},
		"candidates": schema.ListNestedAttribute{
			Computed: true,
			MarkdownDescription: "Instance types that can work, best first. Types with an error finding are left out, and so are types " +
				"`offered_instance_types` does not list when it is set.",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"instance_type":     scenarioComputedString("Instance type, with the `ecs.` prefix."),
				"rank":              schema.Int64Attribute{Computed: true, MarkdownDescription: "1 for the best candidate."},
				"family":            scenarioComputedString("Instance family."),
				"gpu_model":         scenarioComputedString("Catalog GPU model of the type."),
				"gpus":              schema.Int64Attribute{Computed: true, MarkdownDescription: "GPUs per node."},
				"gpu_memory_gb":     schema.Int64Attribute{Computed: true, MarkdownDescription: "Memory per GPU in GB."},
				"enable_erdma":      schema.BoolAttribute{Computed: true, MarkdownDescription: "Configure eRDMA (HighPerformance ENIs) on these nodes."},
				"needs_hpc_cluster": schema.BoolAttribute{Computed: true, MarkdownDescription: "The type needs an HPC cluster (`HpcClusterId`)."},
				"reasons":           scenarioComputedList("Why the type ranks where it does, most important first."),
				"findings":          findingsAttribute("Check results for this type under the deployment described by `enable_erdma` and `needs_hpc_cluster`; warnings and info only."),
			}},
		},
		"findings": findingsAttribute("Findings about the request itself: model substitutes (such as gn8v for H100), series requests, " +
			"the scenario's recommended models contradicting its own requirements, a `region_fallback` when the region does not sell " +
			"the first choice, and a `network_target` warning when no candidate meets the scenario's RDMA bandwidth target between nodes."),
		"recommended_instance_type": scenarioComputedString("The first candidate's instance type."),
		"why": scenarioComputedList("Why `recommended_instance_type` was chosen: the regional fallback when there was one, each scenario " +
			"requirement met, missed or unknown with the figures (e.g. `network 160 Gbit/s with eRDMA (target >= 100 Gbit/s with " +
			"RDMA): met`), the published figures it was ranked on, and the rest of its `reasons`."),
	}
}

type scenarioModel struct {
	Name                    types.String       `tfsdk:"name"`
	GPUModel                types.String       `tfsdk:"gpu_model"`
	GPUsPerNode             types.Int64        `tfsdk:"gpus_per_node"`
	ERDMA                   types.Bool         `tfsdk:"erdma"`
	BareMetal               types.Bool         `tfsdk:"bare_metal"`
	NodeCount               types.Int64        `tfsdk:"node_count"`
	OfferedInstanceTypes    []string           `tfsdk:"offered_instance_types"`
	Requirements            *requirementsModel `tfsdk:"requirements"`
	Candidates              []candidateModel   `tfsdk:"candidates"`
	Findings                []findingModel     `tfsdk:"findings"`
	RecommendedInstanceType types.String       `tfsdk:"recommended_instance_type"`
	Why                     []string           `tfsdk:"why"`
}

type requirementsModel struct {
	Title                 types.String  `tfsdk:"title"`
	Description           types.String  `tfsdk:"description"`
	MinGPUMemoryGB        types.Int64   `tfsdk:"min_gpu_memory_gb"`
	MinGPULinkGBs         types.Float64 `tfsdk:"min_gpu_link_gbs"`
	MinMemoryBandwidthGBs types.Float64 `tfsdk:"min_memory_bandwidth_gbs"`
	NeedsFP64             types.Bool    `tfsdk:"needs_fp64"`
	MinFP64TFLOPS         types.Float64 `tfsdk:"min_fp64_tflops"`
	Precision             []string      `tfsdk:"precision"`
	NeedsECC              types.Bool    `tfsdk:"needs_ecc"`
	NeedsInterNodeRDMA    types.Bool    `tfsdk:"needs_inter_node_rdma"`
	MinParallelEfficiency types.Float64 `tfsdk:"min_parallel_efficiency"`
	MinMTBFHours          types.Int64   `tfsdk:"min_mtbf_hours"`
	RecommendedModels     []string      `tfsdk:"recommended_models"`
	PreferredGPUsPerNode  types.Int64   `tfsdk:"preferred_gpus_per_node"`
	GPUUtilAlertPercent   types.Int64   `tfsdk:"gpu_util_alert_percent"`
	Other                 []string      `tfsdk:"other"`
}

type candidateModel struct {
	InstanceType    types.String   `tfsdk:"instance_type"`
	Rank            types.Int64    `tfsdk:"rank"`
	Family          types.String   `tfsdk:"family"`
	GPUModel        types.String   `tfsdk:"gpu_model"`
	GPUs            types.Int64    `tfsdk:"gpus"`
	GPUMemoryGB     types.Int64    `tfsdk:"gpu_memory_gb"`
	EnableERDMA     types.Bool     `tfsdk:"enable_erdma"`
	NeedsHPCCluster types.Bool     `tfsdk:"needs_hpc_cluster"`
	Reasons         []string       `tfsdk:"reasons"`
	Findings        []findingModel `tfsdk:"findings"`
}

func (d *scenarioDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var state scenarioModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.Name.ValueString()
	sc, err := catalog.LookupScenario(name)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Reading scenario "+name, catalogErrorFix(err))
		return
	}
	selReq := catalog.SelectRequest{
		Scenario:         sc.Name,
		GPUModel:         state.GPUModel.ValueString(),
		GPUsPerNode:      int(state.GPUsPerNode.ValueInt64()),
		RequireERDMA:     state.ERDMA.ValueBool(),
		RequireBareMetal: state.BareMetal.ValueBool(),
		Nodes:            int(max(state.NodeCount.ValueInt64(), 1)),
	}
	if state.OfferedInstanceTypes != nil {
		selReq.Availability = &catalog.RegionAvailability{Region: "the region of offered_instance_types", InstanceTypes: state.OfferedInstanceTypes}
	}
	cands, findings, err := catalog.Select(selReq)
	if err != nil {
		summary := "Selecting instance types for scenario " + sc.Name
		detail := catalogErrorFix(err)
		switch {
		case errors.Is(err, catalog.ErrUnknownGPUModel):
			resp.Diagnostics.AddAttributeError(path.Root("gpu_model"), summary, detail)
		case errors.Is(err, catalog.ErrGPUCountNotOffered):
			resp.Diagnostics.AddAttributeError(path.Root("gpus_per_node"), summary, detail)
		case planErrorPath(err, path.Empty()).Equal(path.Root("offered_instance_types")):
			resp.Diagnostics.AddAttributeError(path.Root("offered_instance_types"), summary, detail)
		default:
			// The error already carries each excluding finding's message; add their hints.
			var hints []string
			for _, f := range findings {
				if f.Severity == catalog.SeverityError && f.Hint != "" && !slices.Contains(hints, f.Hint) {
					hints = append(hints, f.Hint)
				}
			}
			for _, h := range hints {
				detail += "\n- " + h
			}
			resp.Diagnostics.AddError(summary, detail)
		}
		return
	}

	state.Requirements = newRequirementsModel(sc)
	state.Findings = newFindingModels(findings)
	state.Candidates = make([]candidateModel, 0, len(cands))
	for _, c := range cands {
		t := c.InstanceType
		state.Candidates = append(state.Candidates, candidateModel{
			InstanceType:    types.StringValue(t.Name),
			Rank:            types.Int64Value(int64(c.Rank)),
			Family:          types.StringValue(t.Family),
			GPUModel:        types.StringValue(t.GPU),
			GPUs:            types.Int64Value(int64(t.GPUs)),
			GPUMemoryGB:     types.Int64Value(int64(t.GPUMemoryGB)),
			EnableERDMA:     types.BoolValue(c.EnableERDMA),
			NeedsHPCCluster: types.BoolValue(c.NeedsHPCCluster),
			Reasons:         append([]string{}, c.Reasons...),
			Findings:        newFindingModels(c.Findings),
		})
	}
	// Select returns at least one candidate or an error.
	state.RecommendedInstanceType = types.StringValue(cands[0].InstanceType.Name)
	state.Why = append([]string{}, cands[0].Reasons...)
	if w := warningsText(findings); w != "" {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Selecting instance types for scenario %s: the request falls short", sc.Name), w)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func newRequirementsModel(sc catalog.Scenario) *requirementsModel {
	r := &requirementsModel{
		Title:                 types.StringValue(sc.Title),
		Description:           types.StringValue(sc.Description),
		MinGPUMemoryGB:        statedInt(sc.MinGPUMemoryGB),
		MinGPULinkGBs:         statedFloat(sc.MinGPULinkGBs),
		MinMemoryBandwidthGBs: statedFloat(sc.MinMemoryBandwidthGBs),
		NeedsFP64:             types.BoolValue(sc.NeedsFP64),
		MinFP64TFLOPS:         types.Float64Null(),
		Precision:             append([]string{}, sc.Precision...),
		NeedsECC:              types.BoolValue(sc.NeedsECC),
		NeedsInterNodeRDMA:    types.BoolValue(sc.NeedsInterNodeRDMA),
		MinParallelEfficiency: statedFloat(sc.MinParallelEfficiency),
		MinMTBFHours:          statedInt(sc.MinMTBFHours),
		RecommendedModels:     append([]string{}, sc.RecommendedModels...),
		PreferredGPUsPerNode:  statedInt(sc.PreferredGPUsPerNode),
		GPUUtilAlertPercent:   types.Int64Value(int64(sc.GPUUtilAlertPercent)),
		Other:                 append([]string{}, sc.Other...),
	}
	if sc.NeedsFP64 {
		r.MinFP64TFLOPS = statedFloat(sc.MinFP64TFLOPS)
	}
	return r
}

// scenarioComputedString is a computed string attribute of the scenario data source.
func scenarioComputedString(desc string) schema.Attribute {
	return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
}

// scenarioComputedList is a computed list of strings of the scenario data source.
func scenarioComputedList(desc string) schema.Attribute {
	return schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: desc}
}
