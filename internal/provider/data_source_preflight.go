package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/preflight"
)

var _ datasource.DataSourceWithConfigure = (*preflightDataSource)(nil)

func newPreflightDataSource() datasource.DataSource { return &preflightDataSource{} }

// preflightDataSource answers at plan whether a stack fits the account, the zones and the
// network: it reads the account (a handful of calls, batched by region) and hands the stack and
// the account to preflight.Check, which holds the logic. Each shortfall is an error on the
// attribute it is about.
type preflightDataSource struct {
	client *cloud.Client
}

func (d *preflightDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_preflight"
}

func (d *preflightDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	count := func(doc string) schema.Attribute {
		return schema.Int64Attribute{Optional: true, MarkdownDescription: doc, Validators: []validator.Int64{int64validator.AtLeast(0)}}
	}
	computed := func(doc string) schema.Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: doc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Whether a stack fits what the account and the region give, answered at plan: the pools' vCPUs " +
			"against the pay-as-you-go and spot vCPU quotas (`DescribeAccountAttributes`), each pool's instance type against " +
			"the stock of its zones (`DescribeAvailableResource`; for a spot pool, asked with `SpotStrategy`), its nodes against " +
			"the free private addresses of its vSwitches (`DescribeVSwitches` `AvailableIpAddressCount`), autoscaling pools " +
			"(`max_size` above `size`) against the scaling group quota and the largest `max_size` (`DescribeLimitation`, with " +
			"the region's groups counted by `DescribeScalingGroups`), and the API calls of the create at the provider's `rate_limit`. " +
			"`eips` and `load_balancers` against the Quota Center's `eip_quota_instances_num` and `slb_quota_instances_num` " +
			"(`ListProductQuotas`: the quota and its usage in the region), and `nat_gateways` against " +
			"`natgw_quota_nat_num_per_vpc`, which counts per VPC: the NAT gateways go in the VPC of the pools' vSwitches, whose " +
			"gateways (`DescribeNatGateways`) are the usage; pools in several VPCs are held to the fullest one, pools without " +
			"existing vSwitches to a new VPC (none in use). " +
			"Batched: one `DescribeAccountAttributes` and one `DescribeAvailableResource` for the region (one more with spot " +
			"pools, two more with autoscaling ones, one `ListProductQuotas` each with `eips`, `load_balancers`, `nat_gateways` or a pay-as-you-go GPU pool, " +
			"and with `nat_gateways` one `DescribeNatGateways` per VPC of the pools), two calls per " +
			"`network_id` and one per `vswitch_ids` entry, whatever the node count. Each shortfall is an error on the attribute " +
			"it is about, with the need, what is available and the fix; a stack that fits gets `fits`, a `summary` and the " +
			"estimate. GPUs: the vendor has no account-wide GPU quota but the Quota Center's `ecs-spec` quotas, one per instance " +
			"type, zone and billing method (in GPUs for a GPU type); with a pay-as-you-go GPU pool they are read in one more " +
			"`ListProductQuotas` (dimensions `regionId` and `chargeType = PostPaid`), and each such pool's `instance_type` places " +
			"no more nodes in a zone than its quota there leaves (a zone or type the Quota Center does not list is not checked; " +
			"spot pools and fallback types are not held to it). A shortfall is an error on the pool's `size`.",
		Attributes: map[string]schema.Attribute{
			"pools": schema.ListNestedAttribute{
				Required:            true,
				MarkdownDescription: "The stack's node pools, as their `gpucluster_node_pool` blocks describe them.",
				Validators:          []validator.List{listvalidator.SizeAtLeast(1)},
				NestedObject:        schema.NestedAttributeObject{Attributes: preflightPoolAttributes(count)},
			},
			"load_balancers":         count("Load balancers the stack creates (a control plane's is one)."),
			"load_balancer_backends": count("Servers the load balancers put behind them in all (the control plane's nodes), for the estimate."),
			"eips":                   count("EIPs the stack allocates."),
			"nat_gateways":           count("NAT gateways the stack creates, in the VPC of its pools (a `gpucluster_rdma_network` with `egress.mode = \"nat\"` makes one)."),
			"enforce": schema.BoolAttribute{Optional: true,
				MarkdownDescription: "`true` or unset: each shortfall is an error, so the plan stops. `false`: a warning, with `fits` false and the shortfalls listed."},
			"region":  schema.StringAttribute{Computed: true, MarkdownDescription: "The region read (the provider's)."},
			"fits":    schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether nothing falls short."},
			"summary": schema.StringAttribute{Computed: true, MarkdownDescription: "What the stack takes of each quota checked, what was not checked, and the estimate."},
			"shortfalls": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Each shortfall's message, led by its pool's `name` (with `enforce = false`; empty when the stack fits): for a `postcondition` on `fits` that names them."},
			"api_calls":                computed("API calls the create makes, estimated (a floor: waiters may poll more against the real cloud)."),
			"calls":                    schema.MapAttribute{Computed: true, ElementType: types.Int64Type, MarkdownDescription: "`api_calls` by action."},
			"estimated_create_seconds": computed("Seconds the provider's `rate_limit` alone makes those calls take; boots and the vendor's latency not counted."),
		},
	}
}

