package provider

import (
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// The `cluster_autoscaler` attribute of gpucluster_kubernetes_manifests: the Kubernetes Cluster
// Autoscaler for the cluster's autoscaling node pools (internal/manifests RenderClusterAutoscaler).
// Inputs and the rendered YAML live in one nested attribute; when it is set the autoscaler is
// also one of the `addons` files.

func clusterAutoscalerAttribute() schema.Attribute {
	return schema.SingleNestedAttribute{
		Optional: true,
		MarkdownDescription: "The Kubernetes Cluster Autoscaler (" + images.Get(images.ClusterAutoscaler).Tag + ", `--cloud-provider=alicloud`) for the " +
			"cluster's autoscaling node pools: it adds nodes to a pool's Auto Scaling group when pods are pending and removes idle " +
			"GPU nodes. It runs on the control plane and authenticates with the control-plane nodes' instance RAM role through the " +
			"metadata server: no AccessKey is in any manifest, so give the control-plane instances a RAM role allowed `ess:Describe*`, " +
			"`ess:ModifyScalingGroup`, `ess:RemoveInstances`, `ess:DetachInstances`, `ess:ExecuteScalingRule`, `ess:CreateScalingRule`, " +
			"`ess:ModifyScalingRule`, `ess:DeleteScalingRule` and `ecs:DescribeInstanceTypes`. Also in `addons` (file `" +
			manifests.AddonClusterAutoscaler + "`). Unset: no autoscaler. See the guide on autoscaling node pools.",
		Attributes: map[string]schema.Attribute{
			"node_groups": schema.ListNestedAttribute{
				Required: true,
				MarkdownDescription: "Every autoscaling pool of the cluster, from each `gpucluster_node_pool` with `autoscaling`: one " +
					"`--nodes=<min_size>:<max_size>:<scaling_group_id>` flag each. A pool left out is never scaled.",
				Validators: []validator.List{listvalidator.SizeAtLeast(1)},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":             schema.StringAttribute{Required: true, MarkdownDescription: "The pool's name (for messages)."},
					"scaling_group_id": schema.StringAttribute{Required: true, MarkdownDescription: "The pool's `scaling_group_id`."},
					"min_size": schema.Int64Attribute{Required: true, MarkdownDescription: "The pool's `autoscaling.min_size`.",
						Validators: []validator.Int64{int64validator.Between(0, cloud.MaxScalingGroupSize)}},
					"max_size": schema.Int64Attribute{Required: true, MarkdownDescription: "The pool's `autoscaling.max_size`.",
						Validators: []validator.Int64{int64validator.Between(1, cloud.MaxScalingGroupSize)}},
				}},
			},
			"image": schema.StringAttribute{Optional: true, MarkdownDescription: "Cluster Autoscaler image. Default `" + images.Ref(images.ClusterAutoscaler) +
				"`, the newest release; on an older cluster use the release of its Kubernetes minor."},
			"scale_down_unneeded_time": schema.StringAttribute{Optional: true,
				MarkdownDescription: fmt.Sprintf("How long a node must stay unneeded (its requested GPUs below the threshold) before it is removed; also "+
					"the pause after a scale-up before any scale-down. A Go duration of at least `1m`. Default `%s`.", formatMinutes(manifests.DefaultScaleDownUnneededTime))},
			"scale_down_utilization_threshold": schema.Float64Attribute{Optional: true,
				MarkdownDescription: fmt.Sprintf("A node whose pods request less than this share of it is unneeded; on GPU nodes the "+
					"autoscaler counts GPUs only, so `0.5` removes an 8-GPU node running fewer than 4 GPUs of work. Default `%g`.", manifests.DefaultScaleDownUtilization),
				Validators: []validator.Float64{float64validator.Between(0.01, 1)}},
			"yaml": schema.StringAttribute{Computed: true,
				MarkdownDescription: "ServiceAccount, ClusterRole, Role, their bindings and the Deployment, as one multi-document YAML stream."},
		},
	}
}

type manifestsScaler struct {
	NodeGroups           []manifestsNodeGroup `tfsdk:"node_groups"`
	Image                types.String         `tfsdk:"image"`
	ScaleDownUnneeded    types.String         `tfsdk:"scale_down_unneeded_time"`
	ScaleDownUtilization types.Float64        `tfsdk:"scale_down_utilization_threshold"`
	YAML                 types.String         `tfsdk:"yaml"`
}

type manifestsNodeGroup struct {
	Name           types.String `tfsdk:"name"`
	ScalingGroupID types.String `tfsdk:"scaling_group_id"`
	MinSize        types.Int64  `tfsdk:"min_size"`
	MaxSize        types.Int64  `tfsdk:"max_size"`
}

// clusterAutoscalerOptions reads the attribute; nil when it is unset.
func clusterAutoscalerOptions(m *manifestsScaler) (*manifests.ClusterAutoscalerOptions, error) {
	if m == nil {
		return nil, nil
	}
	c := &manifests.ClusterAutoscalerOptions{Image: m.Image.ValueString(), ScaleDownUtilization: m.ScaleDownUtilization.ValueFloat64()}
	if s := m.ScaleDownUnneeded.ValueString(); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, planerr.Input("cluster_autoscaler.scale_down_unneeded_time", s, "is not a Go duration", "write minutes, such as \"10m\"")
		}
		c.ScaleDownUnneededTime = d
	}
	for _, g := range m.NodeGroups {
		c.NodeGroups = append(c.NodeGroups, manifests.NodeGroup{Name: g.Name.ValueString(), ScalingGroupID: g.ScalingGroupID.ValueString(),
			Min: int(g.MinSize.ValueInt64()), Max: int(g.MaxSize.ValueInt64())})
	}
	return c, nil
}

// renderClusterAutoscaler fills the attribute's yaml; nothing when it is unset.
func renderClusterAutoscaler(m *manifestsScaler, c *manifests.ClusterAutoscalerOptions) error {
	if m == nil || c == nil {
		return nil
	}
	docs, err := manifests.RenderClusterAutoscaler(*c)
	if err != nil {
		return err
	}
	m.YAML = types.StringValue(manifests.Join(docs))
	return nil
}

// formatMinutes writes whole-minute durations as "10m" rather than "10m0s".
func formatMinutes(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%dm", int64(d/time.Minute))
	}
	return d.String()
}
