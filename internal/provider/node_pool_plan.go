package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// The service wants AutoReleaseTime at least 30 minutes and at most three years ahead.
const (
	minAutoRelease = 30 * time.Minute
	maxAutoRelease = 3 * 365 * 24 * time.Hour
)

func (r *nodePoolResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{
		resourcevalidator.ExactlyOneOf(path.MatchRoot("gpu_model"), path.MatchRoot("instance_type")),
		resourcevalidator.ExactlyOneOf(path.MatchRoot("size"), path.MatchRoot("autoscaling")),
	}
}

// ValidateConfig runs the checks that need nothing but the configuration.
func (r *nodePoolResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg nodePoolModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateBundle(ctx, &cfg, &resp.Diagnostics)
	if !cfg.GPUsPerNode.IsNull() && cfg.GPUModel.IsNull() && !cfg.InstanceType.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("gpus_per_node"), "gpus_per_node needs gpu_model",
			"gpus_per_node picks a size of gpu_model. With instance_type, the type fixes the GPU count: remove gpus_per_node.")
	}
	if v := cfg.GPUModel; !v.IsNull() && !v.IsUnknown() {
		if _, err := catalog.MapGPUModel(v.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("gpu_model"), fmt.Sprintf("Unknown GPU model %q", v.ValueString()), err.Error())
		}
	}
	if v := cfg.InstanceType; !v.IsNull() && !v.IsUnknown() {
		if _, err := catalog.ParseInstanceType(v.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("instance_type"), fmt.Sprintf("Unknown instance type %q", v.ValueString()), err.Error())
		}
	}
	if !cfg.Size.IsNull() && !cfg.Size.IsUnknown() && !cfg.MinSize.IsNull() && !cfg.MinSize.IsUnknown() && cfg.MinSize.ValueInt64() > cfg.Size.ValueInt64() {
		resp.Diagnostics.AddAttributeError(path.Root("min_size"), "min_size above size",
			fmt.Sprintf("min_size = %d is more than size = %d: the floor cannot be above the pool. Lower min_size or raise size.", cfg.MinSize.ValueInt64(), cfg.Size.ValueInt64()))
	}
	if v := cfg.AutoReleaseAfter; !v.IsNull() && !v.IsUnknown() {
		if _, err := parseAutoRelease(v.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("auto_release_after"), fmt.Sprintf("Invalid auto_release_after %q", v.ValueString()), err.Error())
		}
	}
	nested, _, d := cfg.nested(ctx)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if d := nested.SystemDisk; d != nil {
		checkDiskConfig(path.Root("system_disk"), *d, &resp.Diagnostics)
	}
	for i, d := range nested.DataDisks {
		checkDiskConfig(path.Root("data_disks").AtListIndex(i), d, &resp.Diagnostics)
	}
	if s := nested.Spot; s != nil && !s.Strategy.IsUnknown() {
		switch s.Strategy.ValueString() {
		case "SpotWithPriceLimit":
			if s.MaxHourlyPrice.IsNull() {
				resp.Diagnostics.AddAttributeError(path.Root("spot").AtName("max_hourly_price"), "SpotWithPriceLimit needs max_hourly_price",
					"Set spot.max_hourly_price to the most a node may cost per hour, or use strategy = \"SpotAsPriceGo\".")
			}
		default:
			if !s.MaxHourlyPrice.IsNull() {
				resp.Diagnostics.AddAttributeError(path.Root("spot").AtName("max_hourly_price"), "max_hourly_price needs SpotWithPriceLimit",
					fmt.Sprintf("spot.strategy = %q takes no price limit: remove max_hourly_price or use SpotWithPriceLimit.", s.Strategy.ValueString()))
			}
		}
	}
	checkControlPlane(cfg.Size, nested.Kubernetes, !cfg.Bootstrap.Equal(types.BoolValue(false)), &resp.Diagnostics)
	checkControlPlaneWaves(nested.Kubernetes, nested.UpdateStrategy, !cfg.Bootstrap.Equal(types.BoolValue(false)), &resp.Diagnostics)
	checkJoinTimeout(nested.UpdateStrategy, &resp.Diagnostics)
	checkDrainTimeout(nested.UpdateStrategy, &resp.Diagnostics)
	checkAutoscalingConfig(&cfg, nested, &resp.Diagnostics)
	validateAcceptance(ctx, &cfg, nested.Kubernetes, &resp.Diagnostics)
	if k := nested.Kubernetes; k != nil {
		labels, d := mapOf(ctx, k.Labels)
		resp.Diagnostics.Append(d...)
		for key := range labels {
			if strings.HasPrefix(key, "gpucluster.io/") {
				resp.Diagnostics.AddAttributeError(path.Root("kubernetes").AtName("labels"), "Reserved label",
					fmt.Sprintf("kubernetes.labels[%q]: keys under gpucluster.io/ are set by the provider. Use another prefix.", key))
			}
		}
	}
	checkUserTags(cfg.Tags, 0, &resp.Diagnostics)
}

