package provider

// Egress of gpucluster_rdma_network: how members reach the internet. Mode "nat" builds an
// enhanced NAT gateway in one of the network's vSwitches, an EIP bound to it and one SNAT entry
// per vSwitch; "none" builds nothing and says so to node pools; "existing" builds nothing and
// trusts the team's own route. This file holds the attribute, its plan-time defaults and checks,
// and the cloud side (ensure, tear down, read back).

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/network"
)

// Egress modes.
const (
	EgressNAT      = network.EgressModeNAT // the mode internal/network builds a NAT gateway, EIP and SNAT entries for
	EgressNone     = "none"
	EgressExisting = "existing"
)

var egressModes = []string{EgressNAT, EgressNone, EgressExisting}

var egressChargeTypes = []string{cloud.EIPChargeByBandwidth, cloud.EIPChargeByTraffic}

var egressAttrTypes = map[string]attr.Type{
	"mode": types.StringType, "internet_charge_type": types.StringType, "bandwidth_mbps": types.Int64Type,
	"nat_gateway_id": types.StringType, "eip_id": types.StringType, "eip_address": types.StringType,
	"snat_table_id": types.StringType, "snat_entry_ids": types.MapType{ElemType: types.StringType},
}

// egressModel is the egress attribute's data.
type egressModel struct {
	Mode               types.String `tfsdk:"mode"`
	InternetChargeType types.String `tfsdk:"internet_charge_type"`
	BandwidthMbps      types.Int64  `tfsdk:"bandwidth_mbps"`
	NATGatewayID       types.String `tfsdk:"nat_gateway_id"`
	EIPID              types.String `tfsdk:"eip_id"`
	EIPAddress         types.String `tfsdk:"eip_address"`
	SnatTableID        types.String `tfsdk:"snat_table_id"`
	SnatEntryIDs       types.Map    `tfsdk:"snat_entry_ids"`
}

