package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acceptance"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
)

// The node pool's acceptance gate (issue #33): its settings, the plan-time checks of them, the
// gate run after a create or an update that made nodes, and the results it records. The
// workflow is nodepool.RunAcceptance; the checks and the verdict are internal/acceptance's.

// Defaults of the gate's settings.
const (
	defaultAcceptanceTimeout    = 30 * time.Minute
	defaultAcceptanceReplaces   = 2
	maxAcceptanceReplacementsAt = 10
)

type acceptanceModel struct {
	Enabled          types.Bool   `tfsdk:"enabled"`
	Timeout          types.String `tfsdk:"timeout"`
	MaxReplacements  types.Int64  `tfsdk:"max_replacements"`
	ControlPlanePool types.String `tfsdk:"control_plane_pool"`
}

var acceptanceAttrTypes = map[string]attr.Type{
	"enabled": types.BoolType, "timeout": types.StringType, "max_replacements": types.Int64Type, "control_plane_pool": types.StringType,
}

var acceptanceNodeAttrTypes = map[string]attr.Type{
	"instance_id": types.StringType, "node": types.StringType, "passed": types.BoolType, "dcgm": types.StringType,
	"busbw_gbs": types.Float64Type, "floor_gbs": types.Float64Type, "failure": types.StringType,
}

var acceptanceResultsAttrTypes = map[string]attr.Type{
	"passed": types.BoolType, "nodes": types.ListType{ElemType: types.ObjectType{AttrTypes: acceptanceNodeAttrTypes}},
	"all_reduce_busbw_gbs": types.Float64Type, "all_reduce_floor_gbs": types.Float64Type,
	"parallel_efficiency": types.Float64Type, "parallel_efficiency_target": types.Float64Type, "fp64_gflops": types.Float64Type,
	"replaced": types.ListType{ElemType: types.StringType}, "failures": types.ListType{ElemType: types.StringType},
}

func nodePoolAcceptanceAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"acceptance": schema.SingleNestedAttribute{
			Optional: true,
			MarkdownDescription: "The acceptance gate: once the pool's new nodes run, a control-plane node checks them (per node DCGM's level-2 diagnostic " +
				"and nccl-tests' all-reduce over its GPUs; across the pool an all-reduce against a bus bandwidth floor from the catalog's interconnect; " +
				"for molecular dynamics and simulation HPCG's parallel efficiency against the scenario's target). A node that fails is replaced, at most " +
				"`max_replacements` in all; then the apply fails naming the node, the check and the figure. Off when unset (the scenario modules set it). " +
				"Fixed pools with the built-in bootstrap only. See the GPU health guide for the thresholds and their sources.",
			Attributes: map[string]schema.Attribute{
				"enabled": schema.BoolAttribute{Optional: true, MarkdownDescription: "Run the gate (default `true` when `acceptance` is set)."},
				"timeout": schema.StringAttribute{Optional: true, MarkdownDescription: "How long one round of checks may take, a Go duration (default `30m`)."},
				"max_replacements": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.Between(0, maxAcceptanceReplacementsAt)},
					MarkdownDescription: "Most nodes the gate replaces in one apply (default 2)."},
				"control_plane_pool": schema.StringAttribute{Optional: true,
					MarkdownDescription: "The `name` of the control-plane pool, in this pool's network, whose running node runs the checks (it holds kubectl and " +
						"the cluster's admin credentials). Required. A name, not the pool's id: the control plane's add-ons are rendered from the " +
						"worker pools, so a worker pool cannot refer to the control-plane pool without a cycle; the gate waits for its node to run."},
			},
		},
		"acceptance_results": schema.SingleNestedAttribute{
			Computed:            true,
			MarkdownDescription: "What the acceptance gate measured in the last apply that ran it: per node, and across the pool.",
			Attributes: map[string]schema.Attribute{
				"passed": schema.BoolAttribute{Computed: true, MarkdownDescription: "Every node and every check across the pool passed."},
				"nodes": schema.ListNestedAttribute{Computed: true, MarkdownDescription: "Each node's checks.", NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"instance_id": schema.StringAttribute{Computed: true, MarkdownDescription: "The node's instance."},
					"node":        schema.StringAttribute{Computed: true, MarkdownDescription: "The node's Kubernetes name."},
					"passed":      schema.BoolAttribute{Computed: true, MarkdownDescription: "The node passed its checks."},
					"dcgm":        schema.StringAttribute{Computed: true, MarkdownDescription: "`passed`, or the DCGM tests that failed."},
					"busbw_gbs":   schema.Float64Attribute{Computed: true, MarkdownDescription: "The all-reduce over the node's GPUs: bus bandwidth in GB/s (0 for one GPU)."},
					"floor_gbs":   schema.Float64Attribute{Computed: true, MarkdownDescription: "Its floor in GB/s."},
					"failure":     schema.StringAttribute{Computed: true, MarkdownDescription: "The check that failed and its figure; empty when passed."},
				}}},
				"all_reduce_busbw_gbs":       schema.Float64Attribute{Computed: true, MarkdownDescription: "The all-reduce across the pool's nodes, GB/s (0 for one node)."},
				"all_reduce_floor_gbs":       schema.Float64Attribute{Computed: true, MarkdownDescription: "Its floor, GB/s."},
				"parallel_efficiency":        schema.Float64Attribute{Computed: true, MarkdownDescription: "HPCG's strong-scaling efficiency from one node to all (0 when not measured)."},
				"parallel_efficiency_target": schema.Float64Attribute{Computed: true, MarkdownDescription: "The scenario's target (0 when it has none)."},
				"fp64_gflops":                schema.Float64Attribute{Computed: true, MarkdownDescription: "HPCG's FP64 rating on all the nodes, GFLOP/s (reported, not judged)."},
				"replaced":                   schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Instances the gate replaced."},
				"failures":                   schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "The checks across the pool that failed, with their figures."},
			},
		},
	}
}

