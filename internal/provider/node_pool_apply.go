package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
)

// finish records the pool's nodes, GPU count and price after a create or update, whatever its
// outcome; the computed values the plan left unknown are filled here. A control plane's load
// balancer gets the running nodes as its backend servers.
func (r *nodePoolResource) finish(ctx context.Context, spec nodepool.Spec, plan *nodePoolModel, out nodepool.Outcome, diags *diag.Diagnostics) {
	for _, w := range out.Warnings { // nodes deleted before they had stopped
		diags.AddWarning(fmt.Sprintf("node pool (%s)", spec.PoolID), w)
	}
	nodes := r.recordNodes(ctx, spec, plan, out, diags)
	if err := nodepool.SyncBackends(ctx, r.client, spec.LoadBalancerID, spec.PoolID, nodes); err != nil {
		diags.AddError(fmt.Sprintf("node pool (%s)", spec.PoolID), err.Error())
	}
}

// recordNodes is finish's part that records the nodes (and what follows from them); it returns
// them as read.
func (r *nodePoolResource) recordNodes(ctx context.Context, spec nodepool.Spec, plan *nodePoolModel, out nodepool.Outcome, diags *diag.Diagnostics) []cloud.Instance {
	nodes, err := out.Running, error(nil)
	if len(nodes) != len(out.IDs) {
		nodes, err = r.client.DescribeInstancesByID(ctx, out.IDs)
	}
	if err != nil {
		// The ids alone still keep the nodes out of the orphan pile.
		diags.AddWarning(fmt.Sprintf("node pool (%s): could not read the nodes back", spec.PoolID), err.Error())
		nodes = nodes[:0]
		for _, id := range out.IDs {
			nodes = append(nodes, cloud.Instance{ID: id, Status: "Unknown"})
		}
	}
	diags.Append(plan.setNodes(ctx, nodes)...)
	if plan.ZoneIDs.IsUnknown() {
		plan.ZoneIDs = stringList(spec.Zones)
	}
	if plan.EstimatedHourlyPrice.IsUnknown() {
		plan.EstimatedHourlyPrice = types.Float64Value(r.nodesPrice(ctx, spec, nodes, diags))
	}
	for typ, n := range out.Used {
		if typ != spec.Types[0] {
			diags.AddWarning(fmt.Sprintf("node pool (%s): %d nodes fell back to %s", spec.PoolID, n, typ),
				fmt.Sprintf("%s was out of stock; instance_type_fallback allowed the next candidate. nodes[*].instance_type shows each node's type.", spec.Types[0]))
		}
	}
	if n := len(nodes); n >= spec.MinSize && n < spec.Size {
		diags.AddWarning(fmt.Sprintf("node pool (%s) has %d of %d nodes", spec.PoolID, n, spec.Size),
			"Stock ran out above min_size. Tried:\n  "+strings.Join(out.Attempts, "\n  ")+"\nThe next apply tries again for the rest.")
	}
	return nodes
}

// nodesPrice is what the nodes cost per hour (0 for none); a failed price lookup is a warning.
func (r *nodePoolResource) nodesPrice(ctx context.Context, spec nodepool.Spec, nodes []cloud.Instance, diags *diag.Diagnostics) float64 {
	if len(nodes) == 0 {
		return 0
	}
	price, _, err := r.client.HourlyPrice(ctx, spec.Types[0], nodes[0].ZoneID, spec.SpotForPrice(), len(nodes))
	if err != nil {
		diags.AddWarning(fmt.Sprintf("node pool (%s): no price estimate", spec.PoolID), err.Error())
	}
	return price
}