// egressOf reads the egress object; a null or unknown object gives an all-null model and false.
func egressOf(ctx context.Context, o types.Object, diags *diag.Diagnostics) (egressModel, bool) {
	if o.IsNull() || o.IsUnknown() {
		return egressModel{SnatEntryIDs: types.MapNull(types.StringType)}, false
	}
	var m egressModel
	diags.Append(o.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	return m, true
}

func (m egressModel) value() types.Object {
	return types.ObjectValueMust(egressAttrTypes, map[string]attr.Value{
		"mode": m.Mode, "internet_charge_type": m.InternetChargeType, "bandwidth_mbps": m.BandwidthMbps,
		"nat_gateway_id": m.NATGatewayID, "eip_id": m.EIPID, "eip_address": m.EIPAddress,
		"snat_table_id": m.SnatTableID, "snat_entry_ids": m.SnatEntryIDs,
	})
}

// withoutCloudIDs is the model with every cloud id null: the egress of mode none or existing.
func (m egressModel) withoutCloudIDs() egressModel {
	m.NATGatewayID, m.EIPID, m.EIPAddress, m.SnatTableID = types.StringNull(), types.StringNull(), types.StringNull(), types.StringNull()
	m.SnatEntryIDs = types.MapNull(types.StringType)
	return m
}

func egressSchema() schema.Attribute {
	return schema.SingleNestedAttribute{
		Optional: true,
		Computed: true,
		MarkdownDescription: "How members reach the internet (the node bootstrap downloads drivers, packages and images). " +
			"`mode = \"nat\"` builds an enhanced internet NAT gateway (pay-as-you-go, billed by LCU) in the vSwitch of the first zone, " +
			"an EIP bound to it and one SNAT entry per vSwitch of the network, all tagged like the network's other objects; " +
			"`\"none\"` builds nothing, and a node pool whose bootstrap needs the internet is refused at plan; `\"existing\"` builds " +
			"nothing and trusts a route the team provides (a NAT gateway or transit router of its own). Default: `nat` when the network " +
			"creates its VPC, `existing` with `vpc_id`.\n\n" +
			"Updated in place: bandwidth, and switching between `nat` and the others (which creates or removes the NAT gateway, EIP " +
			"and SNAT entries); an SNAT entry deleted outside Terraform shows in the next plan and the apply puts it back. Deleting " +
			"the network removes the SNAT entries, unbinds and releases the EIP and deletes the NAT gateway before the vSwitches. " +
			"The mode is recorded on the security group's `gpucluster:options` tag, where a node pool reads it from `network_id`; " +
			"the NAT gateway and the EIP carry `gpucluster:network-id`, which is how a later apply, import and read find them.",
		Attributes: map[string]schema.Attribute{
			"mode": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				MarkdownDescription: "`nat`, `none` or `existing` (see above).",
				Validators:          []validator.String{stringvalidator.OneOf(egressModes...)},
			},
			"internet_charge_type": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "How the EIP's traffic is billed: `PayByBandwidth` (default; the peak bandwidth per hour) or " +
					"`PayByTraffic` (per GB sent). Mode `nat` only. Changing it replaces the EIP, and with it the egress: a short outage.",
				Validators: []validator.String{stringvalidator.OneOf(egressChargeTypes...)},
			},
			"bandwidth_mbps": schema.Int64Attribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: fmt.Sprintf("Peak bandwidth of the EIP, Mbit/s. Mode `nat` only. A pay-as-you-go EIP takes %d-%d "+
					"with `PayByBandwidth` and %d-%d with `PayByTraffic` (AllocateEipAddress, "+
					"https://www.alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-allocateeipaddress); more needs an "+
					"Internet Shared Bandwidth plan, which this provider does not manage yet. Default: the scenario's target "+
					"(`bandwidth_plan.public_gbps`, in Mbit/s) capped at that ceiling, with a plan-time warning when the cap cuts the "+
					"target. Updated in place.",
					cloud.EIPMinBandwidthMbps, cloud.EIPMaxBandwidthMbpsByBandwidth, cloud.EIPMinBandwidthMbps, cloud.EIPMaxBandwidthMbpsByTraffic),
			},
			"nat_gateway_id": schema.StringAttribute{Computed: true, MarkdownDescription: "The NAT gateway's id (mode `nat`)."},
			"eip_id":         schema.StringAttribute{Computed: true, MarkdownDescription: "The EIP's allocation id (mode `nat`)."},
			"eip_address":    schema.StringAttribute{Computed: true, MarkdownDescription: "The EIP's address: what members' traffic to the internet comes from (mode `nat`)."},
			"snat_table_id":  schema.StringAttribute{Computed: true, MarkdownDescription: "The NAT gateway's SNAT table (mode `nat`)."},
			"snat_entry_ids": schema.MapAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "SNAT entry of each vSwitch, keyed by vSwitch id (mode `nat`).",
			},
		},
	}
}

// defaultEgressMode is the mode when the configuration leaves it out: a VPC the network creates
// has no route out unless the network builds one; a VPC the team brings has its own.
func defaultEgressMode(reusesVPC bool) string {
	if reusesVPC {
		return EgressExisting
	}
	return EgressNAT
}

// scenarioPublicMbps is the scenario's public bandwidth target in Mbit/s.
func scenarioPublicMbps() int64 { return netplan.Plan.PublicGbps * 1000 }

// eipCeilingMbps is the largest bandwidth of one pay-as-you-go EIP billed this way.
func eipCeilingMbps(chargeType string) int64 {
	if chargeType == cloud.EIPChargeByTraffic {
		return cloud.EIPMaxBandwidthMbpsByTraffic
	}
	return cloud.EIPMaxBandwidthMbpsByBandwidth
}

