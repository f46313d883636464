package provider

// Plan-time checks of gpucluster_rdma_network: ValidateConfig (no API call) and ModifyPlan
// (computed values, and the checks that need the API on create).

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
)

// ValidateConfig checks everything that needs no API call: address plan, zones of one region,
// admin access, placement and tags.
func (r *rdmaNetworkResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg rdmaNetworkModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	block, blockOK := validateCIDRBlock(cfg, &resp.Diagnostics)
	zones, zonesKnown := validateZones(ctx, cfg, &resp.Diagnostics)
	validateVSwitchCIDRs(ctx, cfg, block, blockOK, zones, zonesKnown, &resp.Diagnostics)
	validateAdminCIDRs(ctx, cfg, &resp.Diagnostics)
	validatePlacementConfig(cfg, &resp.Diagnostics)
	checkUserTags(cfg.Tags, maxUserTags, &resp.Diagnostics)
	validateEgressConfig(ctx, cfg.Egress, &resp.Diagnostics)
}

// validateCIDRBlock checks cidr_block; ok is false when it is unset, unknown or invalid.
func validateCIDRBlock(cfg rdmaNetworkModel, diags *diag.Diagnostics) (netip.Prefix, bool) {
	var block netip.Prefix
	blockOK := false
	if s := cfg.CIDRBlock; !s.IsNull() && !s.IsUnknown() {
		p, err := netplan.ParseIPv4CIDR(s.ValueString())
		if err == nil {
			err = netplan.CheckVPCCIDR(p)
		}
		if err != nil {
			diags.AddAttributeError(path.Root("cidr_block"), "Invalid cidr_block", err.Error()+".")
		} else {
			block, blockOK = p, true
		}
	}
	return block, blockOK
}

// validateZones checks that zone_ids are zone ids of one region; known is false while they are
// not known.
func validateZones(ctx context.Context, cfg rdmaNetworkModel, diags *diag.Diagnostics) ([]string, bool) {
	zones, zonesKnown := netKnownStrings(ctx, cfg.ZoneIDs, diags)
	if zonesKnown {
		regions := map[string]bool{}
		for _, z := range zones {
			reg := netplan.ZoneRegion(z)
			if reg == "" {
				diags.AddAttributeError(path.Root("zone_ids"), "Invalid zone id",
					fmt.Sprintf("%q is not a zone id; zone ids look like cn-wulanchabu-a (the gpucluster_zones data source lists them).", z))
				continue
			}
			regions[reg] = true
		}
		if len(regions) > 1 {
			diags.AddAttributeError(path.Root("zone_ids"), "Zones of different regions",
				fmt.Sprintf("zone_ids %v span the regions %v; a network lives in one region, the provider's.", zones, netSortedSet(regions)))
		}
	}
	return zones, zonesKnown
}

// validateVSwitchCIDRs checks vswitch_cidrs against cidr_block and the zones, or, without them,
// that cidr_block can be carved into one block per zone.
func validateVSwitchCIDRs(ctx context.Context, cfg rdmaNetworkModel, block netip.Prefix, blockOK bool, zones []string, zonesKnown bool, diags *diag.Diagnostics) {
	if !cfg.VSwitchCIDRs.IsNull() && !cfg.VSwitchCIDRs.IsUnknown() && blockOK && zonesKnown {
		cidrs := map[string]types.String{}
		diags.Append(cfg.VSwitchCIDRs.ElementsAs(ctx, &cidrs, false)...)
		plain := map[string]string{}
		known := true
		for k, v := range cidrs {
			if v.IsUnknown() {
				known = false
			}
			plain[k] = v.ValueString()
		}
		if known {
			for _, p := range netplan.CheckVSwitchCIDRs(block, zones, plain) {
				diags.AddAttributeError(path.Root("vswitch_cidrs").AtMapKey(p.Key), "Invalid vswitch_cidrs", p.Message+".")
			}
		}
	} else if cfg.VSwitchCIDRs.IsNull() && blockOK && zonesKnown && len(zones) > 0 {
		if _, err := netplan.Carve(block, zones); err != nil {
			diags.AddAttributeError(path.Root("cidr_block"), "cidr_block cannot hold the zones", err.Error()+".")
		}
	}
}

