package provider

// The data of gpucluster_rdma_network: its tfsdk model, the planned inputs as plain Go values,
// and read, which rebuilds the model from the cloud.

import (
	"context"
	"fmt"
	"regexp"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/network"
)

// rdmaNetworkModel is the resource's data.
type rdmaNetworkModel struct {
	ID                 types.String   `tfsdk:"id"`
	Name               types.String   `tfsdk:"name"`
	CIDRBlock          types.String   `tfsdk:"cidr_block"`
	ZoneIDs            types.Set      `tfsdk:"zone_ids"`
	VPCID              types.String   `tfsdk:"vpc_id"`
	VPCManaged         types.Bool     `tfsdk:"vpc_managed"`
	VSwitchCIDRs       types.Map      `tfsdk:"vswitch_cidrs"`
	AdminCIDRs         types.Set      `tfsdk:"admin_cidrs"`
	AllowPublicSSH     types.Bool     `tfsdk:"allow_public_ssh"`
	Placement          types.String   `tfsdk:"placement"`
	PlacementGroups    types.Int64    `tfsdk:"placement_groups"`
	PlacementGroupSize types.Int64    `tfsdk:"placement_group_size"`
	ERDMA              types.Bool     `tfsdk:"erdma"`
	HPCCluster         types.Bool     `tfsdk:"hpc_cluster"`
	Tags               types.Map      `tfsdk:"tags"`
	Timeouts           timeouts.Value `tfsdk:"timeouts"`
	VSwitchIDs         types.Map      `tfsdk:"vswitch_ids"`
	SecurityGroupID    types.String   `tfsdk:"security_group_id"`
	DeploymentSetIDs   types.List     `tfsdk:"deployment_set_ids"`
	HPCClusterID       types.String   `tfsdk:"hpc_cluster_id"`
	NCCLEnv            types.Map      `tfsdk:"nccl_env"`
	BandwidthPlan      types.Object   `tfsdk:"bandwidth_plan"`
	SecurityGroupRules types.List     `tfsdk:"security_group_rules"`
	Egress             types.Object   `tfsdk:"egress"`
}

func (m rdmaNetworkModel) inputs(ctx context.Context) (network.Inputs, diag.Diagnostics) {
	var diags diag.Diagnostics
	in := network.Inputs{
		Name: m.Name.ValueString(), CIDRBlock: m.CIDRBlock.ValueString(), VPCID: m.VPCID.ValueString(),
		AllowPublicSSH: m.AllowPublicSSH.ValueBool(), Placement: m.Placement.ValueString(),
		PlacementGroups: int(m.PlacementGroups.ValueInt64()), ERDMA: m.ERDMA.ValueBool(), HPCCluster: m.HPCCluster.ValueBool(),
		VSwitchCIDRs: map[string]string{}, Tags: map[string]string{},
	}
	if m.VPCID.IsUnknown() {
		in.VPCID = ""
	}
	diags.Append(m.ZoneIDs.ElementsAs(ctx, &in.Zones, false)...)
	diags.Append(m.AdminCIDRs.ElementsAs(ctx, &in.AdminCIDRs, false)...)
	diags.Append(m.VSwitchCIDRs.ElementsAs(ctx, &in.VSwitchCIDRs, false)...)
	if !m.Tags.IsNull() {
		diags.Append(m.Tags.ElementsAs(ctx, &in.Tags, false)...)
	}
	sort.Strings(in.Zones)
	sort.Strings(in.AdminCIDRs)
	e, _ := egressOf(ctx, m.Egress, &diags)
	in.Egress = network.EgressInputs{Mode: e.Mode.ValueString(), ChargeType: e.InternetChargeType.ValueString(), BandwidthMbps: int(e.BandwidthMbps.ValueInt64())}
	return in, diags
}

// withUnknownsNull is the model with every unknown computed value null, fit to be saved as the
// state of a half-made network.
func (m rdmaNetworkModel) withUnknownsNull() rdmaNetworkModel {
	if m.VSwitchIDs.IsUnknown() {
		m.VSwitchIDs = types.MapNull(types.StringType)
	}
	if m.DeploymentSetIDs.IsUnknown() {
		m.DeploymentSetIDs = types.ListNull(types.StringType)
	}
	if m.HPCClusterID.IsUnknown() {
		m.HPCClusterID = types.StringNull()
	}
	if m.SecurityGroupRules.IsUnknown() {
		m.SecurityGroupRules = types.ListNull(types.ObjectType{AttrTypes: ruleAttrTypes})
	}
	if m.NCCLEnv.IsUnknown() {
		m.NCCLEnv = types.MapNull(types.StringType)
	}
	if m.PlacementGroups.IsUnknown() {
		m.PlacementGroups = types.Int64Null()
	}
	if m.PlacementGroupSize.IsUnknown() {
		m.PlacementGroupSize = types.Int64Null()
	}
	if m.VSwitchCIDRs.IsUnknown() {
		m.VSwitchCIDRs = types.MapNull(types.StringType)
	}
	m.Egress = egressWithUnknownsNull(m.Egress)
	return m
}

