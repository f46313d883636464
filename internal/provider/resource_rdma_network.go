package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/network"
)

var (
	_ resource.ResourceWithConfigure      = (*rdmaNetworkResource)(nil)
	_ resource.ResourceWithImportState    = (*rdmaNetworkResource)(nil)
	_ resource.ResourceWithValidateConfig = (*rdmaNetworkResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*rdmaNetworkResource)(nil)
)

func newRDMANetworkResource() resource.Resource { return &rdmaNetworkResource{} }

// rdmaNetworkResource is the network of one GPU cluster: VPC (or a reused one), one vSwitch per
// zone, the cluster's security group, placement groups (deployment sets) and an optional HPC
// cluster. Its id is the security group's id: the one object every network has and owns alone.
type rdmaNetworkResource struct {
	client *cloud.Client
}

const (
	networkCreateTimeout = 20 * time.Minute
	networkUpdateTimeout = 20 * time.Minute
	networkDeleteTimeout = 30 * time.Minute
)

func (r *rdmaNetworkResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_rdma_network"
}

func (r *rdmaNetworkResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := joinAttributes(rdmaNetworkAddressAttributes(), rdmaNetworkAccessAttributes(), rdmaNetworkPlacementAttributes(), rdmaNetworkEgressAttributes(), rdmaNetworkComputedAttributes())
	attrs["timeouts"] = timeoutsAttribute(ctx)
	resp.Schema = schema.Schema{
		MarkdownDescription: "The network of one GPU cluster: a VPC (or an existing one, `vpc_id`), one vSwitch per zone, " +
			"the cluster's security group, placement groups (ECS deployment sets) and, when asked, an HPC cluster.\n\n" +
			"The security group allows all traffic between members (NCCL, MPI, eRDMA: a rule whose source is the group itself), " +
			"SSH (22) and the Kubernetes API (6443) from `admin_cidrs` only, and drops 10.0.0.0/8, 172.16.0.0/12 and " +
			"192.168.0.0/16 at a lower priority than the accepts (\"deny cross-segment\"). Rules changed behind Terraform's back " +
			"show in the next plan (`security_group_rules`) and are restored.\n\n" +
			"Every object carries the tags `gpucluster:managed-by` and `gpucluster:network` (the name); vSwitches also carry " +
			"`gpucluster:network-id`. Deployment sets and the HPC cluster take no tags and are named `gpucluster-<id>-pg-<n>` and " +
			"`gpucluster-<id>`. Every create carries a ClientToken derived from the request, so an interrupted apply adopts " +
			"what it made instead of duplicating it. Import by the id (the security group id).",
		Attributes: attrs,
	}
}

// rdmaNetworkAddressAttributes: the network's id, name and addresses (VPC, CIDRs, zones).
func rdmaNetworkAddressAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "The network's id: the id of its security group (`sg-...`). Import takes this id.",
			PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"name": schema.StringAttribute{
			Required: true,
			MarkdownDescription: "Name of the network: 2-64 characters, starting with a letter, then letters, digits, `.`, `_` or `-`. " +
				"Names the VPC (when created here), the vSwitches (`<name>-<zone>`) and the security group. Updated in place.",
			Validators: []validator.String{stringvalidator.RegexMatches(networkNamePattern,
				"must be 2-64 characters: a letter first, then letters, digits, '.', '_' or '-'")},
		},
		"cidr_block": schema.StringAttribute{
			Required: true,
			MarkdownDescription: "IPv4 block of the network, inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 (a public range is an error), " +
				"/8 to /28. It is the VPC's block when the VPC is created here; with `vpc_id` it must lie inside that VPC's block. " +
				"vSwitch blocks are carved from it. Changing it replaces the network.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
		"zone_ids": schema.SetAttribute{
			Required:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Zones of the provider's region to put one vSwitch in each, such as `cn-wulanchabu-a` (see the `gpucluster_zones` data source). Changing them replaces the network.",
			Validators:          []validator.Set{setvalidator.SizeAtLeast(1)},
			PlanModifiers:       []planmodifier.Set{setplanmodifier.RequiresReplace()},
		},
		"vpc_id": schema.StringAttribute{
			Optional: true,
			Computed: true,
			MarkdownDescription: "An existing VPC to build the network in instead of creating one. It must exist in the provider's region " +
				"and contain `cidr_block`; it is never deleted by this resource. Unset: the id of the VPC created here.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
		},
		"vpc_managed": schema.BoolAttribute{
			Computed:            true,
			MarkdownDescription: "Whether this resource created the VPC (and deletes it with the network): false when `vpc_id` was given.",
		},
		"vswitch_cidrs": schema.MapAttribute{
			Optional:    true,
			Computed:    true,
			ElementType: types.StringType,
			MarkdownDescription: "Block of each zone's vSwitch, keyed by zone id: one entry per zone of `zone_ids`, each /16 to /29, inside " +
				"`cidr_block`, none overlapping. Unset: `cidr_block` is carved evenly, zones in sorted order, each block the smallest " +
				"power of two that fits every zone but no larger than a /16. Changing it replaces the network.",
			PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplaceIfConfigured()},
		},
	}
}

