package provider

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/poolplan"
)

// From a node pool's plan to a nodepool.Spec, one step per function: planSpec runs them in order.

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
	spec := specBase(plan, nested)
	if !resolveInstanceTypes(plan, &spec, network, keepType, &diags) {
		return spec, diags
	}
	plan.InstanceType = types.StringValue(spec.Types[0])
	if !checkFindings(plan, spec, network, &diags) {
		return spec, diags
	}
	it, _ := catalog.LookupInstanceType(spec.Types[0])
	diags.Append(resolveIdentity(ctx, plan, &spec, nested.Kubernetes, it)...)
	diags.Append(resolveZones(ctx, plan, &spec, network, it)...)
	diags.Append(resolveDisksTagsUpdate(ctx, plan, &spec, nested)...)
	mounts, d := listOf(ctx, plan.Mounts)
	diags.Append(d...)
	k8s := nested.Kubernetes
	if k8s == nil {
		k8s = &k8sModel{}
	}
	diags.Append(resolveSpecHash(ctx, plan, &spec, k8s, mounts)...)
	diags.Append(renderBootstrap(ctx, &spec, plan, k8s, mounts, atApply, in)...)
	return spec, diags
}

// specBase is what the plan says directly: names, sizes (an autoscaling pool's bounds), image,
// role, spot, the control plane's load balancer. It sets the plan's min_size.
func specBase(plan *nodePoolModel, nested poolNested) nodepool.Spec {
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
	spec.Role = bootstrap.RoleGPUWorker
	if k := nested.Kubernetes; k != nil && k.Role.ValueString() != "" {
		spec.Role = k.Role.ValueString()
	}
	if k := nested.Kubernetes; k != nil {
		spec.LoadBalancerID = k.LoadBalancerID.ValueString()
	}
	return spec
}

// resolveInstanceTypes sets spec.Types: pinned, or the catalog's best candidate, with the rest
// kept for fallback. It answers false (with the error in diags) when there is none.
func resolveInstanceTypes(plan *nodePoolModel, spec *nodepool.Spec, network *nodepool.Network, keepType string, diags *diag.Diagnostics) bool {
	if !plan.InstanceType.IsNull() && !plan.InstanceType.IsUnknown() && plan.GPUModel.IsNull() {
		it, err := catalog.ParseInstanceType(plan.InstanceType.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root("instance_type"), fmt.Sprintf("Unknown instance type %q", plan.InstanceType.ValueString()), err.Error())
			return false
		}
		spec.Types = []string{it.Name}
		return true
	}
	cands, _, err := catalog.Select(catalog.SelectRequest{
		Scenario:     spec.Scenario,
		GPUModel:     plan.GPUModel.ValueString(),
		GPUsPerNode:  int(plan.GPUsPerNode.ValueInt64()),
		RequireERDMA: network != nil && network.ERDMA,
		Nodes:        spec.Size,
	})
	if err != nil {
		diags.AddAttributeError(poolSelectErrorPath(err, !plan.GPUsPerNode.IsNull()), fmt.Sprintf("No instance type for %s on %s", spec.Scenario, plan.GPUModel.ValueString()), err.Error())
		return false
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
		return false
	}
	// At apply time the type the plan showed stays the pool's type, even when the network
	// (unknown at plan time) would rank another first: Terraform requires the applied value
	// to match the plan. If it cannot work in this network, the checks below say so before
	// any node is asked for.
	if keepType != "" && keepType != spec.Types[0] {
		spec.Types = append([]string{keepType}, slices.DeleteFunc(spec.Types, func(t string) bool { return t == keepType })...)
	}
	return true
}

// checkFindings runs the catalog's checks of the planned type under this deployment: errors are
// diagnostics on the attribute to change (and answer false), the rest go to plan.Findings.
func checkFindings(plan *nodePoolModel, spec nodepool.Spec, network *nodepool.Network, diags *diag.Diagnostics) bool {
	lowLatency := network != nil && network.Placement == netplan.PlacementLowLatency
	opts := catalog.CheckOptions{Nodes: spec.Size, Spot: spec.Spot != "NoSpot", ERDMA: network != nil && network.ERDMA, LowLatencyPlacement: lowLatency,
		HPCCluster: network != nil && network.HPCClusterID != ""}
	if network == nil {
		// Unknown network: check what the configuration alone decides; network-dependent
		// checks run again at apply time.
		opts.HPCCluster = true
	}
	// A control plane runs no GPU work: only the deployment checks apply to it.
	checkScenario := spec.Scenario
	if spec.Role == bootstrap.RoleControlPlane {
		checkScenario = ""
	}
	findings, err := catalog.Check(checkScenario, spec.Types[0], opts)
	if err != nil {
		diags.AddAttributeError(path.Root("instance_type"), "Checking the instance type", err.Error())
		return false
	}
	if lowLatency {
		// Deployment sets hold 20 each; the catalog's own limit check is per set, the pool shards.
		findings = slices.DeleteFunc(findings, func(f catalog.Finding) bool { return f.Code == "low_latency_limit" })
	}
	for _, f := range findings {
		if f.Severity == catalog.SeverityError {
			addFindingError(f, spec, diags)
		}
	}
	if diags.HasError() {
		return false
	}
	list, d := findingsList(findings)
	diags.Append(d...)
	if network == nil {
		plan.Findings = types.ListUnknown(findingObjectType)
	} else {
		plan.Findings = list
	}
	return true
}