// networkNamePattern: a letter, then 1-63 letters, digits, '.', '_' or '-'.
var networkNamePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]{1,63}$`)

var ruleAttrTypes = map[string]attr.Type{
	"protocol": types.StringType, "port_range": types.StringType, "source": types.StringType,
	"policy": types.StringType, "priority": types.Int64Type,
}

func rulesValue(rules []netplan.Rule) types.List {
	elems := make([]attr.Value, 0, len(rules))
	for _, r := range rules {
		elems = append(elems, types.ObjectValueMust(ruleAttrTypes, map[string]attr.Value{
			"protocol": types.StringValue(r.Protocol), "port_range": types.StringValue(r.PortRange),
			"source": types.StringValue(r.Source), "policy": types.StringValue(r.Policy),
			"priority": types.Int64Value(int64(r.Priority)),
		}))
	}
	return types.ListValueMust(types.ObjectType{AttrTypes: ruleAttrTypes}, elems)
}

var bandwidthAttrTypes = map[string]attr.Type{
	"compute_gbps": types.Int64Type, "storage_gbps": types.Int64Type, "public_gbps": types.Int64Type, "latency_target_us": types.Int64Type,
}

func bandwidthPlanValue() types.Object {
	p := netplan.Plan
	return types.ObjectValueMust(bandwidthAttrTypes, map[string]attr.Value{
		"compute_gbps": types.Int64Value(p.ComputeGbps), "storage_gbps": types.Int64Value(p.StorageGbps),
		"public_gbps": types.Int64Value(p.PublicGbps), "latency_target_us": types.Int64Value(p.LatencyTargetUs),
	})
}

func netStringSet(values []string) types.Set {
	elems := make([]attr.Value, 0, len(values))
	for _, v := range values {
		elems = append(elems, types.StringValue(v))
	}
	return types.SetValueMust(types.StringType, elems)
}

func netSortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// knownStrings returns the elements of a set when it and all of them are known.
func netKnownStrings(ctx context.Context, s types.Set, diags *diag.Diagnostics) ([]string, bool) {
	if s.IsNull() || s.IsUnknown() {
		return nil, false
	}
	var elems []types.String
	diags.Append(s.ElementsAs(ctx, &elems, false)...)
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		if e.IsUnknown() {
			return nil, false
		}
		out = append(out, e.ValueString())
	}
	sort.Strings(out)
	return out, true
}

// read rebuilds the whole model from the cloud, starting from the security group. gone is set,
// with the reason, when the network no longer exists (security group or VPC deleted). prior gives
// what the cloud does not hold: timeouts, and whether tags were written as an empty map.
func (r *rdmaNetworkResource) read(ctx context.Context, id string, prior *rdmaNetworkModel) (rdmaNetworkModel, string, diag.Diagnostics) {
	var diags diag.Diagnostics
	c := r.client
	what := "reading RDMA network " + id
	m := rdmaNetworkModel{ID: types.StringValue(id), SecurityGroupID: types.StringValue(id), Timeouts: prior.Timeouts}

	g, err := c.FindSecurityGroup(ctx, id)
	if cloud.IsNotFound(err) {
		return m, fmt.Sprintf("Its security group %s no longer exists.", id), diags
	}
	if err != nil {
		diags.AddError("Error "+what, err.Error())
		return m, "", diags
	}
	v, err := c.FindVPC(ctx, g.VPCID)
	if cloud.IsNotFound(err) {
		return m, fmt.Sprintf("Its VPC %s no longer exists.", g.VPCID), diags
	}
	if err != nil {
		diags.AddError("Error "+what+": VPC "+g.VPCID, err.Error())
		return m, "", diags
	}
	opts := m.setSettings(id, g, v, prior, &diags)

	vswitches, err := network.VSwitches(ctx, c, g.VPCID, id)
	if err != nil {
		diags.AddError("Error "+what+": vSwitches of VPC "+g.VPCID, err.Error())
		return m, "", diags
	}
	m.setVSwitches(vswitches)
	for _, step := range []func() (string, error){
		func() (string, error) { return "security group rules", m.readRules(ctx, c, id) },
		func() (string, error) { return "deployment sets", m.readPlacement(ctx, c, id, prior, &diags) },
		func() (string, error) { return "HPC cluster", m.readHPC(ctx, c, id) },
		func() (string, error) {
			return "egress", m.readEgress(ctx, c, id, g.VPCID, vswitches, opts, prior, &diags)
		},
	} {
		if name, err := step(); err != nil {
			diags.AddError("Error "+what+": "+name, err.Error())
			return m, "", diags
		}
	}
	tflog.Debug(ctx, "read RDMA network", map[string]any{"id": id, "vpc_id": g.VPCID, "zones": len(vswitches), "rules": len(m.SecurityGroupRules.Elements())})
	return m, "", diags
}

// setSettings records what the security group and the VPC say: the settings on the group's
// options tag (guessed from the cloud when the tag is missing), name, VPC and tags.
func (m *rdmaNetworkModel) setSettings(id string, g *cloud.SecurityGroup, v *cloud.VPC, prior *rdmaNetworkModel, diags *diag.Diagnostics) network.Options {
	tags := g.Tags
	opts, ok := network.DecodeOptions(tags[tagOptions])
	if !ok {
		// Not made by this provider (or its tag was edited): fall back to what the cloud shows.
		opts = network.Options{CIDRBlock: v.CIDRBlock, OwnsVPC: tags[tagManagedBy] == managedByVal}
		diags.AddWarning("RDMA network "+id+": settings tag missing",
			fmt.Sprintf("The security group's %s tag is missing or malformed; cidr_block, erdma, allow_public_ssh and vpc_managed were guessed from the cloud. The next apply writes the tag again.", tagOptions))
	}
	m.Name = types.StringValue(g.Name)
	m.VPCID = types.StringValue(g.VPCID)
	m.VPCManaged = types.BoolValue(opts.OwnsVPC)
	m.CIDRBlock = types.StringValue(opts.CIDRBlock)
	m.ERDMA = types.BoolValue(opts.ERDMA)
	m.AllowPublicSSH = types.BoolValue(opts.AllowPublicSSH)
	m.NCCLEnv = stringMap(netplan.NCCLEnv(opts.ERDMA))
	m.BandwidthPlan = bandwidthPlanValue()
	user := userTags(tags)
	if len(user) == 0 && (prior.Tags.IsNull() || prior.Tags.IsUnknown()) {
		m.Tags = types.MapNull(types.StringType)
	} else {
		m.Tags = stringMap(user)
	}
	return opts
}

// setVSwitches records the network's zones with their vSwitches and CIDRs.
func (m *rdmaNetworkModel) setVSwitches(vswitches []cloud.VSwitch) {
	zones := []string{}
	ids, cidrs := map[string]string{}, map[string]string{}
	for _, sw := range vswitches {
		zones = append(zones, sw.ZoneID)
		ids[sw.ZoneID] = sw.ID
		cidrs[sw.ZoneID] = sw.CIDRBlock
	}
	m.ZoneIDs = netStringSet(zones)
	m.VSwitchIDs = stringMap(ids)
	m.VSwitchCIDRs = stringMap(cidrs)
}

// readRules records the security group's rules and the admin CIDRs they let in.
func (m *rdmaNetworkModel) readRules(ctx context.Context, c *cloud.Client, id string) error {
	rules, _, err := network.ActualRules(ctx, c, id)
	if err != nil {
		return err
	}
	m.SecurityGroupRules = rulesValue(rules)
	m.AdminCIDRs = netStringSet(netplan.AdminCIDRs(rules))
	return nil
}

// readPlacement records the placement groups.
func (m *rdmaNetworkModel) readPlacement(ctx context.Context, c *cloud.Client, id string, prior *rdmaNetworkModel, diags *diag.Diagnostics) error {
	placement, sets, err := network.Placement(ctx, c, id)
	if err != nil {
		return err
	}
	dsIDs := make([]string, 0, len(sets))
	for _, ds := range sets {
		dsIDs = append(dsIDs, ds.ID)
	}
	if len(dsIDs) == 0 && !prior.Placement.IsNull() && !prior.Placement.IsUnknown() {
		// Every group is gone: keep the placement and let placement_groups show the loss.
		placement = prior.Placement.ValueString()
	}
	m.Placement = types.StringValue(placement)
	m.PlacementGroups = types.Int64Value(int64(len(dsIDs)))
	m.PlacementGroupSize = types.Int64Value(int64(netplan.GroupSize(placement)))
	dsList, d := types.ListValueFrom(ctx, types.StringType, dsIDs)
	diags.Append(d...)
	m.DeploymentSetIDs = dsList
	return nil
}

// readHPC records the HPC cluster, if any.
func (m *rdmaNetworkModel) readHPC(ctx context.Context, c *cloud.Client, id string) error {
	h, err := network.HPC(ctx, c, id)
	switch {
	case err != nil:
		return err
	case h == nil:
		m.HPCCluster = types.BoolValue(false)
		m.HPCClusterID = types.StringNull()
	default:
		m.HPCCluster = types.BoolValue(true)
		m.HPCClusterID = types.StringValue(h.ID)
	}
	return nil
}

// readEgress records the egress: the mode from the settings, the rest from the cloud.
func (m *rdmaNetworkModel) readEgress(ctx context.Context, c *cloud.Client, id, vpcID string, vswitches []cloud.VSwitch, opts network.Options, prior *rdmaNetworkModel, diags *diag.Diagnostics) error {
	st, err := network.ReadEgress(ctx, c, id, vpcID, vswitches)
	if err != nil {
		return err
	}
	mode := opts.Egress
	if mode == "" {
		// A network made before egress existed: say what the cloud shows.
		switch {
		case st.NATGatewayID != "":
			mode = EgressNAT
		case opts.OwnsVPC:
			mode = EgressNone
		default:
			mode = EgressExisting
		}
	}
	priorEgress, _ := egressOf(ctx, prior.Egress, diags)
	m.Egress = egressValue(mode, st, priorEgress)
	return nil
}
