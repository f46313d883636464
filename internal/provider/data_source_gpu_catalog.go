package provider

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ datasource.DataSource = (*gpuCatalogDataSource)(nil)

func newGPUCatalogDataSource() datasource.DataSource { return &gpuCatalogDataSource{} }

// gpuCatalogDataSource lists the provider's built-in catalog of GPU instance types and GPU
// models. It makes no API call: it answers the same in every region and without credentials
// being valid, so it fits validation and planning. gpucluster_instance_types is its live twin.
type gpuCatalogDataSource struct{}

func (d *gpuCatalogDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_gpu_catalog"
}

func (d *gpuCatalogDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := catalogFilterAttributes()
	maps.Copy(attrs, map[string]schema.Attribute{
		"instance_types": schema.ListNestedAttribute{
			Computed: true,
			MarkdownDescription: "Instance types that pass every filter, in the catalog's order (family, then size). " +
				"Figures the vendor does not state are null.",
			NestedObject: schema.NestedAttributeObject{Attributes: instanceTypeAttributes()},
		},
		"names": schema.ListAttribute{
			Computed:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "The `name` of each entry of `instance_types`, in the same order.",
		},
		"gpu_models": schema.ListNestedAttribute{
			Computed: true,
			MarkdownDescription: "NVIDIA datasheet figures (dense) of every GPU model the catalog knows, best first; with " +
				"`gpu_model` set, only the requested model and the models that serve it.",
			NestedObject: schema.NestedAttributeObject{Attributes: gpuModelAttributes()},
		},
		"findings": findingsAttribute("What the `gpu_model` request needs to be told: a warning when a substitute serves it " +
			"(such as gn8v for H100, whose FP64 is far below H100), info when a bare series stands for several memory sizes."),
	})
	resp.Schema = schema.Schema{
		MarkdownDescription: "The provider's built-in catalog of Alibaba Cloud GPU instance types and the GPU models behind them, " +
			"filtered. Offline: no API call, the same answer in every region. Use `gpucluster_instance_types` for what a region " +
			"offers and has in stock.",
		Attributes: attrs,
	}
}

type gpuCatalogModel struct {
	catalogFilterModel
	InstanceTypes []instanceTypeModel `tfsdk:"instance_types"`
	Names         []string            `tfsdk:"names"`
	GPUModels     []gpuModelModel     `tfsdk:"gpu_models"`
	Findings      []findingModel      `tfsdk:"findings"`
}

func (d *gpuCatalogDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var state gpuCatalogModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	matched, findings, err := filterCatalog(state.catalogFilterModel)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("gpu_model"), "Reading the GPU catalog: unknown gpu_model", catalogErrorFix(err))
		return
	}
	models, err := gpuModelsFor(state.GPUModel)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("gpu_model"), "Reading the GPU catalog: unknown gpu_model", catalogErrorFix(err))
		return
	}
	state.InstanceTypes = make([]instanceTypeModel, 0, len(matched))
	state.Names = make([]string, 0, len(matched))
	for _, t := range matched {
		state.InstanceTypes = append(state.InstanceTypes, newInstanceTypeModel(t))
		state.Names = append(state.Names, t.Name)
	}
	state.GPUModels = models
	state.Findings = newFindingModels(findings)
	if w := warningsText(findings); w != "" {
		resp.Diagnostics.AddAttributeWarning(path.Root("gpu_model"), "Reading the GPU catalog: "+state.GPUModel.ValueString()+" is served by a substitute", w)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}