// rdmaNetworkAccessAttributes: who may reach the members, and the tags.
func rdmaNetworkAccessAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"admin_cidrs": schema.SetAttribute{
			Optional:    true,
			Computed:    true,
			ElementType: types.StringType,
			Default:     setdefault.StaticValue(types.SetValueMust(types.StringType, []attr.Value{})),
			MarkdownDescription: "IPv4 blocks allowed to reach SSH (22) and the Kubernetes API (6443) of members; nothing else " +
				"from outside the group is accepted. `0.0.0.0/0` is a plan-time error unless `allow_public_ssh` is true, and a " +
				"warning when it is. Updated in place: new rules are authorised before old ones are revoked, so access never drops " +
				"to nothing. Default: none.",
		},
		"allow_public_ssh": schema.BoolAttribute{
			Optional:            true,
			Computed:            true,
			Default:             booldefault.StaticBool(false),
			MarkdownDescription: "Allow `0.0.0.0/0` in `admin_cidrs` (SSH and the Kubernetes API open to the internet). Default false.",
		},
		"tags": schema.MapAttribute{
			Optional:    true,
			ElementType: types.StringType,
			MarkdownDescription: fmt.Sprintf("Tags for the VPC (when created here), the vSwitches and the security group, at most %d. "+
				"Keys starting with `gpucluster:` are reserved. Updated in place.", maxUserTags),
		},
	}
}

// rdmaNetworkPlacementAttributes: placement groups, eRDMA and the HPC cluster.
func rdmaNetworkPlacementAttributes() map[string]schema.Attribute {
	placements := make([]string, len(netplan.Placements))
	for i, p := range netplan.Placements {
		placements[i] = "`" + p + "`"
	}
	return map[string]schema.Attribute{
		"placement": schema.StringAttribute{
			Optional: true,
			Computed: true,
			Default:  stringdefault.StaticString(netplan.PlacementNone),
			MarkdownDescription: "Placement of members: one of " + strings.Join(placements, ", ") + ". `low_latency` creates ECS deployment sets " +
				"with the LowLatency strategy (one zone, same network topology, at most 20 instances each, no spot instances), the " +
				"choice for training with NCCL; `spread` uses the Availability strategy (members on distinct physical servers). " +
				"Default `none`. Updated in place (the deployment sets are replaced).",
			Validators: []validator.String{stringvalidator.OneOf(netplan.Placements...)},
		},
		"placement_groups": schema.Int64Attribute{
			Optional: true,
			Computed: true,
			MarkdownDescription: fmt.Sprintf("How many placement groups (deployment sets) to create up front, 1-%d; a node pool of n nodes "+
				"needs ceil(n / `placement_group_size`) of them and shards its nodes across `deployment_set_ids` in order. "+
				"Default 1 with a placement, 0 (and only 0) with `none`. Updated in place: groups are added or removed at the end.", netplan.MaxPlacementGroups),
			Validators: []validator.Int64{int64validator.Between(0, netplan.MaxPlacementGroups)},
		},
		"placement_group_size": schema.Int64Attribute{
			Computed:            true,
			MarkdownDescription: fmt.Sprintf("How many instances one placement group holds: %d with a placement (the LowLatency limit), 0 with `none`.", netplan.PlacementGroupSize),
		},
		"erdma": schema.BoolAttribute{
			Optional:            true,
			Computed:            true,
			Default:             booldefault.StaticBool(false),
			MarkdownDescription: "Whether members use eRDMA (elastic RDMA ENIs, `NetworkInterfaceTrafficMode=HighPerformance`); it sets `nccl_env`. Default false.",
		},
		"hpc_cluster": schema.BoolAttribute{
			Optional:            true,
			Computed:            true,
			Default:             booldefault.StaticBool(false),
			MarkdownDescription: "Create an ECS HPC cluster for the network, which SCC instance types (`sccgn*`) require. Default false. Updated in place.",
		},
	}
}