// validateEgressConfig is ValidateConfig's part for egress: settings that mean something only
// with a NAT gateway, and an explicit bandwidth outside the EIP's range.
func validateEgressConfig(ctx context.Context, cfg types.Object, diags *diag.Diagnostics) {
	e, ok := egressOf(ctx, cfg, diags)
	if !ok {
		return
	}
	at := path.Root("egress")
	mode := e.Mode.ValueString()
	if !e.Mode.IsUnknown() && mode != "" && mode != EgressNAT {
		for name, v := range map[string]attr.Value{"internet_charge_type": e.InternetChargeType, "bandwidth_mbps": e.BandwidthMbps} {
			if !v.IsNull() {
				diags.AddAttributeError(at.AtName(name), "egress."+name+" without a NAT gateway",
					fmt.Sprintf("egress.%s is set but egress.mode is %q, which builds no EIP. Remove egress.%s, or set egress.mode = \"nat\".", name, mode, name))
			}
		}
		return
	}
	if e.BandwidthMbps.IsNull() || e.BandwidthMbps.IsUnknown() || e.InternetChargeType.IsUnknown() {
		return
	}
	charge := e.InternetChargeType.ValueString()
	if charge == "" {
		charge = cloud.EIPChargeByBandwidth
	}
	mbps := e.BandwidthMbps.ValueInt64()
	if err := cloud.ValidateEIPBandwidth(charge, int(mbps)); err != nil {
		diags.AddAttributeError(at.AtName("bandwidth_mbps"), "egress.bandwidth_mbps out of range",
			fmt.Sprintf("egress.bandwidth_mbps = %d: %s.", mbps, err))
	}
}

// planEgress fills the egress attribute of a plan: the defaults, and the cloud ids kept from the
// state when the egress they belong to stays (unknown when the apply makes new ones). It warns
// when the default bandwidth is cut by the EIP's ceiling.
func planEgress(ctx context.Context, config, plan rdmaNetworkModel, prior *rdmaNetworkModel, diags *diag.Diagnostics) types.Object {
	cfg, _ := egressOf(ctx, config.Egress, diags)
	if config.Egress.IsUnknown() || cfg.Mode.IsUnknown() || cfg.InternetChargeType.IsUnknown() || cfg.BandwidthMbps.IsUnknown() {
		return types.ObjectUnknown(egressAttrTypes)
	}
	e := cfg
	if e.Mode.IsNull() {
		if config.VPCID.IsUnknown() {
			return types.ObjectUnknown(egressAttrTypes)
		}
		e.Mode = types.StringValue(defaultEgressMode(!config.VPCID.IsNull()))
	}
	var was egressModel
	wasNAT := false
	if prior != nil {
		was, _ = egressOf(ctx, prior.Egress, diags)
		wasNAT = was.Mode.ValueString() == EgressNAT
	}
	if e.Mode.ValueString() != EgressNAT {
		e.InternetChargeType, e.BandwidthMbps = types.StringNull(), types.Int64Null()
		return e.withoutCloudIDs().value()
	}
	if e.InternetChargeType.IsNull() {
		e.InternetChargeType = types.StringValue(cloud.EIPChargeByBandwidth)
	}
	if e.BandwidthMbps.IsNull() {
		target, ceiling := scenarioPublicMbps(), eipCeilingMbps(e.InternetChargeType.ValueString())
		e.BandwidthMbps = types.Int64Value(min(target, ceiling))
		if target > ceiling && !wasNAT {
			diags.AddAttributeWarning(path.Root("egress").AtName("bandwidth_mbps"), "EIP bandwidth below the scenario's target",
				fmt.Sprintf("The scenario's public bandwidth target is %d Gbit/s (%d Mbit/s), but one pay-as-you-go EIP billed %s "+
					"takes at most %d Mbit/s, so the network's EIP gets %d Mbit/s. To reach the target, put the EIP in an Internet "+
					"Shared Bandwidth plan (not managed by this provider yet) and set egress.bandwidth_mbps to what the plan gives "+
					"it; set egress.bandwidth_mbps explicitly to silence this warning.",
					netplan.Plan.PublicGbps, target, e.InternetChargeType.ValueString(), ceiling, ceiling))
		}
	}
	e = e.withoutCloudIDs()
	e.NATGatewayID, e.EIPID, e.EIPAddress, e.SnatTableID = types.StringUnknown(), types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
	e.SnatEntryIDs = types.MapUnknown(types.StringType)
	if !wasNAT || !was.InternetChargeType.Equal(e.InternetChargeType) {
		return e.value()
	}
	// The same egress stays: keep what the state has of it, except what is missing there.
	keep := func(v types.String) types.String {
		if v.IsNull() || v.IsUnknown() {
			return types.StringUnknown()
		}
		return v
	}
	e.NATGatewayID, e.EIPID, e.EIPAddress, e.SnatTableID = keep(was.NATGatewayID), keep(was.EIPID), keep(was.EIPAddress), keep(was.SnatTableID)
	if snatCoversVSwitches(ctx, was.SnatEntryIDs, plan.VSwitchIDs, diags) && !e.NATGatewayID.IsUnknown() {
		e.SnatEntryIDs = was.SnatEntryIDs
	}
	return e.value()
}

