package provider

// A control-plane node pool behind a gpucluster_control_plane_endpoint: its size follows etcd's
// quorum, and the endpoint's load balancer has exactly the pool's running nodes as backends.

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
)

// controlPlaneSizes are the etcd member counts a control plane may have: an odd number keeps a
// majority through the loss of (n-1)/2 members, and more than 5 only slows writes down.
var controlPlaneSizes = []int64{1, 3, 5}

// joinControlPlaneSizes are the sizes of a control-plane pool that joins the first node's: with
// it, 3 or 5 etcd members.
var joinControlPlaneSizes = []int64{2, 4}

// checkControlPlane is the plan-time check of a pool's role, size, load balancer and the
// first-node-only settings. bootstrapped is false when the pool renders no node bootstrap
// (bootstrap = false): then the user's own image decides who runs kubeadm init, and only etcd's
// sizes are checked.
func checkControlPlane(size types.Int64, k *k8sModel, bootstrapped bool, diags *diag.Diagnostics) {
	if k == nil || k.Role.IsUnknown() {
		return
	}
	k8sPath := path.Root("kubernetes")
	lbPath := k8sPath.AtName("load_balancer_id")
	lbSet := !k.LoadBalancerID.IsNull()
	if k.Role.ValueString() != bootstrap.RoleControlPlane {
		if lbSet {
			diags.AddAttributeError(lbPath, "load_balancer_id is for a control plane",
				fmt.Sprintf("kubernetes.load_balancer_id is set on a pool with role %q: only the API servers of a control plane sit behind the "+
					"endpoint's load balancer. Remove it here, or set kubernetes.role = %q.", orDefaultRole(k.Role.ValueString()), bootstrap.RoleControlPlane))
		}
		if !k.ControlPlaneInit.IsNull() {
			diags.AddAttributeError(k8sPath.AtName("control_plane_init"), "control_plane_init is for a control plane",
				fmt.Sprintf("kubernetes.control_plane_init is set on a pool with role %q: it says whether a control-plane pool creates the cluster "+
					"or joins it. Remove it here, or set kubernetes.role = %q.", orDefaultRole(k.Role.ValueString()), bootstrap.RoleControlPlane))
		}
		checkFirstNodeOnly(k, "a "+orDefaultRole(k.Role.ValueString())+" pool", diags)
		return
	}
	if k.ControlPlaneInit.IsUnknown() || size.IsNull() || size.IsUnknown() {
		return
	}
	n := size.ValueInt64()
	if !bootstrapped {
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
		return
	}
	if !k.joinsControlPlane() {
		if n != 1 {
			diags.AddAttributeError(path.Root("size"), fmt.Sprintf("First control-plane pool of %d nodes", n),
				fmt.Sprintf("size = %d on the first control-plane pool (kubernetes.control_plane_init = true, the default for a control plane): "+
					"every node of a pool gets the same bootstrap, and kubeadm init must run once per cluster, or each node is its own cluster. "+
					"Use size = 1 here; for a highly available control plane of %d, add a second control-plane pool of size = %d with "+
					"control_plane_init = false, the same load_balancer_id and certificate_key (gpucluster_cluster_ca.<name>.certificate_key) "+
					"on both pools.", n, n, n-1))
		}
		return
	}
	if !slices.Contains(joinControlPlaneSizes, n) {
		diags.AddAttributeError(path.Root("size"), fmt.Sprintf("Joining control-plane pool of %d nodes", n),
			fmt.Sprintf("size = %d with control_plane_init = false: with the first control-plane node that makes %d etcd members. etcd needs a "+
				"majority of its members, so an even count survives no more failures than the odd count below it, and more than 5 slow every "+
				"write. Use size = 2 (3 members, survives one lost) or 4 (5 members, survives two).", n, n+1))
	}
	if !lbSet && k.APIEndpoint.IsNull() {
		diags.AddAttributeError(lbPath, "Joining control-plane pool without an endpoint",
			"kubernetes.load_balancer_id and kubernetes.api_endpoint are both unset: with control_plane_init = false the nodes join the control plane "+
				"through its load balancer. Set kubernetes.load_balancer_id = "+
				"gpucluster_control_plane_endpoint.<name>.load_balancer_id (the same as on the first pool), or kubernetes.api_endpoint.")
	}
	if k.CertificateKey.IsNull() && k.CertificateKeyWO.IsNull() {
		diags.AddAttributeError(k8sPath.AtName("certificate_key"), "Joining control-plane pool without a certificate key",
			"kubernetes.certificate_key is unset: with control_plane_init = false the nodes download the control-plane certificates the first node "+
				"uploaded, encrypted with the certificate key. Set kubernetes.certificate_key = gpucluster_cluster_ca.<name>.certificate_key here and on the first pool "+
				"(or certificate_key_wo = ephemeral.gpucluster_cluster_ca.<name>.certificate_key with a seeded CA).")
	}
	checkFirstNodeOnly(k, "a joining control-plane pool (control_plane_init = false)", diags)
}

// checkFirstNodeOnly refuses the settings only the first control-plane node uses.
func checkFirstNodeOnly(k *k8sModel, what string, diags *diag.Diagnostics) {
	for name, v := range map[string]attr.Value{"addons": k.Addons, "ca_cert_pem": k.CACertPEM, "ca_key_pem": k.CAKeyPEM, "ca_key_pem_wo": k.CAKeyPEMWO} {
		if !v.IsNull() {
			diags.AddAttributeError(path.Root("kubernetes").AtName(name), name+" is for the first control-plane pool",
				fmt.Sprintf("kubernetes.%s is set on %s: only the first control-plane node (role control_plane, control_plane_init = true) "+
					"uses it. Move it to that pool; other nodes pin the CA with ca_cert_hash.", name, what))
		}
	}
}

func orDefaultRole(role string) string {
	if role == "" {
		return bootstrap.RoleGPUWorker
	}
	return role
}

// backendsDrifted reports whether a node of a control-plane pool's state is missing from its
// load balancer's backend servers (taken out outside Terraform; nodepool.BackendsMissing).
func (r *nodePoolResource) backendsDrifted(ctx context.Context, state *nodePoolModel) bool {
	lbID := poolLoadBalancer(ctx, state)
	if lbID == "" || r.client == nil || state.Nodes.IsNull() || state.Nodes.IsUnknown() {
		return false
	}
	return nodepool.BackendsMissing(ctx, r.client, lbID, nodeIDs(*state))
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