// rdmaNetworkEgressAttributes: the route out (rdma_network_egress.go).
func rdmaNetworkEgressAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"egress": egressSchema(),
	}
}

// rdmaNetworkComputedAttributes: the cloud ids and what the network's plan derives (NCCL settings, bandwidth, rules).
func rdmaNetworkComputedAttributes() map[string]schema.Attribute {
	ncclDoc := []string{}
	for _, on := range []bool{true, false} {
		for _, v := range netplan.NCCLVars(on) {
			ncclDoc = append(ncclDoc, fmt.Sprintf("`%s=%s` (eRDMA %s): %s", v.Name, v.Value, map[bool]string{true: "on", false: "off"}[on], v.Why))
		}
	}
	return map[string]schema.Attribute{
		"vswitch_ids": schema.MapAttribute{
			Computed:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "vSwitch id of each zone, keyed by zone id.",
			PlanModifiers:       []planmodifier.Map{mapplanmodifier.UseStateForUnknown()},
		},
		"security_group_id": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "The cluster's security group; every member joins it.",
			PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"deployment_set_ids": schema.ListAttribute{
			Computed:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Deployment set of each placement group, in order; empty with placement `none`.",
		},
		"hpc_cluster_id": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "The HPC cluster's id, or null without `hpc_cluster`.",
		},
		"nccl_env": schema.MapAttribute{
			Computed:    true,
			ElementType: types.StringType,
			MarkdownDescription: "NCCL environment variables for jobs on this network: " + strings.Join(ncclDoc, "; ") + ". " +
				"NCCL checks GPUDirect RDMA support itself before using it.",
		},
		"bandwidth_plan": schema.SingleNestedAttribute{
			Computed:            true,
			MarkdownDescription: "The design's network plan, for checks and dashboards (alerts fire at 80% of these figures).",
			Attributes: map[string]schema.Attribute{
				"compute_gbps":      schema.Int64Attribute{Computed: true, MarkdownDescription: "Node-to-node RDMA bandwidth, Gbit/s (100)."},
				"storage_gbps":      schema.Int64Attribute{Computed: true, MarkdownDescription: "Storage access bandwidth, Gbit/s (25)."},
				"public_gbps":       schema.Int64Attribute{Computed: true, MarkdownDescription: "Public (EIP) bandwidth, Gbit/s (10)."},
				"latency_target_us": schema.Int64Attribute{Computed: true, MarkdownDescription: "Node-to-node latency target, microseconds, at most (1)."},
			},
		},
		"security_group_rules": schema.ListNestedAttribute{
			Computed: true,
			MarkdownDescription: "The ingress rules of the security group as they are in the cloud, sorted by priority. A rule changed " +
				"outside Terraform makes this differ from the rule set the configuration implies, which the next apply restores.",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"protocol":   schema.StringAttribute{Computed: true, MarkdownDescription: "`TCP`, `UDP`, `ICMP`, `GRE` or `ALL`."},
				"port_range": schema.StringAttribute{Computed: true, MarkdownDescription: "`from/to`, `-1/-1` for all ports."},
				"source":     schema.StringAttribute{Computed: true, MarkdownDescription: "Source CIDR block, or the security group id for member traffic."},
				"policy":     schema.StringAttribute{Computed: true, MarkdownDescription: "`accept` or `drop`."},
				"priority":   schema.Int64Attribute{Computed: true, MarkdownDescription: "1-100; lower wins, drop wins ties."},
			}},
		},
	}
}