func checkDiskConfig(p path.Path, d diskModel, diags *diag.Diagnostics) {
	if d.Category.IsUnknown() || d.PerformanceLevel.IsUnknown() || d.SizeGiB.IsUnknown() {
		return
	}
	level := d.PerformanceLevel.ValueString()
	if d.Category.ValueString() == "cloud_auto" {
		level = "AutoPL"
	}
	if err := catalog.CheckDisk(d.Category.ValueString(), level, int(d.SizeGiB.ValueInt64())); err != nil {
		diags.AddAttributeError(p, fmt.Sprintf("Invalid disk: %s %s of %d GiB", d.Category.ValueString(), d.PerformanceLevel.ValueString(), d.SizeGiB.ValueInt64()), err.Error())
	}
}

func parseAutoRelease(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: write it like \"72h\" or \"90m\"", s)
	}
	if d < minAutoRelease || d > maxAutoRelease {
		return 0, fmt.Errorf("%s is outside what ECS AutoReleaseTime accepts: give between 30m and 26280h (3 years)", d)
	}
	return d, nil
}

// region is the provider's region, "" without a client (unit tests).
func (r *nodePoolResource) region() string {
	if r.client == nil {
		return ""
	}
	return r.client.Region()
}

// ModifyPlan resolves the instance type and the catalog's findings, so the plan shows what will
// be built and an error stops it before anything is created. With a network that already exists,
// the checks that depend on it (eRDMA, placement, HPC cluster, zones) run here too; a network
// created in the same apply is checked at the start of the apply, before any node is asked for.
func (r *nodePoolResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan nodePoolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var state *nodePoolModel
	if !req.State.Raw.IsNull() {
		state = &nodePoolModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	if plan.PackageMirror.IsUnknown() {
		plan.PackageMirror = r.defaultPackageMirror(state)
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("package_mirror"), plan.PackageMirror)...)
	}
	if plan.Size.IsUnknown() || plan.Scenario.IsUnknown() || plan.GPUModel.IsUnknown() || plan.GPUsPerNode.IsUnknown() {
		return
	}
	if plan.MinSize.IsUnknown() {
		plan.MinSize = plan.Size
	}
	if _, known, d := plan.nested(ctx); !known || d.HasError() {
		// A nested block the computed values depend on is not known yet (for_each over a
		// variable that depends on another resource): they stay unknown; the apply resolves them.
		resp.Diagnostics.Append(d...)
		return
	}
	if plan.Autoscaling.IsUnknown() {
		return
	}
	autoscaling := !plan.Autoscaling.IsNull()
	if state != nil && autoscaling != !state.Autoscaling.IsNull() {
		// A fixed pool's nodes are not a scaling group's, nor the other way round.
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("autoscaling"))
	}
	if autoscaling && state != nil && req.Plan.Raw.Equal(req.State.Raw) {
		// The autoscaler owns the size: nodes coming and going are not drift.
		return
	}
	if state != nil && req.Plan.Raw.Equal(req.State.Raw) {
		// Nothing in the configuration changed: the network was checked when this state was
		// planned, so a no-change plan of a thousand nodes costs only the refresh (N/100 calls).
		// Drift of the nodes themselves still shows.
		replacing := warnReplaceRequests(state, &resp.Diagnostics)
		if replacing || state.nodesDrifted(int(state.Size.ValueInt64())) || r.backendsDrifted(ctx, state) {
			plan.forgetNodes()
			resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		}
		return
	}

	if r.planChanges(ctx, req.Config, &plan, state, autoscaling, &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	}
}

// planChanges is ModifyPlan for a changed configuration: the spec resolved against the network
// (when it exists) and the catalog, the checks that need the cloud, and drift of a fixed pool's
// nodes. planned is false when it stopped before the plan's values were resolved.
func (r *nodePoolResource) planChanges(ctx context.Context, config tfsdk.Config, plan *nodePoolModel, state *nodePoolModel, autoscaling bool, diags *diag.Diagnostics) (planned bool) {
	var network *nodepool.Network
	if r.client != nil && !plan.NetworkID.IsUnknown() {
		n, err := loadPoolNetwork(ctx, r.client, plan.NetworkID.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root("network_id"), "Reading the node pool's network", err.Error())
			return false
		}
		network = &n
	}
	in, d := r.bootstrapInputs(ctx, plan, config)
	diags.Append(d...)
	spec, d := planSpec(ctx, plan, network, "", false, in)
	diags.Append(d...)
	if diags.HasError() {
		return false
	}
	if autoscaling {
		r.checkBudget(ctx, spec, diags)
	}
	spotStocks := r.checkSpotOffered(ctx, spec, diags)
	if !diags.HasError() {
		// After the checks above: a plan they refuse is not checked for quota too.
		r.checkPoolPreflight(ctx, spec, state, spotStocks, diags)
	}
	checkKubernetesUpgrade(ctx, plan, state, diags)
	warnAutoscaledWorkerUpgrade(ctx, plan, state, spec.Role, autoscaling, diags)
	if state != nil && !autoscaling {
		// Drift: nodes deleted behind Terraform's back, or not running. Marking the nodes unknown
		// makes the plan show it and the apply bring the pool back to its size.
		replacing := warnReplaceRequests(state, diags)
		if replacing || state.nodesDrifted(spec.Size) {
			plan.forgetNodes()
		} else if state.Size.Equal(plan.Size) && state.InstanceType.Equal(plan.InstanceType) {
			plan.EstimatedHourlyPrice = state.EstimatedHourlyPrice
		}
	}
	return true
}

