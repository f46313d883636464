package provider

import (
	"context"
	"fmt"
	"slices"
	"strconv"
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
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/poolplan"
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
	checkAutoscalingConfig(&cfg, nested, &resp.Diagnostics)
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
		if state.nodesDrifted(int(state.Size.ValueInt64())) || r.backendsDrifted(ctx, state) {
			plan.forgetNodes()
			resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		}
		return
	}

	var network *nodepool.Network
	if r.client != nil && !plan.NetworkID.IsUnknown() {
		n, err := loadPoolNetwork(ctx, r.client, plan.NetworkID.ValueString())
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("network_id"), "Reading the node pool's network", err.Error())
			return
		}
		network = &n
	}
	in, d := r.bootstrapInputs(ctx, &plan, req.Config)
	resp.Diagnostics.Append(d...)
	spec, diags := planSpec(ctx, &plan, network, "", false, in)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if autoscaling {
		r.checkBudget(ctx, spec, &resp.Diagnostics)
	}
	r.checkSpotOffered(ctx, spec, &resp.Diagnostics)
	if state != nil && !autoscaling {
		// Drift: nodes deleted behind Terraform's back, or not running. Marking the nodes unknown
		// makes the plan show it and the apply bring the pool back to its size.
		if state.nodesDrifted(spec.Size) {
			plan.forgetNodes()
		} else if state.Size.Equal(plan.Size) && state.InstanceType.Equal(plan.InstanceType) {
			plan.EstimatedHourlyPrice = state.EstimatedHourlyPrice
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// planSpec fills the plan's computed values (instance type, min size, zones, labels, taints,
// findings) and returns the resolved spec. Errors are diagnostics on the attribute to change.
// network is nil when it is not known yet; then the values that depend on it stay unknown.
// keepType, at apply time, is the instance type the plan showed.
// atApply is true when called from Create or Update: the node bootstrap is then rendered.
// in carries what the bootstrap needs beyond the plan (see bootstrapInputs).
func planSpec(ctx context.Context, plan *nodePoolModel, network *nodepool.Network, keepType string, atApply bool, in bootstrapInputs) (nodepool.Spec, diag.Diagnostics) {
	var diags diag.Diagnostics
	nested, _, d := plan.nested(ctx)
	diags.Append(d...)
	if diags.HasError() {
		return nodepool.Spec{}, diags
	}
	spec := nodepool.Spec{
		Name:     plan.Name.ValueString(),
		Scenario: plan.Scenario.ValueString(),
		Size:     int(plan.Size.ValueInt64()),
		MinSize:  int(plan.Size.ValueInt64()),
		Fallback: plan.InstanceTypeFallback.ValueBool(),
		ImageID:  plan.ImageID.ValueString(),
		RAMRole:  plan.RAMRoleName.ValueString(),
		UserData: plan.UserData.ValueString(),
		Spot:     "NoSpot",
	}
	if !plan.MinSize.IsNull() && !plan.MinSize.IsUnknown() {
		spec.MinSize = int(plan.MinSize.ValueInt64())
	}
	if s := nested.Spot; s != nil {
		spec.Spot = s.Strategy.ValueString()
		spec.SpotLimit = s.MaxHourlyPrice.ValueFloat64()
	}
	if a := nested.Autoscaling; a != nil {
		// The catalog checks the pool at its largest.
		spec.Autoscale = resolveAutoscaling(a, nested.Spot != nil)
		spec.Size, spec.MinSize = spec.Autoscale.Max, spec.Autoscale.Min
	}
	plan.MinSize = types.Int64Value(int64(spec.MinSize))
	lowLatency := network != nil && network.Placement == netplan.PlacementLowLatency
	wantERDMA := network != nil && network.ERDMA
	spec.Role = bootstrap.RoleGPUWorker
	if k := nested.Kubernetes; k != nil && k.Role.ValueString() != "" {
		spec.Role = k.Role.ValueString()
	}
	if k := nested.Kubernetes; k != nil {
		spec.LoadBalancerID = k.LoadBalancerID.ValueString()
	}
	// A control plane runs no GPU work: only the deployment checks apply to it.
	checkScenario := spec.Scenario
	if spec.Role == bootstrap.RoleControlPlane {
		checkScenario = ""
	}

	// Instance type: pinned, or the catalog's best candidate, with the rest kept for fallback.
	if !plan.InstanceType.IsNull() && !plan.InstanceType.IsUnknown() && plan.GPUModel.IsNull() {
		it, err := catalog.ParseInstanceType(plan.InstanceType.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root("instance_type"), fmt.Sprintf("Unknown instance type %q", plan.InstanceType.ValueString()), err.Error())
			return spec, diags
		}
		spec.Types = []string{it.Name}
	} else {
		cands, _, err := catalog.Select(catalog.SelectRequest{
			Scenario:     spec.Scenario,
			GPUModel:     plan.GPUModel.ValueString(),
			GPUsPerNode:  int(plan.GPUsPerNode.ValueInt64()),
			RequireERDMA: wantERDMA,
			Nodes:        spec.Size,
		})
		if err != nil {
			diags.AddAttributeError(poolSelectErrorPath(err, !plan.GPUsPerNode.IsNull()), fmt.Sprintf("No instance type for %s on %s", spec.Scenario, plan.GPUModel.ValueString()), err.Error())
			return spec, diags
		}
		var needHPC []string
		for _, c := range cands {
			// A candidate that needs an HPC cluster the network lacks would fail at RunInstances:
			// it is no candidate here (a pinned type still gets the finding that explains it).
			if network != nil && network.HPCClusterID == "" && c.InstanceType.RequiresHPCCluster {
				needHPC = append(needHPC, c.InstanceType.Name)
				continue
			}
			spec.Types = append(spec.Types, c.InstanceType.Name)
		}
		if len(spec.Types) == 0 {
			diags.AddAttributeError(path.Root("network_id"), fmt.Sprintf("No instance type for %s on %s in network %s", spec.Scenario, plan.GPUModel.ValueString(), network.ID),
				fmt.Sprintf("Every candidate (%s) is a super computing cluster type that needs an HPC cluster, and the network has none. Set hpc_cluster = true on the network.", strings.Join(needHPC, ", ")))
			return spec, diags
		}
		// At apply time the type the plan showed stays the pool's type, even when the network
		// (unknown at plan time) would rank another first: Terraform requires the applied value
		// to match the plan. If it cannot work in this network, the checks below say so before
		// any node is asked for.
		if keepType != "" && keepType != spec.Types[0] {
			spec.Types = append([]string{keepType}, slices.DeleteFunc(spec.Types, func(t string) bool { return t == keepType })...)
		}
	}
	plan.InstanceType = types.StringValue(spec.Types[0])

	// Findings of the planned type under this deployment.
	opts := catalog.CheckOptions{Nodes: spec.Size, Spot: spec.Spot != "NoSpot", ERDMA: wantERDMA, LowLatencyPlacement: lowLatency,
		HPCCluster: network != nil && network.HPCClusterID != ""}
	if network == nil {
		// Unknown network: check what the configuration alone decides; network-dependent
		// checks run again at apply time.
		opts.HPCCluster = true
	}
	findings, err := catalog.Check(checkScenario, spec.Types[0], opts)
	if err != nil {
		diags.AddAttributeError(path.Root("instance_type"), "Checking the instance type", err.Error())
		return spec, diags
	}
	if lowLatency {
		// Deployment sets hold 20 each; the catalog's own limit check is per set, the pool shards.
		findings = slices.DeleteFunc(findings, func(f catalog.Finding) bool { return f.Code == "low_latency_limit" })
	}
	for _, f := range findings {
		if f.Severity != catalog.SeverityError {
			continue
		}
		attr := path.Root("instance_type")
		switch f.Code {
		case "spot_low_latency":
			attr = path.Root("spot")
		case "erdma_unsupported", "hpc_cluster_required":
			attr = path.Root("network_id")
		}
		detail := findingDetail(f)
		if f.Code == "hpc_cluster_required" {
			// The catalog speaks API; say what to write here.
			detail += "\nHere: set hpc_cluster = true on the gpucluster_rdma_network of network_id, and its pools join that HPC cluster."
		}
		diags.AddAttributeError(attr, fmt.Sprintf("%s cannot work for %s: %s", spec.Types[0], spec.Scenario, f.Code), detail)
	}
	if diags.HasError() {
		return spec, diags
	}
	list, d := findingsList(findings)
	diags.Append(d...)
	if network == nil {
		plan.Findings = types.ListUnknown(findingObjectType)
	} else {
		plan.Findings = list
	}

	// Labels and taints nodes join Kubernetes with: bootstrap.NodeIdentity decides them, so
	// node_labels/node_taints are what the kubeadm configuration registers.
	it, _ := catalog.LookupInstanceType(spec.Types[0])
	identity := bootstrap.NodeIdentity{Role: spec.Role, Scenario: spec.Scenario, Pool: spec.Name, GPU: it.IsGPU()}
	if identity.GPU {
		identity.GPUProduct = gpuProductLabel(it)
	}
	if k := nested.Kubernetes; k != nil {
		extra, d := mapOf(ctx, k.Labels)
		diags.Append(d...)
		identity.UserLabels = extra
		taints, d := listOf(ctx, k.Taints)
		diags.Append(d...)
		for _, t := range taints {
			identity.UserTaints = append(identity.UserTaints, bootstrap.ParseTaint(t))
		}
	}
	spec.Labels = identity.Labels()
	spec.Taints = []string{}
	for _, t := range identity.Taints() {
		spec.Taints = append(spec.Taints, t.String())
	}
	plan.NodeLabels = stringMap(spec.Labels)
	plan.NodeTaints = stringList(spec.Taints)

	// Zones: the configured order, each one of the network's; default the network's zones.
	zones, d := listOf(ctx, plan.ZoneIDs)
	diags.Append(d...)
	if network != nil {
		if len(zones) == 0 {
			zones = network.Zones
		}
		for i, z := range zones {
			if _, ok := network.VSwitchIDs[z]; !ok {
				diags.AddAttributeError(path.Root("zone_ids").AtListIndex(i), fmt.Sprintf("Zone %q is not in the network", z),
					fmt.Sprintf("Network %s has vSwitches in %s only. Use those zones, or add %q to the network's zone_ids.", network.ID, strings.Join(network.Zones, ", "), z))
			}
		}
		if lowLatency && len(zones) > 1 {
			// A low-latency deployment set lives in one zone: the pool stays in the first.
			zones = zones[:1]
		}
		plan.ZoneIDs = stringList(zones)
		spec.Network = *network
		spec.ERDMA = wantERDMA && it.ERI
		if it.RequiresHPCCluster {
			spec.HPCCluster = network.HPCClusterID
		}
	} else if len(zones) == 0 {
		plan.ZoneIDs = types.ListUnknown(types.StringType)
	}
	spec.Zones = zones

	if plan.AutoReleaseAfter.ValueString() != "" {
		spec.AutoRelease, _ = parseAutoRelease(plan.AutoReleaseAfter.ValueString())
	}
	spec.SystemDisk = nodepool.Disk{Category: "cloud_essd", Level: "PL1", SizeGiB: 100}
	if d := nested.SystemDisk; d != nil {
		spec.SystemDisk = nodepool.Disk{Category: d.Category.ValueString(), Level: d.PerformanceLevel.ValueString(), SizeGiB: int(d.SizeGiB.ValueInt64())}
	}
	for i, d := range nested.DataDisks {
		// Checked again here for disks that were unknown when the configuration was validated:
		// at apply they are known, and a bad one stops the apply before any node is asked for.
		checkDiskConfig(path.Root("data_disks").AtListIndex(i), d, &diags)
		spec.DataDisks = append(spec.DataDisks, nodepool.Disk{Category: d.Category.ValueString(), Level: d.PerformanceLevel.ValueString(), SizeGiB: int(d.SizeGiB.ValueInt64())})
	}
	spec.UserTags, d = mapOf(ctx, plan.Tags)
	diags.Append(d...)
	if !plan.Tags.IsUnknown() {
		checkNodeTagCount(spec, &diags)
	}
	spec.MaxUnavail = 1
	if u := nested.UpdateStrategy; u != nil {
		spec.MaxUnavail = int(u.MaxUnavailable.ValueInt64())
	}
	mounts, d := listOf(ctx, plan.Mounts)
	diags.Append(d...)

	// What a node is built from. The join token and the labels are left out on purpose: rotating
	// the token or relabelling must not replace machines.
	k8s := nested.Kubernetes
	if k8s == nil {
		k8s = &k8sModel{}
	}
	spec.SpecHash = poolplan.SpecHash(spec.Types[0], spec.ImageID, fmt.Sprint(spec.SystemDisk), fmt.Sprint(spec.DataDisks),
		spec.UserData, spec.Spot, strconv.FormatFloat(spec.SpotLimit, 'f', -1, 64),
		spec.Role, k8s.APIEndpoint.ValueString(), k8s.CACertHash.ValueString(), k8s.PodSubnet.ValueString(),
		strings.Join(mounts, "\n"), strconv.FormatBool(spec.ERDMA), strconv.FormatBool(!plan.Bootstrap.Equal(types.BoolValue(false))))
	if spec.RAMRole != "" {
		// Only when set, so pools made before the attribute keep their hash.
		spec.SpecHash = poolplan.SpecHash(spec.SpecHash, "ram_role="+spec.RAMRole)
	}
	if m := plan.PackageMirror.ValueString(); m != "" && m != bootstrap.MirrorInternet {
		// Only a non-default mirror joins the hash, so pools made before the attribute keep theirs.
		spec.SpecHash = poolplan.SpecHash(spec.SpecHash, "package_mirror="+m)
	}
	// The same for the control-plane and software settings: only when set, so pools made before
	// them keep their hash. Secrets (certificate key, CA key) and add-ons are left out: changing
	// them must not replace machines.
	versions, nccl, d := k8sSoftware(ctx, k8s)
	diags.Append(d...)
	if extra := softwareHashInput(k8s, versions, nccl); extra != "" {
		spec.SpecHash = poolplan.SpecHash(spec.SpecHash, extra)
	}

	diags.Append(renderBootstrap(ctx, &spec, plan, k8s, mounts, atApply, in)...)
	return spec, diags
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
	return planSpec(ctx, plan, &network, keep, true, in)
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