func (r *rdmaNetworkResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (r *rdmaNetworkResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan rdmaNetworkModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := startOperation(ctx, r.client, "Creating RDMA network", plan.Timeouts.Create, networkCreateTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	c := r.client

	in, diags := plan.inputs(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	what := fmt.Sprintf("creating RDMA network %q", in.Name)

	// 1. The VPC, unless reused.
	vpcID := in.VPCID
	ownsVPC := vpcID == ""
	if ownsVPC {
		id, err := network.CreateVPC(ctx, c, in)
		if err != nil {
			resp.Diagnostics.AddError("Error "+what+": VPC", err.Error())
			return
		}
		vpcID = id
		if _, err := c.WaitVPCAvailable(ctx, vpcID); err != nil {
			resp.Diagnostics.AddError("Error "+what+": VPC "+vpcID, err.Error()+
				"\nThe VPC is left in place; the next apply adopts it (same ClientToken) instead of creating another.")
			return
		}
	}

	// 2. The security group: its id is the network's id, saved before anything else waits.
	opts := network.Options{CIDRBlock: in.CIDRBlock, ERDMA: in.ERDMA, AllowPublicSSH: in.AllowPublicSSH, OwnsVPC: ownsVPC, Egress: in.Egress.Mode}
	sgID, err := network.CreateSecurityGroup(ctx, c, vpcID, in, opts)
	if err != nil {
		resp.Diagnostics.AddError("Error "+what+": security group in VPC "+vpcID, err.Error())
		return
	}
	what = fmt.Sprintf("creating RDMA network %q (%s)", in.Name, sgID)
	plan.ID = types.StringValue(sgID)
	plan.SecurityGroupID = types.StringValue(sgID)
	plan.VPCID = types.StringValue(vpcID)
	plan.VPCManaged = types.BoolValue(ownsVPC)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan.withUnknownsNull())...)
	if resp.Diagnostics.HasError() {
		return
	}

	fail := func(step string, err error) {
		resp.Diagnostics.AddError("Error "+what+": "+step, err.Error()+
			"\nThe network is saved as tainted; the next apply replaces it, and destroy removes what was made.")
	}

	if step, err := network.BuildMembers(ctx, c, vpcID, sgID, in); err != nil {
		fail(step, err)
		return
	}

	state, gone, diags := r.read(ctx, sgID, &plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if gone != "" {
		fail("reading it back", fmt.Errorf("%s", gone))
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

func (r *rdmaNetworkResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var prior rdmaNetworkModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !clientConfigured(r.client, "Reading RDMA network", &resp.Diagnostics) {
		return
	}
	id := prior.ID.ValueString()
	state, gone, diags := r.read(ctx, id, &prior)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if gone != "" {
		resp.Diagnostics.AddWarning(fmt.Sprintf("RDMA network %s is gone", id),
			gone+" It was removed from the state; the next apply creates the network again.")
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

func (r *rdmaNetworkResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, prior rdmaNetworkModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := startOperation(ctx, r.client, "Updating RDMA network", plan.Timeouts.Update, networkUpdateTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	c := r.client

	in, diags := plan.inputs(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	sgID := prior.ID.ValueString()
	vpcID := prior.VPCID.ValueString()
	ownsVPC := prior.VPCManaged.ValueBool()
	what := fmt.Sprintf("updating RDMA network %q (%s)", in.Name, sgID)

	priorTags := map[string]string{}
	if !prior.Name.Equal(plan.Name) || !prior.Tags.Equal(plan.Tags) {
		resp.Diagnostics.Append(prior.Tags.ElementsAs(ctx, &priorTags, false)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	step, err := network.ApplyNamesAndTags(ctx, c, network.Change{
		ID: sgID, VPCID: vpcID, OwnsVPC: ownsVPC, In: in, PriorName: prior.Name.ValueString(), PriorTags: priorTags,
		NameChanged: !prior.Name.Equal(plan.Name), TagsChanged: !prior.Tags.Equal(plan.Tags),
	})
	if err != nil {
		if step != "" {
			step = ": " + step
		}
		resp.Diagnostics.AddError("Error "+what+step, err.Error())
		return
	}

	priorEgress, _ := egressOf(ctx, prior.Egress, &resp.Diagnostics)
	if step, err := updateEgress(ctx, c, network.Change{ID: sgID, VPCID: vpcID, In: in, PriorName: prior.Name.ValueString(), PriorTags: priorTags,
		NameChanged: !prior.Name.Equal(plan.Name), TagsChanged: !prior.Tags.Equal(plan.Tags)}, priorEgress); err != nil {
		resp.Diagnostics.AddError("Error "+what+": egress: "+step, err.Error())
		return
	}

	// Rules: authorise new before revoking old.
	if err := network.ReconcileRules(ctx, c, sgID, netplan.DesiredRules(sgID, in.AdminCIDRs)); err != nil {
		resp.Diagnostics.AddError("Error "+what+": security group rules", err.Error())
		return
	}
	if _, err := network.ReconcilePlacement(ctx, c, sgID, in.Name, in.Placement, in.PlacementGroups); err != nil {
		resp.Diagnostics.AddError("Error "+what+": placement groups", err.Error())
		return
	}
	if _, err := network.ReconcileHPC(ctx, c, sgID, in.Name, in.HPCCluster); err != nil {
		resp.Diagnostics.AddError("Error "+what+": HPC cluster", err.Error())
		return
	}

	state, gone, diags := r.read(ctx, sgID, &plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if gone != "" {
		resp.Diagnostics.AddError("Error "+what+": reading it back", gone)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

func (r *rdmaNetworkResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var prior rdmaNetworkModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := startOperation(ctx, r.client, "Deleting RDMA network", prior.Timeouts.Delete, networkDeleteTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	c := r.client

	sgID := prior.ID.ValueString()
	what := fmt.Sprintf("deleting RDMA network %q (%s)", prior.Name.ValueString(), sgID)
	stateIDs := map[string]string{}
	resp.Diagnostics.Append(prior.VSwitchIDs.ElementsAs(ctx, &stateIDs, false)...)
	rm := network.Removal{ID: sgID, Name: prior.Name.ValueString(), VPCID: prior.VPCID.ValueString(),
		OwnsVPC: prior.VPCManaged.ValueBool(), HPCClusterID: prior.HPCClusterID.ValueString(),
		Egress: egressStateOf(ctx, prior.Egress, &resp.Diagnostics)}
	for _, id := range stateIDs {
		rm.VSwitchIDs = append(rm.VSwitchIDs, id)
	}
	if step, err := network.Delete(ctx, c, rm); err != nil {
		resp.Diagnostics.AddError("Error "+what+": "+step, err.Error())
	}
}

func (r *rdmaNetworkResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !strings.HasPrefix(req.ID, "sg-") {
		resp.Diagnostics.AddError("Importing RDMA network "+req.ID,
			"The import id is the network's security group id (sg-...), as shown in the id attribute.")
		return
	}
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}