// validateAdminCIDRs checks admin_cidrs, and 0.0.0.0/0 in them against allow_public_ssh.
func validateAdminCIDRs(ctx context.Context, cfg rdmaNetworkModel, diags *diag.Diagnostics) {
	if admins, ok := netKnownStrings(ctx, cfg.AdminCIDRs, diags); ok {
		world := false
		for _, a := range admins {
			p, err := netplan.ParseIPv4CIDR(a)
			if err != nil {
				diags.AddAttributeError(path.Root("admin_cidrs"), "Invalid admin_cidrs", err.Error()+".")
				continue
			}
			world = world || netplan.IsWorld(p)
		}
		if world && !cfg.AllowPublicSSH.IsUnknown() {
			if cfg.AllowPublicSSH.ValueBool() {
				diags.AddAttributeWarning(path.Root("admin_cidrs"), "SSH and the Kubernetes API are open to the internet",
					"admin_cidrs contains 0.0.0.0/0 and allow_public_ssh is true: every address may try SSH (22) and the Kubernetes API (6443) of every member. Prefer your offices' or a bastion's blocks.")
			} else {
				diags.AddAttributeError(path.Root("admin_cidrs"), "0.0.0.0/0 in admin_cidrs without allow_public_ssh",
					"admin_cidrs contains 0.0.0.0/0, which opens SSH (22) and the Kubernetes API (6443) of every member to the internet. "+
						"List your offices' or a bastion's blocks instead, or set allow_public_ssh = true to accept the exposure.")
			}
		}
	}
}

// validatePlacementConfig checks placement_groups against placement.
func validatePlacementConfig(cfg rdmaNetworkModel, diags *diag.Diagnostics) {
	if !cfg.Placement.IsUnknown() && !cfg.PlacementGroups.IsNull() && !cfg.PlacementGroups.IsUnknown() {
		placement := cfg.Placement.ValueString()
		if placement == "" {
			placement = netplan.PlacementNone
		}
		n := cfg.PlacementGroups.ValueInt64()
		if placement == netplan.PlacementNone && n > 0 {
			diags.AddAttributeError(path.Root("placement_groups"), "placement_groups without a placement",
				fmt.Sprintf("placement_groups = %d needs placement = \"low_latency\" or \"spread\"; with placement \"none\" there are no groups.", n))
		}
		if placement != netplan.PlacementNone && n == 0 {
			diags.AddAttributeError(path.Root("placement_groups"), "No placement groups",
				fmt.Sprintf("placement = %q needs at least 1 placement group; set placement = \"none\" for no groups.", placement))
		}
	}
}

