package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
)

// A node pool's autoscaling mode: an Auto Scaling (ESS) scaling group sized by the Kubernetes
// Cluster Autoscaler. Terraform owns the bounds and the launch settings (the scaling
// configuration); the autoscaler owns the current size, which no plan shows as a change.

// autoscalingModel is the `autoscaling` attribute.
type autoscalingModel struct {
	MinSize            types.Int64   `tfsdk:"min_size"`
	MaxSize            types.Int64   `tfsdk:"max_size"`
	OnDemandBase       types.Int64   `tfsdk:"on_demand_base"`
	OnDemandPercentage types.Int64   `tfsdk:"on_demand_percentage"`
	FallbackToOnDemand types.Bool    `tfsdk:"fallback_to_on_demand"`
	MaxHourlyPrice     types.Float64 `tfsdk:"max_hourly_price"`
}

var autoscalingAttrTypes = map[string]attr.Type{
	"min_size": types.Int64Type, "max_size": types.Int64Type, "on_demand_base": types.Int64Type,
	"on_demand_percentage": types.Int64Type, "fallback_to_on_demand": types.BoolType, "max_hourly_price": types.Float64Type,
}

// resolveAutoscaling reads the attribute: without spot every node is pay-as-you-go; with spot,
// the on-demand base and share default to 0 (all spot) and spot that cannot be had is made up
// with pay-as-you-go nodes unless fallback_to_on_demand = false.
func resolveAutoscaling(a *autoscalingModel, spot bool) *nodepool.Autoscale {
	out := &nodepool.Autoscale{Min: int(a.MinSize.ValueInt64()), Max: int(a.MaxSize.ValueInt64()), Mix: cloud.AllOnDemand,
		Budget: a.MaxHourlyPrice.ValueFloat64()}
	if spot {
		out.Mix = cloud.SpotMix{OnDemandBase: int(a.OnDemandBase.ValueInt64()), OnDemandPercentAboveBase: int(a.OnDemandPercentage.ValueInt64()),
			CompensateWithOnDemand: a.FallbackToOnDemand.IsNull() || a.FallbackToOnDemand.ValueBool(), SpotInstanceRemedy: true}
	}
	return out
}

func autoscalingSchema() schema.Attribute {
	return schema.SingleNestedAttribute{
		Optional: true,
		MarkdownDescription: "Autoscaling mode, instead of `size`: the nodes are an Auto Scaling (ESS) scaling group over the " +
			"network's vSwitches (in `zone_ids` order), launching the planned instance type and, with `instance_type_fallback`, " +
			"the catalog's next candidates as a priority list, so the group moves to the next zone or type on a stock-out by " +
			"itself. The Kubernetes Cluster Autoscaler sizes the group (node group `<min>:<max>:<scaling_group_id>`); " +
			"Terraform owns the bounds and the launch settings, and a plan after the autoscaler changed the size is empty. " +
			"The group starts at `min_size` nodes. Changing the launch settings (image, disks, user data, type) makes a new " +
			"scaling configuration and rolls the nodes `update_strategy.max_unavailable` at a time: the group grows by a wave, " +
			"then the wave's old nodes go (at `max_size`, the old nodes go first). Changing the bounds or the spot mix changes " +
			"the group in place. Switching a pool between `size` and `autoscaling` replaces it. Not for control planes; " +
			"`auto_release_after` and `min_size` (the fixed pool's floor) do not apply, nor does the network's low-latency " +
			"placement (scaling groups take no deployment set). Import by pool id finds the group by its `gpucluster:pool` tag.",
		Attributes: map[string]schema.Attribute{
			"min_size": schema.Int64Attribute{
				Required:            true,
				MarkdownDescription: "Fewest nodes; 0 lets expensive GPUs scale to zero.",
				Validators:          []validator.Int64{int64validator.Between(0, cloud.MaxScalingGroupSize)},
			},
			"max_size": schema.Int64Attribute{
				Required:            true,
				MarkdownDescription: fmt.Sprintf("Most nodes, at most %d (the scaling group quota).", cloud.MaxScalingGroupSize),
				Validators:          []validator.Int64{int64validator.Between(1, cloud.MaxScalingGroupSize)},
			},
			"on_demand_base": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "With `spot`: the first this many nodes are pay-as-you-go. Default 0.",
				Validators:          []validator.Int64{int64validator.Between(0, 1000)},
			},
			"on_demand_percentage": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "With `spot`: percent of the nodes above `on_demand_base` that are pay-as-you-go. Default 0 (all spot).",
				Validators:          []validator.Int64{int64validator.Between(0, 100)},
			},
			"fallback_to_on_demand": schema.BoolAttribute{
				Optional:            true,
				MarkdownDescription: "With `spot`: launch pay-as-you-go nodes when spot stock runs out (ESS CompensateWithOnDemand). Default true.",
			},
			"max_hourly_price": schema.Float64Attribute{
				Optional: true,
				MarkdownDescription: "Budget guard: the most the whole pool may cost per hour at `max_size` nodes, priced pay-as-you-go " +
					"(the worst case, spot falling back). A plan whose `max_size` would exceed it is refused.",
				Validators: []validator.Float64{float64validator.AtLeast(0.01)},
			},
		},
	}
}

func scalingGroupIDSchema() schema.Attribute {
	return schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "Autoscaling pools: the Auto Scaling group's id, for the Cluster Autoscaler's " +
			"`--nodes=<min>:<max>:<scaling_group_id>`. Null for fixed-size pools.",
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}
