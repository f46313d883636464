package provider

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
)

var (
	_ resource.ResourceWithConfigure        = (*nodePoolResource)(nil)
	_ resource.ResourceWithImportState      = (*nodePoolResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*nodePoolResource)(nil)
	_ resource.ResourceWithValidateConfig   = (*nodePoolResource)(nil)
	_ resource.ResourceWithConfigValidators = (*nodePoolResource)(nil)
)

func newNodePoolResource() resource.Resource { return &nodePoolResource{} }

// nodePoolResource is N GPU nodes of one scenario: created in batches of up to 100 under
// deterministic ClientTokens, found again by tag (never one call per node), scaled and rolled in
// place.
type nodePoolResource struct {
	client *cloud.Client
}

// Values users choose from; the validators and the descriptions read the same slices.
var (
	spotStrategies = []string{"NoSpot", "SpotAsPriceGo", "SpotWithPriceLimit"}
	diskCategories = []string{"cloud_essd", "cloud_auto", "elastic_ephemeral_disk_standard", "elastic_ephemeral_disk_premium"}
	essdLevels     = []string{"PL0", "PL1", "PL2", "PL3"}
	defaultImageID = "ubuntu_22_04_x64_20G_alibase_20240101.vhd"
	// RAM role names: 1-64 letters, digits, periods and hyphens (RAM CreateRole, RoleName).
	ramRoleNameRE = regexp.MustCompile(`^[A-Za-z0-9.-]{1,64}$`)
)

// maxPoolSize is the most nodes one pool holds: the largest research clusters' GPU node counts.
// The account's ECS quota, not this number, is what usually stops a pool first.
const maxPoolSize = 10000

// Defaults for timeouts: a thousand nodes boot in minutes, but stock can make it slower.
const (
	nodePoolCreateTimeout = 60 * time.Minute
	nodePoolUpdateTimeout = 60 * time.Minute
	nodePoolDeleteTimeout = 30 * time.Minute
)

func (r *nodePoolResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_pool"
}

func (r *nodePoolResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (r *nodePoolResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan nodePoolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, nodePoolCreateTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	spec, diags := r.resolveSpec(ctx, &plan, req.Config)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	poolID := nodepool.NewPoolID()
	spec.PoolID = poolID
	plan.ID = types.StringValue(poolID)
	if spec.Autoscale != nil {
		r.applyAutoscaling(ctx, spec, &plan, &resp.Diagnostics)
		keepAcceptanceResults(&plan, nil) // autoscaled pools are not gated
		r.pruneBundles(ctx, spec, nil, plan.nodeIDs(), &resp.Diagnostics)
		if !plan.ScalingGroupID.IsUnknown() {
			// Whatever happened after the group exists, state records it: never an orphan.
			resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		}
		return
	}
	plan.ScalingGroupID = types.StringNull()
	summary := fmt.Sprintf("creating node pool %q (%s)", plan.Name.ValueString(), poolID)

	// Nodes of an earlier apply of this pool that was killed before it could save state carry
	// the pool's name and network: adopt them so a re-run never doubles the pool.
	orphans, err := nodepool.AdoptOrphans(ctx, r.client, spec)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}

	outcome, err := nodepool.Grow(ctx, r.client, spec, "create", orphans, int(plan.Size.ValueInt64()))
	if err == nil {
		r.runAcceptance(ctx, spec, &plan, &outcome, &resp.Diagnostics)
	}
	keepAcceptanceResults(&plan, nil)
	// Whatever happened, every node that exists is recorded: a failed create leaves a tainted
	// resource that knows its nodes, never an orphan.
	r.finish(ctx, spec, &plan, outcome, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
	}
	r.pruneBundles(ctx, spec, nil, plan.nodeIDs(), &resp.Diagnostics)
}

