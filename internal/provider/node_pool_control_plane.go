package provider

// A control-plane node pool behind a gpucluster_control_plane_endpoint: its size follows etcd's
// quorum, and the endpoint's load balancer has exactly the pool's running nodes as backends.

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// controlPlaneSizes are the etcd member counts a control plane may have: an odd number keeps a
// majority through the loss of (n-1)/2 members, and more than 5 only slows writes down.
var controlPlaneSizes = []int64{1, 3, 5}

// checkControlPlane is the plan-time check of a pool's role, size and load balancer.
func checkControlPlane(size types.Int64, k *k8sModel, diags *diag.Diagnostics) {
	if k == nil || k.Role.IsUnknown() {
		return
	}
	lbPath := path.Root("kubernetes").AtName("load_balancer_id")
	lbSet := !k.LoadBalancerID.IsNull()
	if k.Role.ValueString() != bootstrap.RoleControlPlane {
		if lbSet {
			diags.AddAttributeError(lbPath, "load_balancer_id is for a control plane",
				fmt.Sprintf("kubernetes.load_balancer_id is set on a pool with role %q: only the API servers of a control plane sit behind the "+
					"endpoint's load balancer. Remove it here, or set kubernetes.role = %q.", orDefaultRole(k.Role.ValueString()), bootstrap.RoleControlPlane))
		}
		return
	}
	if size.IsNull() || size.IsUnknown() {
		return
	}
	n := size.ValueInt64()
	if !slices.Contains(controlPlaneSizes, n) {
		diags.AddAttributeError(path.Root("size"), fmt.Sprintf("Control plane of %d nodes", n),
			fmt.Sprintf("size = %d: a control plane runs etcd, which needs a majority of its members to work, so an even count "+
				"survives no more failures than the odd count below it, and more than 5 members slow every write. "+
				"Use size = 1 (no high availability), 3 (survives one node lost) or 5 (survives two); 3 and 5 need kubernetes.load_balancer_id.", n))
		return
	}
	if n > 1 && !lbSet {
		diags.AddAttributeError(lbPath, fmt.Sprintf("Control plane of %d nodes without a load balancer", n),
			fmt.Sprintf("size = %d with no kubernetes.load_balancer_id: the API servers need one stable address in front of them, or "+
				"every node is its own one-node cluster. Add a gpucluster_control_plane_endpoint and set kubernetes.load_balancer_id = "+
				"gpucluster_control_plane_endpoint.<name>.load_balancer_id, or use size = 1.", n))
	}
}

func orDefaultRole(role string) string {
	if role == "" {
		return bootstrap.RoleGPUWorker
	}
	return role
}

// syncBackends makes the load balancer's backend servers the running nodes among nodes, no more,
// no less. No call without a load balancer.
func (r *nodePoolResource) syncBackends(ctx context.Context, lbID string, nodes []cloud.Instance) error {
	if lbID == "" {
		return nil
	}
	want := make([]cloud.BackendServer, 0, len(nodes))
	for _, n := range nodes {
		if n.Status == "Running" {
			want = append(want, cloud.BackendServer{ServerID: n.ID})
		}
	}
	err := r.client.SetBackendServers(ctx, lbID, want)
	if err != nil && ctx.Err() == nil {
		// Once more from a fresh read: an answer lost after the service acted (an add that did
		// happen) makes the first attempt's next step fail, and the second sees it done.
		err = r.client.SetBackendServers(ctx, lbID, want)
	}
	if err != nil {
		return fmt.Errorf("keeping the backend servers of load balancer %s equal to the pool's nodes: %w", lbID, err)
	}
	return nil
}

// detachBackends takes the pool's nodes ids out of the load balancer's backend servers, leaving
// any other; a load balancer that is gone has none to take out.
func (r *nodePoolResource) detachBackends(ctx context.Context, lbID string, ids []string) error {
	if lbID == "" || len(ids) == 0 {
		return nil
	}
	lb, err := r.client.FindLoadBalancer(ctx, lbID)
	if cloud.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	keep := slices.DeleteFunc(slices.Clone(lb.Backends), func(b cloud.BackendServer) bool { return slices.Contains(ids, b.ServerID) })
	if len(keep) == len(lb.Backends) {
		return nil
	}
	if err := r.client.SetBackendServers(ctx, lbID, keep); err != nil {
		return fmt.Errorf("taking the pool's nodes out of load balancer %s: %w", lbID, err)
	}
	return nil
}

// backendsDrifted reports whether the load balancer of a control-plane pool's state has other
// backend servers than the pool's nodes (one changed outside Terraform). An error counts as no
// drift: the refresh already read the nodes, and the next plan looks again.
func (r *nodePoolResource) backendsDrifted(ctx context.Context, state *nodePoolModel) bool {
	lbID := poolLoadBalancer(ctx, state)
	if lbID == "" || r.client == nil || state.Nodes.IsNull() || state.Nodes.IsUnknown() {
		return false
	}
	lb, err := r.client.FindLoadBalancer(ctx, lbID)
	if err != nil {
		return false
	}
	nodes := nodeIDs(*state)
	var backends []string
	for _, b := range lb.Backends {
		backends = append(backends, b.ServerID)
	}
	slices.Sort(nodes)
	slices.Sort(backends)
	return !slices.Equal(nodes, backends)
}

// poolLoadBalancer is kubernetes.load_balancer_id of a pool's model, or "".
func poolLoadBalancer(ctx context.Context, m *nodePoolModel) string {
	if m.Kubernetes.IsNull() || m.Kubernetes.IsUnknown() {
		return ""
	}
	var k k8sModel
	if d := m.Kubernetes.As(ctx, &k, basetypes.ObjectAsOptions{}); d.HasError() {
		return ""
	}
	return k.LoadBalancerID.ValueString()
}

// nodeIDs are the ids of the nodes a pool's model records.
func nodeIDs(m nodePoolModel) []string {
	var ids []string
	if m.Nodes.IsNull() || m.Nodes.IsUnknown() {
		return ids
	}
	for _, e := range m.Nodes.Elements() {
		if obj, ok := e.(types.Object); ok {
			if id, ok := obj.Attributes()["id"].(types.String); ok {
				ids = append(ids, id.ValueString())
			}
		}
	}
	return ids
}