// acceptanceSettings reads the acceptance block; nil when it is unset or disabled.
func acceptanceSettings(ctx context.Context, obj types.Object) (*acceptanceModel, diag.Diagnostics) {
	if obj.IsNull() || obj.IsUnknown() {
		return nil, nil
	}
	var m acceptanceModel
	diags := obj.As(ctx, &m, basetypes.ObjectAsOptions{})
	if diags.HasError() || (!m.Enabled.IsNull() && !m.Enabled.ValueBool()) {
		return nil, diags
	}
	return &m, diags
}

// validateAcceptance refuses, at plan time, a gate that cannot run on this pool.
func validateAcceptance(ctx context.Context, plan *nodePoolModel, k8s *k8sModel, diags *diag.Diagnostics) {
	m, d := acceptanceSettings(ctx, plan.Acceptance)
	diags.Append(d...)
	if m == nil {
		return
	}
	at := path.Root("acceptance")
	switch {
	case !plan.Autoscaling.IsNull():
		diags.AddAttributeError(at, "The acceptance gate is for fixed pools",
			"acceptance is set on an autoscaling pool: its nodes come and go with ESS after the apply, so no apply could hold them. "+
				"The GPU health agent checks and replaces an autoscaled pool's nodes while it runs. Remove acceptance, or set acceptance.enabled = false.")
	case k8s == nil:
		diags.AddAttributeError(at, "The acceptance gate needs the nodes in a cluster",
			"acceptance is set on a pool without kubernetes: the checks run as Kubernetes Jobs on the pool's nodes. Add the kubernetes block, or remove acceptance.")
	case k8s.Role.ValueString() == bootstrap.RoleControlPlane:
		diags.AddAttributeError(at, "The acceptance gate is for GPU pools",
			"acceptance is set on a control-plane pool, whose nodes have no GPU to check. Set it on the GPU worker pools instead.")
	case m.ControlPlanePool.IsNull():
		diags.AddAttributeError(at.AtName("control_plane_pool"), "The acceptance gate needs a control-plane pool",
			"acceptance.control_plane_pool is unset: the checks run on a control-plane node, which holds kubectl and the cluster's admin credentials. "+
				"Set it to the control-plane pool's name.")
	}
	if t := m.Timeout; !t.IsNull() && !t.IsUnknown() {
		if d, err := time.ParseDuration(t.ValueString()); err != nil || d < 5*time.Minute || d > 24*time.Hour {
			diags.AddAttributeError(at.AtName("timeout"), "Invalid acceptance timeout",
				fmt.Sprintf("acceptance.timeout = %q is not a duration from 5m to 24h (DCGM's level-2 diagnostic alone takes minutes; Cloud Assistant stops a command after 24 hours). "+
					"Give one such as \"30m\".", t.ValueString()))
		}
	}
}

