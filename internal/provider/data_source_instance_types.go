package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

var _ datasource.DataSourceWithConfigure = (*instanceTypesDataSource)(nil)

func newInstanceTypesDataSource() datasource.DataSource { return &instanceTypesDataSource{} }

// instanceTypesDataSource is gpucluster_gpu_catalog checked against the provider's region: which
// of the matching types the region offers (ECS DescribeInstanceTypes) and, per zone, whether they
// are in stock (ECS DescribeAvailableResource). Calls are batched: DescribeInstanceTypes once per
// family when the filters leave a few families, else one sweep over every GPU type, each paged
// with NextToken; DescribeAvailableResource once for the whole region.
type instanceTypesDataSource struct {
	client *cloud.Client
}

const (
	// perFamilyCallsMax: up to this many families are asked for one by one (InstanceTypeFamily),
	// more are fetched by one sweep over all GPU types (MinimumGPUAmount=1) and filtered here.
	perFamilyCallsMax = 3
)

// Zone stock statuses of DescribeAvailableResource.
var (
	zoneStatuses         = []string{"Available", "SoldOut"}
	zoneStatusCategories = []string{"WithStock", "ClosedWithStock", "WithoutStock", "ClosedWithoutStock"}
)

func (d *instanceTypesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_instance_types"
}

func (d *instanceTypesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	filters := catalogFilterAttributes()
	filters["in_stock_only"] = schema.BoolAttribute{
		Optional:            true,
		MarkdownDescription: "`true`: only types with status `Available` in at least one zone. Unset or `false`: every offered type.",
	}
	itemAttrs := instanceTypeAttributes()
	maps.Copy(itemAttrs, map[string]schema.Attribute{
		"gpu_spec": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "The GPU as `DescribeInstanceTypes` names it (`GPUSpec`).",
		},
		"zones": schema.ListNestedAttribute{
			Computed:            true,
			MarkdownDescription: "Stock per zone of the region that lists the type, sorted by zone id, from `DescribeAvailableResource`.",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"zone_id": schema.StringAttribute{Computed: true, MarkdownDescription: "Zone id."},
				"status": schema.StringAttribute{Computed: true,
					MarkdownDescription: "One of " + mdValues(zoneStatuses) + "."},
				"status_category": schema.StringAttribute{Computed: true,
					MarkdownDescription: "One of " + mdValues(zoneStatusCategories) + "."},
			}},
		},
		"available_zone_ids": schema.ListAttribute{
			Computed:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Zones where `status` is `Available`, sorted; an input for `zone_ids`.",
		},
	})
	// vcpu, memory_gib and gpus come from the API here.
	itemAttrs["vcpu"] = schema.Int64Attribute{Computed: true, MarkdownDescription: "vCPUs, as `DescribeInstanceTypes` returns them (`CpuCoreCount`)."}
	itemAttrs["memory_gib"] = schema.Float64Attribute{Computed: true, MarkdownDescription: "Memory in GiB, as `DescribeInstanceTypes` returns it (`MemorySize`)."}
	itemAttrs["gpus"] = schema.Int64Attribute{Computed: true, MarkdownDescription: "GPUs, as `DescribeInstanceTypes` returns them (`GPUAmount`)."}

	attrs := filters
	maps.Copy(attrs, map[string]schema.Attribute{
		"region": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "The region asked (the provider's region).",
		},
		"instance_types": schema.ListNestedAttribute{
			Computed: true,
			MarkdownDescription: "Catalog types that pass every filter and that the region offers, in the catalog's order. " +
				"`vcpu`, `memory_gib`, `gpus` and `gpu_spec` as the API returns them, the other figures from the catalog.",
			NestedObject: schema.NestedAttributeObject{Attributes: itemAttrs},
		},
		"names": schema.ListAttribute{
			Computed:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "The `name` of each entry of `instance_types`, in the same order.",
		},
		"not_offered": schema.ListAttribute{
			Computed:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Catalog types that pass the filters but that the region does not offer.",
		},
		"unknown_instance_types": schema.ListAttribute{
			Computed:    true,
			ElementType: types.StringType,
			MarkdownDescription: "Types the API returned for the families asked that the provider's catalog does not know, sorted. " +
				"The provider cannot check them against a scenario; report them so the catalog can learn them.",
		},
		"findings": findingsAttribute("What the `gpu_model` request needs to be told: a warning when a substitute serves it, " +
			"info when a bare series stands for several memory sizes."),
	})
	resp.Schema = schema.Schema{
		MarkdownDescription: "GPU instance types the provider's region offers, with stock per zone: the catalog " +
			"(`gpucluster_gpu_catalog`, same filters) checked against ECS `DescribeInstanceTypes` and " +
			"`DescribeAvailableResource`. Calls are batched: `DescribeInstanceTypes` once per family when the filters leave at " +
			fmt.Sprintf("most %d families, else one sweep over all GPU types, each paged; `DescribeAvailableResource` once.", perFamilyCallsMax),
		Attributes: attrs,
	}
}