// snatCoversVSwitches reports whether entries has exactly one entry per vSwitch of vswitchIDs
// (zone -> id), both known.
func snatCoversVSwitches(ctx context.Context, entries, vswitchIDs types.Map, diags *diag.Diagnostics) bool {
	if entries.IsNull() || entries.IsUnknown() || vswitchIDs.IsNull() || vswitchIDs.IsUnknown() {
		return false
	}
	have, zones := map[string]string{}, map[string]string{}
	diags.Append(entries.ElementsAs(ctx, &have, false)...)
	diags.Append(vswitchIDs.ElementsAs(ctx, &zones, false)...)
	if len(have) != len(zones) {
		return false
	}
	for _, sw := range zones {
		if have[sw] == "" {
			return false
		}
	}
	return true
}

// --- the cloud side ---

// --- the cloud side is internal/network (egress.go); this is its glue ---

// updateEgress brings the egress to the plan: removed when the mode is no longer nat or the
// EIP's billing changed (an EIP's billing cannot change in place), then built or completed for
// nat (new vSwitches, entries deleted out of band, bandwidth), with the NAT gateway's and EIP's
// tags moved when the network's name or tags changed. It returns the failed step.
func updateEgress(ctx context.Context, c *cloud.Client, ch network.Change, prior egressModel) (string, error) {
	want := ch.In.Egress
	wasNAT := prior.Mode.ValueString() == EgressNAT
	if want.Mode != EgressNAT || (wasNAT && prior.InternetChargeType.ValueString() != want.ChargeType) {
		known := network.EgressState{NATGatewayID: prior.NATGatewayID.ValueString(), EIPID: prior.EIPID.ValueString()}
		if step, err := network.RemoveEgress(ctx, c, ch.ID, ch.VPCID, known); err != nil {
			return step, err
		}
	}
	if want.Mode != EgressNAT {
		return "", nil
	}
	if ch.NameChanged || ch.TagsChanged {
		from, to := network.EgressTags(ch.PriorName, ch.ID, ch.PriorTags), network.EgressTags(ch.In.Name, ch.ID, ch.In.Tags)
		if step, err := network.RetagEgress(ctx, c, ch.ID, ch.VPCID, from, to); err != nil {
			return step, err
		}
	}
	vswitches, err := network.VSwitches(ctx, c, ch.VPCID, ch.ID)
	if err != nil {
		return "listing vSwitches", err
	}
	return network.EnsureEgress(ctx, c, network.EgressSpecOf(ch.ID, ch.VPCID, ch.In), vswitches)
}