func preflightPoolAttributes(count func(string) schema.Attribute) map[string]schema.Attribute {
	list := func(doc string) schema.Attribute {
		return schema.ListAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: doc}
	}
	return map[string]schema.Attribute{
		"name":          schema.StringAttribute{Optional: true, MarkdownDescription: "A name for the pool, which leads its entries of `shortfalls` (a module's pool key, say)."},
		"instance_type": schema.StringAttribute{Required: true, MarkdownDescription: "The pool's instance type (its vCPUs and GPUs come from the provider's catalog)."},
		"size": schema.Int64Attribute{Required: true, MarkdownDescription: "Nodes the pool creates.",
			Validators: []validator.Int64{int64validator.AtLeast(0)}},
		"fallback_instance_types": list("The types the pool launches, in order, where `instance_type` has no stock: for a `gpucluster_node_pool` " +
			"with `instance_type_fallback = true`, the catalog's next candidates (`gpucluster_scenario`'s `candidates` after the first). " +
			"A zone where `instance_type` is out but one of these is in stock places nodes too (each type over the zones in order, as " +
			"the create tries them), and the summary says how many nodes a fallback takes where. The quotas count the nodes at " +
			"`instance_type`'s vCPUs and GPUs. No call is added: the region's stock answer holds them."),
		"max_size": count("For an autoscaling pool, the nodes it may grow to: the quotas must hold them all. Unset: `size`."),
		"spot":     schema.BoolAttribute{Optional: true, MarkdownDescription: "`true`: the nodes count against the spot vCPU quota, else the pay-as-you-go one."},
		"zone_ids": list("Zones the pool may use, in the order it fills them. Unset: its vSwitches' zones, or without any, every zone of the region."),
		"network_id": schema.StringAttribute{Optional: true,
			MarkdownDescription: "A `gpucluster_rdma_network` id: its vSwitches (one per zone) and their free addresses. Unknown at plan (a network created in the same run) defers the whole check to apply."},
		"vswitch_ids":        list("Existing vSwitches the pool places nodes in, instead of or beside `network_id`; the first one per zone counts."),
		"addresses_per_node": count("Private addresses of its vSwitch one node takes: 1 (unset), or 1 plus the pods per node where the CNI gives pods VPC addresses."),
	}
}

func (d *preflightDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (d *preflightDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !clientConfigured(d.client, "Checking the stack (preflight)", &resp.Diagnostics) {
		return
	}
	var m preflightModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	region := d.client.Region()
	stack, err := preflightStack(m)
	if err != nil {
		addPlanError(&resp.Diagnostics, err, "Preflight: invalid pool")
		return
	}
	account, err := readPreflightAccount(ctx, d.client, m, &stack)
	if err != nil {
		resp.Diagnostics.AddError("Preflight: reading the account of region "+region,
			fmt.Sprintf("%v.\nCheck the region and that the credentials may call ecs:DescribeAccountAttributes, ecs:DescribeAvailableResource, ecs:DescribeSecurityGroups, vpc:DescribeVSwitches and, with autoscaling pools, ess:DescribeLimitation and ess:DescribeScalingGroups, and with eips, load_balancers, nat_gateways or a pay-as-you-go GPU pool quotas:ListProductQuotas (and vpc:DescribeNatGateways with nat_gateways).", err))
		return
	}
	r := preflight.Check(stack, account, d.client.RateLimit())
	reportPreflight(&resp.Diagnostics, r, m.Enforce.IsNull() || m.Enforce.ValueBool())
	if resp.Diagnostics.HasError() {
		return
	}
	m.Region = types.StringValue(region)
	m.Fits = types.BoolValue(r.Fits())
	m.Summary = types.StringValue(r.Summary)
	m.Shortfalls = make([]string, 0, len(r.Shortfalls))
	for _, e := range r.Shortfalls {
		m.Shortfalls = append(m.Shortfalls, shortfallText(e, m.Pools))
	}
	m.APICalls = types.Int64Value(int64(r.Estimate.Total))
	m.Calls = make(map[string]int64, len(r.Estimate.Calls))
	for action, n := range r.Estimate.Calls {
		m.Calls[action] = int64(n)
	}
	m.EstimatedCreateSeconds = types.Int64Value(int64(r.Estimate.Duration.Seconds()))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// reportPreflight turns each shortfall into a diagnostic on its attribute: an error when
// enforced, else a warning.
func reportPreflight(diags *diag.Diagnostics, r preflight.Report, enforce bool) {
	const summary = "Preflight: the stack does not fit"
	for _, e := range r.Shortfalls {
		switch p := planErrorPath(e, path.Empty()); {
		case enforce:
			addPlanError(diags, e, summary)
		case len(p.Steps()) > 0:
			diags.AddAttributeWarning(p, summary, e.Error())
		default:
			diags.AddWarning(summary, e.Error())
		}
	}
}