func (r *nodePoolResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state nodePoolModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !state.ScalingGroupID.IsNull() {
		if !r.readAutoscaled(ctx, &state, &resp.Diagnostics) {
			resp.State.RemoveResource(ctx)
			return
		}
		resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
		return
	}
	nodes, err := r.client.ListInstancesByTags(ctx, map[string]string{tagPool: state.ID.ValueString()})
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("reading node pool (%s)", state.ID.ValueString()), err.Error())
		return
	}
	if len(nodes) < int(state.Size.ValueInt64()) {
		resp.Diagnostics.AddWarning(fmt.Sprintf("node pool (%s) has fewer nodes than its size", state.ID.ValueString()),
			fmt.Sprintf("%d of %d nodes exist (deleted outside Terraform, or released by auto_release_after). The next apply brings the pool back to its size.", len(nodes), state.Size.ValueInt64()))
	}
	resp.Diagnostics.Append(state.setNodes(ctx, nodes)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *nodePoolResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state nodePoolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, nodePoolUpdateTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	plan.ID = state.ID
	spec, diags := r.resolveSpec(ctx, &plan, req.Config)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec.PoolID = state.ID.ValueString()
	setClusterUpgrade(ctx, &plan, &state, &spec, r.region(), &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	oldBundles, diags := bundleLocation(ctx, &state, r.region())
	resp.Diagnostics.Append(diags...)
	if spec.Autoscale != nil {
		r.applyAutoscaling(ctx, spec, &plan, &resp.Diagnostics)
		keepAcceptanceResults(&plan, &state)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		r.pruneBundles(ctx, spec, oldBundles, plan.nodeIDs(), &resp.Diagnostics)
		return
	}
	if old := poolLoadBalancer(ctx, &state); old != spec.LoadBalancerID {
		// Moved to another load balancer, or off one: the old one loses the pool's nodes.
		if err := nodepool.DetachBackends(ctx, r.client, old, nodeIDs(state)); err != nil {
			resp.Diagnostics.AddError(fmt.Sprintf("updating node pool (%s)", spec.PoolID), err.Error())
			return
		}
	}
	outcome, err := nodepool.Reconcile(ctx, r.client, spec)
	if err == nil && acceptanceDue(&state, outcome) {
		r.runAcceptance(ctx, spec, &plan, &outcome, &resp.Diagnostics)
	}
	keepAcceptanceResults(&plan, &state)
	r.finish(ctx, spec, &plan, outcome, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("updating node pool (%s)", spec.PoolID), err.Error())
	}
	r.pruneBundles(ctx, spec, oldBundles, plan.nodeIDs(), &resp.Diagnostics)
}

func (r *nodePoolResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state nodePoolModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, nodePoolDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	summary := fmt.Sprintf("deleting node pool (%s)", state.ID.ValueString())
	if !state.ScalingGroupID.IsNull() {
		warnings, err := nodepool.DeleteScalingGroup(ctx, r.client, state.ID.ValueString(), state.ScalingGroupID.ValueString())
		for _, w := range warnings {
			resp.Diagnostics.AddWarning(summary, w)
		}
		if err != nil {
			resp.Diagnostics.AddError(summary, err.Error())
			return
		}
		r.deleteBundles(ctx, &state, &resp.Diagnostics)
		return
	}

	warnings, err := nodepool.DeleteNodes(ctx, r.client, state.ID.ValueString(), poolLoadBalancer(ctx, &state), state.nodeIDs())
	for _, w := range warnings {
		resp.Diagnostics.AddWarning(summary, w)
	}
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	// After the nodes: a node being deleted needs its bundle no more, and a failed delete keeps
	// the bundles its remaining nodes may still fetch.
	r.deleteBundles(ctx, &state, &resp.Diagnostics)
}

func (r *nodePoolResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id := req.ID
	if !poolIDPattern.MatchString(id) {
		resp.Diagnostics.AddError("importing node pool", fmt.Sprintf("%q is not a pool id: pool ids look like np-0123456789ab (the `id` attribute, also the `gpucluster:pool` tag on every node).", id))
		return
	}
	nodes, err := r.client.ListInstancesByTags(ctx, map[string]string{tagPool: id})
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("importing node pool (%s)", id), err.Error())
		return
	}
	if imported, found := r.importAutoscaled(ctx, id, nodes, &resp.Diagnostics); found || resp.Diagnostics.HasError() {
		if imported != nil {
			imported.PackageMirror = r.importedPackageMirror(ctx, nodes, &resp.Diagnostics)
			resp.Diagnostics.Append(resp.State.Set(ctx, imported)...)
		}
		return
	}
	if len(nodes) == 0 {
		resp.Diagnostics.AddError(fmt.Sprintf("importing node pool (%s)", id), "no instance carries the tag gpucluster:pool="+id+" in region "+r.client.Region())
		return
	}
	state, diags := importedPool(ctx, id, nodes)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	state.PackageMirror = r.importedPackageMirror(ctx, nodes, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// importedPackageMirror is the package_mirror an imported pool was made with, read back from its
// first node's user data; the region's default (what a configuration that leaves it unset plans)
// when there is no node to read or its user data is not our bootstrap's. A failed read fails the
// import: a guessed mirror that differs from the nodes' would roll them at the next apply.
func (r *nodePoolResource) importedPackageMirror(ctx context.Context, nodes []cloud.Instance, diags *diag.Diagnostics) types.String {
	if len(nodes) > 0 {
		raw, err := r.client.UserData(ctx, nodes[0].ID)
		if err != nil {
			diags.AddError("importing node pool: reading a node's user data for package_mirror", err.Error())
			return types.StringNull()
		}
		if mirror, ok := bootstrap.MirrorInUserData(raw); ok {
			return types.StringValue(mirror)
		}
	}
	return types.StringValue(bootstrap.DefaultPackageMirror(r.region()))
}