// warnReplaceRequests warns of each node of a fixed pool whose GPU health agent asked for a new
// instance, naming the node and why, and answers whether there is one: the plan then shows the
// nodes replaced, and the apply rolls those nodes as outdated ones.
func warnReplaceRequests(state *nodePoolModel, diags *diag.Diagnostics) bool {
	requests := state.replaceRequests()
	for _, id := range slices.Sorted(maps.Keys(requests)) {
		diags.AddAttributeWarning(path.Root("nodes"), fmt.Sprintf("Node %s is replaced: %s", id, requests[id]),
			fmt.Sprintf("The GPU health agent on node %s found a GPU no reset mends (%s), moved the node's GPU pods off it and tagged "+
				"its instance %s. This apply replaces the node as it rolls an outdated one: it is stopped normally, so its "+
				"kubelet ends what still runs there, then released, and a new node joins in its place. To keep the node, "+
				"remove the tag from the instance before applying.", id, requests[id], tagging.ReplaceRequested))
	}
	return len(requests) > 0
}

// gpuProductLabel is the nvidia.com/gpu.product value: the datasheet model where the vendor names
// it, otherwise the family's class ("A100-80GB-class"), never a name the vendor does not use.
func gpuProductLabel(it catalog.InstanceType) string {
	name := it.GPU
	if !it.GPUModelStated {
		name += "-class"
	}
	return strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(name)
}

func findingDetail(f catalog.Finding) string {
	var b strings.Builder
	b.WriteString(f.Message)
	if f.Requirement != "" {
		fmt.Fprintf(&b, "\nRequirement: %s.", f.Requirement)
	}
	if f.Measured != "" {
		fmt.Fprintf(&b, "\nMeasured: %s.", f.Measured)
	}
	if f.Hint != "" {
		fmt.Fprintf(&b, "\nFix: %s", f.Hint)
	}
	return b.String()
}

// resolveSpec is planSpec at apply time, when the network must exist.
func (r *nodePoolResource) resolveSpec(ctx context.Context, plan *nodePoolModel, config tfsdk.Config) (nodepool.Spec, diag.Diagnostics) {
	var diags diag.Diagnostics
	network, err := loadPoolNetwork(ctx, r.client, plan.NetworkID.ValueString())
	if err != nil {
		diags.AddAttributeError(path.Root("network_id"), "Reading the node pool's network", err.Error())
		return nodepool.Spec{}, diags
	}
	keep := ""
	if !plan.InstanceType.IsNull() && !plan.InstanceType.IsUnknown() {
		keep = plan.InstanceType.ValueString()
	}
	in, d := r.bootstrapInputs(ctx, plan, config)
	diags.Append(d...)
	spec, d := planSpec(ctx, plan, &network, keep, true, in)
	diags.Append(d...)
	r.uploadBundle(ctx, spec, &diags) // before any node is asked for
	if nested, _, d := plan.nested(ctx); !d.HasError() {
		spec.Acceptance, d = acceptanceGate(ctx, plan, spec, nested.Kubernetes, r.region())
		diags.Append(d...)
	}
	plan.BootstrapBundleKey = bundleKeyValue(spec)
	return spec, diags
}

// poolSelectErrorPath is the attribute a catalog.Select error is about, from the error's data:
// gpus_per_node only when the user set it (otherwise the count came from the scenario and the
// model is what to change).
func poolSelectErrorPath(err error, gpusPerNodeSet bool) path.Path {
	p := planErrorPath(err, path.Root("gpu_model"))
	if p.Equal(path.Root("gpus_per_node")) && !gpusPerNodeSet {
		return path.Root("gpu_model")
	}
	return p
}

// defaultPackageMirror is package_mirror when unset: a pool keeps the mirror it was made with (so a
// provider upgrade rolls no nodes); a new one takes its region's default, the in-VPC mirror in
// mainland China.
func (r *nodePoolResource) defaultPackageMirror(state *nodePoolModel) types.String {
	if state != nil && !state.PackageMirror.IsNull() && !state.PackageMirror.IsUnknown() {
		return state.PackageMirror
	}
	return types.StringValue(bootstrap.DefaultPackageMirror(r.region()))
}