// addFindingError is one of the catalog's error findings as a diagnostic on its attribute.
func addFindingError(f catalog.Finding, spec nodepool.Spec, diags *diag.Diagnostics) {
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

// resolveIdentity sets the labels and taints nodes join Kubernetes with: bootstrap.NodeIdentity
// decides them, so node_labels/node_taints are what the kubeadm configuration registers.
func resolveIdentity(ctx context.Context, plan *nodePoolModel, spec *nodepool.Spec, k *k8sModel, it catalog.InstanceType) diag.Diagnostics {
	var diags diag.Diagnostics
	identity := bootstrap.NodeIdentity{Role: spec.Role, Scenario: spec.Scenario, Pool: spec.Name, GPU: it.IsGPU()}
	if identity.GPU {
		identity.GPUProduct = gpuProductLabel(it)
	}
	if k != nil {
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
	return diags
}

// resolveZones sets the zones in the configured order, each one of the network's (default: the
// network's zones), and what else the network decides: eRDMA, the HPC cluster.
func resolveZones(ctx context.Context, plan *nodePoolModel, spec *nodepool.Spec, network *nodepool.Network, it catalog.InstanceType) diag.Diagnostics {
	zones, diags := listOf(ctx, plan.ZoneIDs)
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
		if network.Placement == netplan.PlacementLowLatency && len(zones) > 1 {
			// A low-latency deployment set lives in one zone: the pool stays in the first.
			zones = zones[:1]
		}
		plan.ZoneIDs = stringList(zones)
		spec.Network = *network
		spec.ERDMA = network.ERDMA && it.ERI
		if it.RequiresHPCCluster {
			spec.HPCCluster = network.HPCClusterID
		}
	} else if len(zones) == 0 {
		plan.ZoneIDs = types.ListUnknown(types.StringType)
	}
	spec.Zones = zones
	return diags
}

// resolveDisksTagsUpdate sets the release time, the disks, the user tags (with the count of
// every node's tags checked) and the roll's wave size.
func resolveDisksTagsUpdate(ctx context.Context, plan *nodePoolModel, spec *nodepool.Spec, nested poolNested) diag.Diagnostics {
	var diags diag.Diagnostics
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
	var d diag.Diagnostics
	spec.UserTags, d = mapOf(ctx, plan.Tags)
	diags.Append(d...)
	if !plan.Tags.IsUnknown() {
		checkNodeTagCount(*spec, &diags)
	}
	spec.MaxUnavail = 1
	if u := nested.UpdateStrategy; u != nil {
		spec.MaxUnavail = int(u.MaxUnavailable.ValueInt64())
	}
	spec.JoinTimeout = joinTimeoutOf(nested.Kubernetes, nested.UpdateStrategy, plan.Bootstrap)
	spec.DrainTimeout = drainTimeoutOf(nested.Kubernetes, nested.UpdateStrategy, plan.Bootstrap)
	return diags
}

// resolveSpecHash sets what a node is built from. The join token and the labels are left out on
// purpose: rotating the token or relabelling must not replace machines.
func resolveSpecHash(ctx context.Context, plan *nodePoolModel, spec *nodepool.Spec, k8s *k8sModel, mounts []string) diag.Diagnostics {
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
	versions, nccl, diags := k8sSoftware(ctx, k8s)
	if extra := softwareHashInput(k8s, versions, nccl); extra != "" {
		spec.SpecHash = poolplan.SpecHash(spec.SpecHash, extra)
	}
	loc, d := bundleLocation(ctx, plan, "")
	diags.Append(d...)
	if extra := bundleHashInput(loc); extra != "" {
		spec.SpecHash = poolplan.SpecHash(spec.SpecHash, extra)
	}
	return diags
}