func (d *instanceTypesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFromProviderData(req.ProviderData, &resp.Diagnostics)
}

type instanceTypesModel struct {
	catalogFilterModel
	InStockOnly          types.Bool              `tfsdk:"in_stock_only"`
	Region               types.String            `tfsdk:"region"`
	InstanceTypes        []liveInstanceTypeModel `tfsdk:"instance_types"`
	Names                []string                `tfsdk:"names"`
	NotOffered           []string                `tfsdk:"not_offered"`
	UnknownInstanceTypes []string                `tfsdk:"unknown_instance_types"`
	Findings             []findingModel          `tfsdk:"findings"`
}

type liveInstanceTypeModel struct {
	instanceTypeModel
	GPUSpec          types.String     `tfsdk:"gpu_spec"`
	Zones            []zoneStockModel `tfsdk:"zones"`
	AvailableZoneIDs []string         `tfsdk:"available_zone_ids"`
}

type zoneStockModel struct {
	ZoneID         string `tfsdk:"zone_id"`
	Status         string `tfsdk:"status"`
	StatusCategory string `tfsdk:"status_category"`
}

func (d *instanceTypesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !clientConfigured(d.client, "Reading instance types", &resp.Diagnostics) {
		return
	}
	var state instanceTypesModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	region := d.client.Region()
	matched, findings, err := filterCatalog(state.catalogFilterModel)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("gpu_model"), "Reading instance types of region "+region+": unknown gpu_model", catalogErrorFix(err))
		return
	}

	var offered []cloud.InstanceTypeOffer
	var stock map[string][]zoneStockModel
	if len(matched) > 0 {
		families := familiesOf(matched)
		offered, err = describeInstanceTypes(ctx, d.client, families)
		if err != nil {
			resp.Diagnostics.AddError(fmt.Sprintf("Reading instance types of region %s (DescribeInstanceTypes, families %s)", region, strings.Join(families, ", ")),
				fmt.Sprintf("%v.\nCheck that the provider's region is right and that the credentials may call ecs:DescribeInstanceTypes.", err))
			return
		}
		stock, err = describeStock(ctx, d.client)
		if err != nil {
			resp.Diagnostics.AddError("Reading instance type stock of region "+region+" (DescribeAvailableResource)",
				fmt.Sprintf("%v.\nCheck that the provider's region is right and that the credentials may call ecs:DescribeAvailableResource.", err))
			return
		}
	}

	state.Region = types.StringValue(region)
	state.InstanceTypes, state.NotOffered, state.UnknownInstanceTypes = mergeLive(matched, offered, stock, state.InStockOnly.ValueBool())
	state.Names = make([]string, 0, len(state.InstanceTypes))
	for _, t := range state.InstanceTypes {
		state.Names = append(state.Names, t.Name.ValueString())
	}
	state.Findings = newFindingModels(findings)
	if w := warningsText(findings); w != "" {
		resp.Diagnostics.AddAttributeWarning(path.Root("gpu_model"), "Reading instance types of region "+region+": "+state.GPUModel.ValueString()+" is served by a substitute", w)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// familiesOf returns the families of the types, in first-seen order.
func familiesOf(ts []catalog.InstanceType) []string {
	var out []string
	for _, t := range ts {
		if !slices.Contains(out, t.Family) {
			out = append(out, t.Family)
		}
	}
	return out
}

// describeInstanceTypes fetches the region's types for the families: one paged call per family
// when there are at most perFamilyCallsMax, else one paged sweep over every GPU type.
func describeInstanceTypes(ctx context.Context, client *cloud.Client, families []string) ([]cloud.InstanceTypeOffer, error) {
	if len(families) > perFamilyCallsMax {
		return client.InstanceTypes(ctx, "")
	}
	var out []cloud.InstanceTypeOffer
	for _, f := range families {
		got, err := client.InstanceTypes(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// describeStock asks DescribeAvailableResource once for the region and returns, per instance
// type (with the ecs. prefix), its status in each zone that lists it, sorted by zone.
func describeStock(ctx context.Context, client *cloud.Client) (map[string][]zoneStockModel, error) {
	stocks, err := client.InstanceTypeStocks(ctx)
	if err != nil {
		return nil, err
	}
	return stockByType(stocks), nil
}

// stockByType indexes the zones' stock by instance type.
func stockByType(stocks []cloud.InstanceTypeStock) map[string][]zoneStockModel {
	out := map[string][]zoneStockModel{}
	for _, s := range stocks {
		name := normalizeTypeName(s.InstanceType)
		out[name] = append(out[name], zoneStockModel{ZoneID: s.ZoneID, Status: s.Status, StatusCategory: s.StatusCategory})
	}
	for _, zs := range out {
		sort.Slice(zs, func(i, j int) bool { return zs[i].ZoneID < zs[j].ZoneID })
	}
	return out
}

func normalizeTypeName(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if !strings.HasPrefix(n, "ecs.") {
		n = "ecs." + n
	}
	return n
}

// mergeLive keeps the matched catalog types the API offers (with the API's vcpu, memory, GPUs and
// GPU spec, and the zones' stock), and returns the matched types the API does not offer and the
// API's types in the same families that the catalog does not know.
func mergeLive(matched []catalog.InstanceType, offered []cloud.InstanceTypeOffer, stock map[string][]zoneStockModel, inStockOnly bool) (items []liveInstanceTypeModel, notOffered, unknown []string) {
	byName := map[string]cloud.InstanceTypeOffer{}
	for _, o := range offered {
		byName[normalizeTypeName(o.ID)] = o
	}
	families := familiesOf(matched)
	items, notOffered, unknown = []liveInstanceTypeModel{}, []string{}, []string{}
	for _, t := range matched {
		o, ok := byName[t.Name]
		if !ok {
			notOffered = append(notOffered, t.Name)
			continue
		}
		item := liveInstanceTypeModel{
			instanceTypeModel: newInstanceTypeModel(t),
			GPUSpec:           types.StringValue(o.GPUSpec),
			Zones:             append([]zoneStockModel{}, stock[t.Name]...),
			AvailableZoneIDs:  []string{},
		}
		item.VCPU = types.Int64Value(int64(o.CPUCores))
		item.MemoryGiB = types.Float64Value(o.MemoryGiB)
		item.GPUs = types.Int64Value(int64(o.GPUs))
		for _, z := range item.Zones {
			if z.Status == "Available" {
				item.AvailableZoneIDs = append(item.AvailableZoneIDs, z.ZoneID)
			}
		}
		if inStockOnly && len(item.AvailableZoneIDs) == 0 {
			continue
		}
		items = append(items, item)
	}
	for name, o := range byName {
		if _, known := catalog.LookupInstanceType(name); known {
			continue
		}
		family := strings.TrimPrefix(strings.ToLower(o.Family), "ecs.")
		if family == "" || slices.Contains(families, family) {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	return items, notOffered, unknown
}
