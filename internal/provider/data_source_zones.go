package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

var _ datasource.DataSourceWithConfigure = (*zonesDataSource)(nil)

func newZonesDataSource() datasource.DataSource { return &zonesDataSource{} }

// zonesDataSource lists the zones of the provider's region (ECS DescribeZones), the input every
// network and node pool needs for zone_ids.
type zonesDataSource struct {
	client *cloud.Client
}

func (d *zonesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_zones"
}

func (d *zonesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Zones of the provider's region, from ECS `DescribeZones`, sorted by id.",
		Attributes: map[string]schema.Attribute{
			"region": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The region the zones belong to (the provider's region).",
			},
			"ids": schema.ListAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Zone ids, such as `cn-wulanchabu-a`.",
			},
			"zones": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Each zone with its display name.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"id":         schema.StringAttribute{Computed: true, MarkdownDescription: "Zone id."},
					"local_name": schema.StringAttribute{Computed: true, MarkdownDescription: "Name shown in the console."},
				}},
			},
		},
	}
}

func (d *zonesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFromProviderData(req.ProviderData, &resp.Diagnostics)
}

type zonesModel struct {
	Region types.String `tfsdk:"region"`
	IDs    []string     `tfsdk:"ids"`
	Zones  []zoneModel  `tfsdk:"zones"`
}

type zoneModel struct {
	ID        string `tfsdk:"id"`
	LocalName string `tfsdk:"local_name"`
}

func (d *zonesDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !clientConfigured(d.client, "Reading zones", &resp.Diagnostics) {
		return
	}
	zones, err := d.client.Zones(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Reading zones of region "+d.client.Region(), err.Error())
		return
	}
	state := zonesModel{Region: types.StringValue(d.client.Region()), IDs: []string{}, Zones: []zoneModel{}}
	for _, z := range zones {
		state.IDs = append(state.IDs, z.ID)
		state.Zones = append(state.Zones, zoneModel{ID: z.ID, LocalName: z.LocalName})
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}