// ModifyPlan fills what follows from the configuration (carved vSwitch blocks, placement figures,
// NCCL environment, the rule set) and checks what needs the API: the zones exist in the
// provider's region, and a reused VPC exists and holds cidr_block.
func (r *rdmaNetworkResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan, config rdmaNetworkModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var prior *rdmaNetworkModel
	if !req.State.Raw.IsNull() {
		prior = &rdmaNetworkModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, prior)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}

	zones, zonesKnown := netKnownStrings(ctx, plan.ZoneIDs, &resp.Diagnostics)
	block, blockErr := netplan.ParseIPv4CIDR(plan.CIDRBlock.ValueString())
	blockKnown := !plan.CIDRBlock.IsUnknown() && blockErr == nil

	plan.planDerived(config, block, blockKnown, zones, zonesKnown)
	if prior != nil {
		plan.keepFromState(ctx, prior, &resp.Diagnostics)
	}

	plan.Egress = planEgress(ctx, config, plan, prior, &resp.Diagnostics)

	// API checks, on create only (zones and cidr_block force a new network anyway).
	if prior == nil && r.client != nil {
		r.checkAgainstCloud(ctx, plan, zones, zonesKnown, block, blockKnown, &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// planDerived fills what follows from the configuration alone: the vSwitch blocks carved from
// cidr_block, the placement groups' count and size, the NCCL settings, the bandwidth plan and
// whether the network owns its VPC.
func (m *rdmaNetworkModel) planDerived(config rdmaNetworkModel, block netip.Prefix, blockKnown bool, zones []string, zonesKnown bool) {
	if config.VSwitchCIDRs.IsNull() && blockKnown && zonesKnown {
		if carved, err := netplan.Carve(block, zones); err == nil {
			blocks := map[string]attr.Value{}
			for z, p := range carved {
				blocks[z] = types.StringValue(p.String())
			}
			m.VSwitchCIDRs = types.MapValueMust(types.StringType, blocks)
		}
	}

	placementKnown := !m.Placement.IsUnknown()
	if placementKnown {
		placement := m.Placement.ValueString()
		if config.PlacementGroups.IsNull() {
			n := int64(0)
			if placement != netplan.PlacementNone {
				n = 1
			}
			m.PlacementGroups = types.Int64Value(n)
		}
		m.PlacementGroupSize = types.Int64Value(int64(netplan.GroupSize(placement)))
	}
	if !m.ERDMA.IsUnknown() {
		m.NCCLEnv = stringMap(netplan.NCCLEnv(m.ERDMA.ValueBool()))
	}
	m.BandwidthPlan = bandwidthPlanValue()
	if config.VPCID.IsNull() {
		m.VPCManaged = types.BoolValue(true)
	} else {
		m.VPCManaged = types.BoolValue(false)
	}
}

// keepFromState fills, on an update, what the state already knows and the change keeps: the
// VPC's ownership, the rule set, the deployment sets and the HPC cluster.
func (m *rdmaNetworkModel) keepFromState(ctx context.Context, prior *rdmaNetworkModel, diags *diag.Diagnostics) {
	m.VPCManaged = prior.VPCManaged
	// The rule set follows from admin_cidrs and the id; a drifted rule makes this differ
	// from the state, so the plan shows it and the apply restores it.
	if admins, ok := netKnownStrings(ctx, m.AdminCIDRs, diags); ok && !prior.ID.IsNull() {
		m.SecurityGroupRules = rulesValue(netplan.DesiredRules(prior.ID.ValueString(), admins))
	}
	if m.Placement.Equal(prior.Placement) && m.PlacementGroups.Equal(prior.PlacementGroups) {
		m.DeploymentSetIDs = prior.DeploymentSetIDs
	} else {
		m.DeploymentSetIDs = types.ListUnknown(types.StringType)
	}
	if m.HPCCluster.Equal(prior.HPCCluster) {
		m.HPCClusterID = prior.HPCClusterID
	} else {
		m.HPCClusterID = types.StringUnknown()
	}
}

// checkAgainstCloud is ModifyPlan's API part.
func (r *rdmaNetworkResource) checkAgainstCloud(ctx context.Context, plan rdmaNetworkModel, zones []string, zonesKnown bool, block netip.Prefix, blockKnown bool, diags *diag.Diagnostics) {
	c := r.client
	if zonesKnown {
		var outside []string
		for _, z := range zones {
			if netplan.ZoneRegion(z) != c.Region() {
				outside = append(outside, z)
			}
		}
		if len(outside) > 0 {
			diags.AddAttributeError(path.Root("zone_ids"), "Zones outside the provider's region",
				fmt.Sprintf("zone_ids %v are not zones of region %s, where the provider works. Use zones of %s (the gpucluster_zones data source lists them) or configure the provider for their region.",
					outside, c.Region(), c.Region()))
			return
		}
		existing, err := c.ZoneIDs(ctx)
		if err != nil {
			diags.AddError("Planning RDMA network: listing the zones of "+c.Region(), err.Error())
			return
		}
		have := map[string]bool{}
		for _, z := range existing {
			have[z] = true
		}
		for _, z := range zones {
			if !have[z] {
				diags.AddAttributeError(path.Root("zone_ids"), "Unknown zone",
					fmt.Sprintf("Zone %s does not exist in region %s; its zones are %v.", z, c.Region(), existing))
			}
		}
	}
	if plan.VPCID.IsUnknown() || plan.VPCID.IsNull() {
		return
	}
	vpcID := plan.VPCID.ValueString()
	v, err := c.FindVPC(ctx, vpcID)
	if cloud.IsNotFound(err) {
		diags.AddAttributeError(path.Root("vpc_id"), "VPC not found",
			fmt.Sprintf("VPC %s does not exist in region %s. Give an existing VPC's id, or leave vpc_id out to create one.", vpcID, c.Region()))
		return
	}
	if err != nil {
		diags.AddError("Planning RDMA network: reading VPC "+vpcID, err.Error())
		return
	}
	if !blockKnown {
		return
	}
	vpcBlock, err := netip.ParsePrefix(v.CIDRBlock)
	if err == nil && !netplan.Contains(vpcBlock, block) {
		diags.AddAttributeError(path.Root("cidr_block"), "cidr_block outside the reused VPC",
			fmt.Sprintf("cidr_block %s is not inside %s, the block of VPC %s; pick a free range inside it.", block, v.CIDRBlock, vpcID))
		return
	}
	if plan.VSwitchCIDRs.IsUnknown() {
		return
	}
	want := map[string]string{}
	diags.Append(plan.VSwitchCIDRs.ElementsAs(ctx, &want, false)...)
	existing, err := c.FindVSwitches(ctx, vpcID, nil)
	if err != nil {
		diags.AddError("Planning RDMA network: listing the vSwitches of VPC "+vpcID, err.Error())
		return
	}
	for _, zone := range sortedKeys(want) {
		p, err := netip.ParsePrefix(want[zone])
		if err != nil {
			continue
		}
		for _, sw := range existing {
			q, err := netip.ParsePrefix(sw.CIDRBlock)
			if err == nil && q.Overlaps(p) {
				diags.AddAttributeError(path.Root("vswitch_cidrs").AtMapKey(zone), "vSwitch block taken in the reused VPC",
					fmt.Sprintf("%s (zone %s) overlaps vSwitch %s (%s) of VPC %s; pick free blocks with vswitch_cidrs or another cidr_block.",
						p, zone, sw.ID, sw.CIDRBlock, vpcID))
			}
		}
	}
}
