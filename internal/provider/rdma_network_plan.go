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

	var block netip.Prefix
	blockOK := false
	if s := cfg.CIDRBlock; !s.IsNull() && !s.IsUnknown() {
		p, err := netplan.ParseIPv4CIDR(s.ValueString())
		if err == nil {
			err = netplan.CheckVPCCIDR(p)
		}
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("cidr_block"), "Invalid cidr_block", err.Error()+".")
		} else {
			block, blockOK = p, true
		}
	}

	zones, zonesKnown := netKnownStrings(ctx, cfg.ZoneIDs, &resp.Diagnostics)
	if zonesKnown {
		regions := map[string]bool{}
		for _, z := range zones {
			reg := netplan.ZoneRegion(z)
			if reg == "" {
				resp.Diagnostics.AddAttributeError(path.Root("zone_ids"), "Invalid zone id",
					fmt.Sprintf("%q is not a zone id; zone ids look like cn-wulanchabu-a (the gpucluster_zones data source lists them).", z))
				continue
			}
			regions[reg] = true
		}
		if len(regions) > 1 {
			resp.Diagnostics.AddAttributeError(path.Root("zone_ids"), "Zones of different regions",
				fmt.Sprintf("zone_ids %v span the regions %v; a network lives in one region, the provider's.", zones, netSortedSet(regions)))
		}
	}

	if !cfg.VSwitchCIDRs.IsNull() && !cfg.VSwitchCIDRs.IsUnknown() && blockOK && zonesKnown {
		cidrs := map[string]types.String{}
		resp.Diagnostics.Append(cfg.VSwitchCIDRs.ElementsAs(ctx, &cidrs, false)...)
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
				resp.Diagnostics.AddAttributeError(path.Root("vswitch_cidrs").AtMapKey(p.Key), "Invalid vswitch_cidrs", p.Message+".")
			}
		}
	} else if cfg.VSwitchCIDRs.IsNull() && blockOK && zonesKnown && len(zones) > 0 {
		if _, err := netplan.Carve(block, zones); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("cidr_block"), "cidr_block cannot hold the zones", err.Error()+".")
		}
	}

	if admins, ok := netKnownStrings(ctx, cfg.AdminCIDRs, &resp.Diagnostics); ok {
		world := false
		for _, a := range admins {
			p, err := netplan.ParseIPv4CIDR(a)
			if err != nil {
				resp.Diagnostics.AddAttributeError(path.Root("admin_cidrs"), "Invalid admin_cidrs", err.Error()+".")
				continue
			}
			world = world || netplan.IsWorld(p)
		}
		if world && !cfg.AllowPublicSSH.IsUnknown() {
			if cfg.AllowPublicSSH.ValueBool() {
				resp.Diagnostics.AddAttributeWarning(path.Root("admin_cidrs"), "SSH and the Kubernetes API are open to the internet",
					"admin_cidrs contains 0.0.0.0/0 and allow_public_ssh is true: every address may try SSH (22) and the Kubernetes API (6443) of every member. Prefer your offices' or a bastion's blocks.")
			} else {
				resp.Diagnostics.AddAttributeError(path.Root("admin_cidrs"), "0.0.0.0/0 in admin_cidrs without allow_public_ssh",
					"admin_cidrs contains 0.0.0.0/0, which opens SSH (22) and the Kubernetes API (6443) of every member to the internet. "+
						"List your offices' or a bastion's blocks instead, or set allow_public_ssh = true to accept the exposure.")
			}
		}
	}

	if !cfg.Placement.IsUnknown() && !cfg.PlacementGroups.IsNull() && !cfg.PlacementGroups.IsUnknown() {
		placement := cfg.Placement.ValueString()
		if placement == "" {
			placement = netplan.PlacementNone
		}
		n := cfg.PlacementGroups.ValueInt64()
		if placement == netplan.PlacementNone && n > 0 {
			resp.Diagnostics.AddAttributeError(path.Root("placement_groups"), "placement_groups without a placement",
				fmt.Sprintf("placement_groups = %d needs placement = \"low_latency\" or \"spread\"; with placement \"none\" there are no groups.", n))
		}
		if placement != netplan.PlacementNone && n == 0 {
			resp.Diagnostics.AddAttributeError(path.Root("placement_groups"), "No placement groups",
				fmt.Sprintf("placement = %q needs at least 1 placement group; set placement = \"none\" for no groups.", placement))
		}
	}

	checkUserTags(cfg.Tags, maxUserTags, &resp.Diagnostics)
	validateEgressConfig(ctx, cfg.Egress, &resp.Diagnostics)
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

	if config.VSwitchCIDRs.IsNull() && blockKnown && zonesKnown {
		if carved, err := netplan.Carve(block, zones); err == nil {
			m := map[string]attr.Value{}
			for z, p := range carved {
				m[z] = types.StringValue(p.String())
			}
			plan.VSwitchCIDRs = types.MapValueMust(types.StringType, m)
		}
	}

	placementKnown := !plan.Placement.IsUnknown()
	if placementKnown {
		placement := plan.Placement.ValueString()
		if config.PlacementGroups.IsNull() {
			n := int64(0)
			if placement != netplan.PlacementNone {
				n = 1
			}
			plan.PlacementGroups = types.Int64Value(n)
		}
		plan.PlacementGroupSize = types.Int64Value(int64(netplan.GroupSize(placement)))
	}
	if !plan.ERDMA.IsUnknown() {
		plan.NCCLEnv = stringMap(netplan.NCCLEnv(plan.ERDMA.ValueBool()))
	}
	plan.BandwidthPlan = bandwidthPlanValue()
	if config.VPCID.IsNull() {
		plan.VPCManaged = types.BoolValue(true)
	} else {
		plan.VPCManaged = types.BoolValue(false)
	}

	if prior != nil {
		plan.VPCManaged = prior.VPCManaged
		// The rule set follows from admin_cidrs and the id; a drifted rule makes this differ
		// from the state, so the plan shows it and the apply restores it.
		if admins, ok := netKnownStrings(ctx, plan.AdminCIDRs, &resp.Diagnostics); ok && !prior.ID.IsNull() {
			plan.SecurityGroupRules = rulesValue(netplan.DesiredRules(prior.ID.ValueString(), admins))
		}
		if plan.Placement.Equal(prior.Placement) && plan.PlacementGroups.Equal(prior.PlacementGroups) {
			plan.DeploymentSetIDs = prior.DeploymentSetIDs
		} else {
			plan.DeploymentSetIDs = types.ListUnknown(types.StringType)
		}
		if plan.HPCCluster.Equal(prior.HPCCluster) {
			plan.HPCClusterID = prior.HPCClusterID
		} else {
			plan.HPCClusterID = types.StringUnknown()
		}
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