// acceptanceGate is the pool's nodepool.Gate; nil when the gate is off or the pool has no GPU
// or no cluster to check it in.
func acceptanceGate(ctx context.Context, plan *nodePoolModel, spec nodepool.Spec, k8s *k8sModel, region string) (*nodepool.Gate, diag.Diagnostics) {
	m, diags := acceptanceSettings(ctx, plan.Acceptance)
	// The GPUs of the type the pool runs, not gpus_per_node: that input is null on a pool with a
	// pinned instance_type or the scenario's default count, and the gate would have been skipped.
	gpus := nodepool.GPUsPerNode(spec)
	if m == nil || k8s == nil || spec.Autoscale != nil || gpus < 1 {
		return nil, diags
	}
	timeout := defaultAcceptanceTimeout
	if !m.Timeout.IsNull() {
		timeout, _ = time.ParseDuration(m.Timeout.ValueString()) // validated at plan time
	}
	replaces := defaultAcceptanceReplaces
	if !m.MaxReplacements.IsNull() {
		replaces = int(m.MaxReplacements.ValueInt64())
	}
	_, nccl, d := k8sSoftware(ctx, k8s)
	diags.Append(d...)
	registry, _ := resolveImageRegistry(k8s.ImageRegistry, region)
	gate := &nodepool.Gate{Timeout: timeout, MaxReplacements: replaces, ControlPlanePool: m.ControlPlanePool.ValueString(), Network: spec.Network.ID}
	gate.Script = func(poolID string, nodes []acceptance.Node) (string, error) {
		o := acceptance.Options{PoolID: poolID, GPUs: gpus, Nodes: nodes, MPI: manifests.IsSimulation(spec.Scenario), ImageRegistry: registry}
		if len(nodes) > 1 {
			docs, err := manifests.RenderPoolAllReduce(manifests.Options{Scenario: spec.Scenario, WorkloadNamespace: acceptance.Namespace, Nodes: len(nodes),
				GPUsPerNode: gpus, ERDMA: spec.ERDMA, NCCLEnv: nccl, ImageRegistry: registry})
			if err != nil {
				return "", err
			}
			for _, doc := range docs {
				o.PoolAllReduceYAML += "---\n" + doc.YAML
			}
		}
		return acceptance.Script(o)
	}
	return gate, diags
}

// runAcceptance runs the gate after a create or update that made nodes, records what it saw,
// and turns its failure into an error naming the nodes, the checks and the figures.
func (r *nodePoolResource) runAcceptance(ctx context.Context, spec nodepool.Spec, plan *nodePoolModel, out *nodepool.Outcome, diags *diag.Diagnostics) {
	g, err := nodepool.RunAcceptance(ctx, r.client, spec, out)
	if g.Checked || len(g.Replaced) > 0 {
		plan.AcceptanceResults = acceptanceResultsValue(g)
	}
	if err != nil {
		diags.AddAttributeError(path.Root("acceptance"), fmt.Sprintf("node pool (%s) failed its acceptance gate", spec.PoolID), err.Error())
	}
}

// acceptanceResultsValue is the gate's outcome as the acceptance_results attribute.
func acceptanceResultsValue(g nodepool.GateOutcome) types.Object {
	v := g.Verdict
	nodes := make([]attr.Value, len(v.Nodes))
	for i, n := range v.Nodes {
		nodes[i] = types.ObjectValueMust(acceptanceNodeAttrTypes, map[string]attr.Value{
			"instance_id": types.StringValue(n.InstanceID), "node": types.StringValue(n.Node), "passed": types.BoolValue(n.Passed),
			"dcgm": types.StringValue(n.DCGM), "busbw_gbs": types.Float64Value(n.BusBWGBs), "floor_gbs": types.Float64Value(n.FloorGBs),
			"failure": types.StringValue(n.Failure),
		})
	}
	return types.ObjectValueMust(acceptanceResultsAttrTypes, map[string]attr.Value{
		"passed":               types.BoolValue(g.Checked && v.Passed()),
		"nodes":                types.ListValueMust(types.ObjectType{AttrTypes: acceptanceNodeAttrTypes}, nodes),
		"all_reduce_busbw_gbs": types.Float64Value(v.Pool.BusBWGBs), "all_reduce_floor_gbs": types.Float64Value(v.Pool.FloorGBs),
		"parallel_efficiency": types.Float64Value(v.Pool.Efficiency), "parallel_efficiency_target": types.Float64Value(v.Pool.Target),
		"fp64_gflops": types.Float64Value(v.Pool.FP64GFlops),
		"replaced":    stringList(g.Replaced), "failures": stringList(v.Pool.Failures),
	})
}

// keepAcceptanceResults carries the results of the last gate over an apply that did not run it
// (or sets null on a pool that never had one), so the attribute is always known after apply.
func keepAcceptanceResults(plan, state *nodePoolModel) {
	if !plan.AcceptanceResults.IsUnknown() {
		return
	}
	if state != nil && !state.AcceptanceResults.IsUnknown() {
		plan.AcceptanceResults = state.AcceptanceResults
		return
	}
	plan.AcceptanceResults = types.ObjectNull(acceptanceResultsAttrTypes)
}

// acceptanceDue says whether an update runs the gate: it made nodes the last gate did not see,
// or the last gate did not pass (a failed gate's pool is checked again by the next apply).
func acceptanceDue(state *nodePoolModel, out nodepool.Outcome) bool {
	known := map[string]bool{}
	for _, id := range nodeIDs(*state) {
		known[id] = true
	}
	for _, id := range out.IDs {
		if !known[id] {
			return true
		}
	}
	res := state.AcceptanceResults
	if res.IsNull() || res.IsUnknown() {
		return true
	}
	passed, ok := res.Attributes()["passed"].(types.Bool)
	return !ok || !passed.ValueBool()
}