// egressValue is the attribute as read: the mode comes from the network's record, the rest from
// the cloud; what the cloud does not hold (a missing EIP's billing) comes from prior.
func egressValue(mode string, st network.EgressState, prior egressModel) types.Object {
	e := egressModel{Mode: types.StringValue(mode), InternetChargeType: types.StringNull(), BandwidthMbps: types.Int64Null()}.withoutCloudIDs()
	str := func(s string) types.String {
		if s == "" {
			return types.StringNull()
		}
		return types.StringValue(s)
	}
	e.NATGatewayID, e.SnatTableID, e.EIPID, e.EIPAddress = str(st.NATGatewayID), str(st.SnatTableID), str(st.EIPID), str(st.EIPAddress)
	if st.NATGatewayID != "" {
		e.SnatEntryIDs = stringMap(st.SnatEntries)
	}
	if mode == EgressNAT {
		e.InternetChargeType, e.BandwidthMbps = prior.InternetChargeType, prior.BandwidthMbps
		if st.EIPID != "" {
			e.InternetChargeType, e.BandwidthMbps = types.StringValue(st.ChargeType), types.Int64Value(int64(st.BandwidthMbps))
		}
		if e.InternetChargeType.IsUnknown() {
			e.InternetChargeType = types.StringNull()
		}
		if e.BandwidthMbps.IsUnknown() {
			e.BandwidthMbps = types.Int64Null()
		}
	}
	return e.value()
}

// egressStateOf is what a model's egress says exists, for removal.
func egressStateOf(ctx context.Context, o types.Object, diags *diag.Diagnostics) network.EgressState {
	e, _ := egressOf(ctx, o, diags)
	return network.EgressState{NATGatewayID: e.NATGatewayID.ValueString(), EIPID: e.EIPID.ValueString(), SnatTableID: e.SnatTableID.ValueString()}
}

// egressWithUnknownsNull is the attribute fit to be saved for a half-made network: what the
// apply has not learnt yet is null.
func egressWithUnknownsNull(o types.Object) types.Object {
	if o.IsUnknown() {
		return types.ObjectNull(egressAttrTypes)
	}
	if o.IsNull() {
		return o
	}
	attrs := o.Attributes()
	out := make(map[string]attr.Value, len(attrs))
	for k, v := range attrs {
		if v.IsUnknown() {
			v = nullOf(egressAttrTypes[k])
		}
		out[k] = v
	}
	return types.ObjectValueMust(egressAttrTypes, out)
}

// nullOf is the null value of one of egressAttrTypes.
func nullOf(t attr.Type) attr.Value {
	switch t {
	case types.StringType:
		return types.StringNull()
	case types.Int64Type:
		return types.Int64Null()
	}
	return types.MapNull(types.StringType)
}

// packageMirrorDoc describes package_mirror, the same on the node bootstrap data source and the
// node pool.
var packageMirrorDoc = "Where the bootstrap takes its packages from, and where the node's pip looks: `internet` (the image's own " +
	"Ubuntu sources, pkgs.k8s.io for Kubernetes, nvidia.github.io for the NVIDIA container toolkit) or `alibaba_vpc`, Alibaba " +
	"Cloud's mirror on its internal network (`" + bootstrap.AlibabaVPCMirrorHost + "`, reachable from a VPC without a route to " +
	"the internet; https://developer.aliyun.com/mirror/): the Ubuntu archive (with the NVIDIA driver and Fabric Manager), the " +
	"Kubernetes packages (its `kubernetes-new` mirror of pkgs.k8s.io), the NVIDIA container toolkit (its `libnvidia-container` " +
	"mirror) and PyPI. The default is `alibaba_vpc` in mainland China regions (`cn-*` but `cn-hongkong`), where the upstream " +
	"hosts answer slowly or not at all, and `internet` elsewhere. Either way the images kubeadm pulls come from its image " +
	"repository, so the nodes need a route out (network `egress.mode` = `nat` or `existing`) unless that repository is in " +
	"the VPC too; nodes on a network without egress need an image with everything preinstalled and `bootstrap = false`."
