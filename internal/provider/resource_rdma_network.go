package provider

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
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
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
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
	placements := make([]string, len(netplan.Placements))
	for i, p := range netplan.Placements {
		placements[i] = "`" + p + "`"
	}
	ncclDoc := []string{}
	for _, on := range []bool{true, false} {
		for _, v := range netplan.NCCLVars(on) {
			ncclDoc = append(ncclDoc, fmt.Sprintf("`%s=%s` (eRDMA %s): %s", v.Name, v.Value, map[bool]string{true: "on", false: "off"}[on], v.Why))
		}
	}
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
		Attributes: map[string]schema.Attribute{
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
			"tags": schema.MapAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: fmt.Sprintf("Tags for the VPC (when created here), the vSwitches and the security group, at most %d. "+
					"Keys starting with `gpucluster:` are reserved. Updated in place.", maxUserTags),
			},
			"timeouts": timeoutsAttribute(ctx),

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
	c := r.client
	if c == nil {
		resp.Diagnostics.AddError("Creating RDMA network: provider not configured", "The provider was not configured; this is a bug.")
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, networkCreateTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

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
		id, err := createVPC(ctx, c, in)
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
	opts := networkOptions{CIDRBlock: in.CIDRBlock, ERDMA: in.ERDMA, AllowPublicSSH: in.AllowPublicSSH, OwnsVPC: ownsVPC}
	sgID, err := createSecurityGroup(ctx, c, vpcID, in, opts)
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

	// 3. One vSwitch per zone.
	for _, zone := range in.Zones {
		if _, err := createVSwitch(ctx, c, vpcID, sgID, zone, in.VSwitchCIDRs[zone], in); err != nil {
			fail("vSwitch in "+zone, err)
			return
		}
	}
	// 4. Rules: members, admins, deny cross-segment.
	if err := reconcileRules(ctx, c, sgID, netplan.DesiredRules(sgID, in.AdminCIDRs)); err != nil {
		fail("security group rules", err)
		return
	}
	// 5. Placement groups and the HPC cluster.
	if _, err := reconcilePlacement(ctx, c, sgID, in.Name, in.Placement, in.PlacementGroups); err != nil {
		fail("placement groups", err)
		return
	}
	if _, err := reconcileHPC(ctx, c, sgID, in.Name, in.HPCCluster); err != nil {
		fail("HPC cluster", err)
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
	if r.client == nil {
		resp.Diagnostics.AddError("Reading RDMA network: provider not configured", "The provider was not configured; this is a bug.")
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
	c := r.client
	if c == nil {
		resp.Diagnostics.AddError("Updating RDMA network: provider not configured", "The provider was not configured; this is a bug.")
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, networkUpdateTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	in, diags := plan.inputs(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	sgID := prior.ID.ValueString()
	vpcID := prior.VPCID.ValueString()
	ownsVPC := prior.VPCManaged.ValueBool()
	what := fmt.Sprintf("updating RDMA network %q (%s)", in.Name, sgID)

	g, err := c.FindSecurityGroup(ctx, sgID)
	if err != nil {
		resp.Diagnostics.AddError("Error "+what, err.Error())
		return
	}
	vswitches, err := c.FindVSwitches(ctx, vpcID, map[string]string{tagNetworkID: sgID})
	if err != nil {
		resp.Diagnostics.AddError("Error "+what+": listing vSwitches", err.Error())
		return
	}

	// Name.
	if g.SecurityGroupName != in.Name {
		req := ecs.CreateModifySecurityGroupAttributeRequest()
		req.RegionId = c.Region()
		req.SecurityGroupId = sgID
		req.SecurityGroupName = in.Name
		if err := c.Call(ctx, req, ecs.CreateModifySecurityGroupAttributeResponse()); err != nil {
			resp.Diagnostics.AddError("Error "+what+": renaming the security group", err.Error())
			return
		}
	}
	if ownsVPC && !prior.Name.Equal(plan.Name) {
		req := vpc.CreateModifyVpcAttributeRequest()
		req.RegionId = c.Region()
		req.VpcId = vpcID
		req.VpcName = in.Name
		if err := c.Call(ctx, req, vpc.CreateModifyVpcAttributeResponse()); err != nil {
			resp.Diagnostics.AddError("Error "+what+": renaming VPC "+vpcID, err.Error())
			return
		}
	}
	for _, sw := range vswitches {
		if want := vswitchName(in.Name, sw.ZoneId); sw.VSwitchName != want {
			req := vpc.CreateModifyVSwitchAttributeRequest()
			req.RegionId = c.Region()
			req.VSwitchId = sw.VSwitchId
			req.VSwitchName = want
			if err := c.Call(ctx, req, vpc.CreateModifyVSwitchAttributeResponse()); err != nil {
				resp.Diagnostics.AddError("Error "+what+": renaming vSwitch "+sw.VSwitchId, err.Error())
				return
			}
		}
	}

	// Tags and options. The security group's tags are read from the cloud; the VPC's and the
	// vSwitches' tags moved only when the name or the user tags changed.
	opts := networkOptions{CIDRBlock: in.CIDRBlock, ERDMA: in.ERDMA, AllowPublicSSH: in.AllowPublicSSH, OwnsVPC: ownsVPC}
	wantSG := netMergeTags(in.Tags, systemTags(in.Name, ""), map[string]string{tagOptions: opts.encode()})
	if err := retagSecurityGroup(ctx, c, sgID, sgTags(g), wantSG); err != nil {
		resp.Diagnostics.AddError("Error "+what+": tagging the security group", err.Error())
		return
	}
	if !prior.Name.Equal(plan.Name) || !prior.Tags.Equal(plan.Tags) {
		priorTags := map[string]string{}
		resp.Diagnostics.Append(prior.Tags.ElementsAs(ctx, &priorTags, false)...)
		if resp.Diagnostics.HasError() {
			return
		}
		if ownsVPC {
			err := retagVPCObjects(ctx, c, "VPC", []string{vpcID},
				netMergeTags(priorTags, systemTags(prior.Name.ValueString(), "")), netMergeTags(in.Tags, systemTags(in.Name, "")))
			if err != nil {
				resp.Diagnostics.AddError("Error "+what+": tagging VPC "+vpcID, err.Error())
				return
			}
		}
		ids := make([]string, 0, len(vswitches))
		for _, sw := range vswitches {
			ids = append(ids, sw.VSwitchId)
		}
		err := retagVPCObjects(ctx, c, "VSWITCH", ids,
			netMergeTags(priorTags, systemTags(prior.Name.ValueString(), sgID)), netMergeTags(in.Tags, systemTags(in.Name, sgID)))
		if err != nil {
			resp.Diagnostics.AddError("Error "+what+": tagging vSwitches", err.Error())
			return
		}
	}

	// Rules: authorise new before revoking old.
	if err := reconcileRules(ctx, c, sgID, netplan.DesiredRules(sgID, in.AdminCIDRs)); err != nil {
		resp.Diagnostics.AddError("Error "+what+": security group rules", err.Error())
		return
	}
	if _, err := reconcilePlacement(ctx, c, sgID, in.Name, in.Placement, in.PlacementGroups); err != nil {
		resp.Diagnostics.AddError("Error "+what+": placement groups", err.Error())
		return
	}
	if _, err := reconcileHPC(ctx, c, sgID, in.Name, in.HPCCluster); err != nil {
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
	c := r.client
	if c == nil {
		resp.Diagnostics.AddError("Deleting RDMA network: provider not configured", "The provider was not configured; this is a bug.")
		return
	}
	timeout, diags := prior.Timeouts.Delete(ctx, networkDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	sgID := prior.ID.ValueString()
	vpcID := prior.VPCID.ValueString()
	what := fmt.Sprintf("deleting RDMA network %q (%s)", prior.Name.ValueString(), sgID)

	// Dependency order: what holds instances first (HPC cluster, deployment sets), then the
	// security group, the vSwitches, and the VPC last. Each step treats not found as done and
	// waits out DependencyViolation while members drain, within the delete timeout.
	if _, err := reconcileHPC(ctx, c, sgID, prior.Name.ValueString(), false); err != nil {
		resp.Diagnostics.AddError("Error "+what+": HPC cluster", err.Error())
		return
	}
	if !prior.HPCClusterID.IsNull() && prior.HPCClusterID.ValueString() != "" {
		if err := c.DeleteHpcCluster(ctx, prior.HPCClusterID.ValueString()); err != nil {
			resp.Diagnostics.AddError("Error "+what+": HPC cluster", err.Error())
			return
		}
	}
	if _, err := reconcilePlacement(ctx, c, sgID, prior.Name.ValueString(), netplan.PlacementNone, 0); err != nil {
		resp.Diagnostics.AddError("Error "+what+": placement groups", err.Error())
		return
	}
	if err := c.DeleteSecurityGroup(ctx, sgID); err != nil {
		resp.Diagnostics.AddError("Error "+what+": security group", err.Error())
		return
	}

	vswitchIDs := map[string]bool{}
	stateIDs := map[string]string{}
	resp.Diagnostics.Append(prior.VSwitchIDs.ElementsAs(ctx, &stateIDs, false)...)
	for _, id := range stateIDs {
		vswitchIDs[id] = true
	}
	if vpcID != "" {
		found, err := c.FindVSwitches(ctx, vpcID, map[string]string{tagNetworkID: sgID})
		if err != nil && !cloud.IsNotFound(err) {
			resp.Diagnostics.AddError("Error "+what+": listing vSwitches of VPC "+vpcID, err.Error())
			return
		}
		for _, sw := range found {
			vswitchIDs[sw.VSwitchId] = true
		}
	}
	for _, id := range netSortedSet(vswitchIDs) {
		if err := c.DeleteVSwitch(ctx, id); err != nil {
			resp.Diagnostics.AddError("Error "+what+": vSwitch "+id, err.Error())
			return
		}
	}
	if prior.VPCManaged.ValueBool() && vpcID != "" {
		if err := c.DeleteVPC(ctx, vpcID); err != nil {
			resp.Diagnostics.AddError("Error "+what+": VPC "+vpcID, err.Error())
			return
		}
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

	if !cfg.Tags.IsNull() && !cfg.Tags.IsUnknown() {
		tags := map[string]types.String{}
		resp.Diagnostics.Append(cfg.Tags.ElementsAs(ctx, &tags, false)...)
		for k := range tags {
			if strings.HasPrefix(k, tagPrefix) {
				resp.Diagnostics.AddAttributeError(path.Root("tags").AtMapKey(k), "Reserved tag key",
					fmt.Sprintf("Tag keys starting with %q are the provider's own; rename %q.", tagPrefix, k))
			}
		}
		if len(tags) > maxUserTags {
			resp.Diagnostics.AddAttributeError(path.Root("tags"), "Too many tags",
				fmt.Sprintf("%d tags given; at most %d, the rest of the API's 20 per resource being the provider's own.", len(tags), maxUserTags))
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
	vpcBlock, err := netip.ParsePrefix(v.CidrBlock)
	if err == nil && !netplan.Contains(vpcBlock, block) {
		diags.AddAttributeError(path.Root("cidr_block"), "cidr_block outside the reused VPC",
			fmt.Sprintf("cidr_block %s is not inside %s, the block of VPC %s; pick a free range inside it.", block, v.CidrBlock, vpcID))
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
			q, err := netip.ParsePrefix(sw.CidrBlock)
			if err == nil && q.Overlaps(p) {
				diags.AddAttributeError(path.Root("vswitch_cidrs").AtMapKey(zone), "vSwitch block taken in the reused VPC",
					fmt.Sprintf("%s (zone %s) overlaps vSwitch %s (%s) of VPC %s; pick free blocks with vswitch_cidrs or another cidr_block.",
						p, zone, sw.VSwitchId, sw.CidrBlock, vpcID))
			}
		}
	}
}

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
}

// networkInputs is a planned model as plain Go values.
type networkInputs struct {
	Name            string
	CIDRBlock       string
	Zones           []string
	VPCID           string
	VSwitchCIDRs    map[string]string
	AdminCIDRs      []string
	AllowPublicSSH  bool
	Placement       string
	PlacementGroups int
	ERDMA           bool
	HPCCluster      bool
	Tags            map[string]string
}

func (m rdmaNetworkModel) inputs(ctx context.Context) (networkInputs, diag.Diagnostics) {
	var diags diag.Diagnostics
	in := networkInputs{
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
	return m
}

// networkNamePattern: a letter, then 1-63 letters, digits, '.', '_' or '-'.
var networkNamePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]{1,63}$`)

func vswitchName(network, zone string) string { return network + "-" + zone }

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

// createVPC creates the network's VPC with a ClientToken from the request, adopting one an
// interrupted apply left.
func createVPC(ctx context.Context, c *cloud.Client, in networkInputs) (string, error) {
	tags := netMergeTags(in.Tags, systemTags(in.Name, ""))
	desc := "VPC of gpucluster network " + in.Name
	parts := []string{"CreateVpc", c.Region(), in.Name, in.CIDRBlock, desc}
	for _, k := range sortedKeys(tags) {
		parts = append(parts, k+"="+tags[k])
	}
	return createAdoptable("VPC", parts, func(token string) (string, error) {
		req := vpc.CreateCreateVpcRequest()
		req.RegionId = c.Region()
		req.ClientToken = token
		req.VpcName = in.Name
		req.CidrBlock = in.CIDRBlock
		req.Description = desc
		ts := make([]vpc.CreateVpcTag, 0, len(tags))
		for _, k := range sortedKeys(tags) {
			ts = append(ts, vpc.CreateVpcTag{Key: k, Value: tags[k]})
		}
		req.Tag = &ts
		resp := vpc.CreateCreateVpcResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return "", err
		}
		return resp.VpcId, nil
	}, func(id string) error { _, err := c.FindVPC(ctx, id); return err })
}

func createSecurityGroup(ctx context.Context, c *cloud.Client, vpcID string, in networkInputs, opts networkOptions) (string, error) {
	tags := netMergeTags(in.Tags, systemTags(in.Name, ""), map[string]string{tagOptions: opts.encode()})
	desc := "Cluster security group of gpucluster network " + in.Name
	parts := []string{"CreateSecurityGroup", c.Region(), vpcID, in.Name, desc}
	for _, k := range sortedKeys(tags) {
		parts = append(parts, k+"="+tags[k])
	}
	return createAdoptable("security group", parts, func(token string) (string, error) {
		req := ecs.CreateCreateSecurityGroupRequest()
		req.RegionId = c.Region()
		req.ClientToken = token
		req.VpcId = vpcID
		req.SecurityGroupName = in.Name
		req.Description = desc
		req.SecurityGroupType = "normal"
		ts := make([]ecs.CreateSecurityGroupTag, 0, len(tags))
		for _, k := range sortedKeys(tags) {
			ts = append(ts, ecs.CreateSecurityGroupTag{Key: k, Value: tags[k]})
		}
		req.Tag = &ts
		resp := ecs.CreateCreateSecurityGroupResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return "", err
		}
		return resp.SecurityGroupId, nil
	}, func(id string) error { _, err := c.FindSecurityGroup(ctx, id); return err })
}

func createVSwitch(ctx context.Context, c *cloud.Client, vpcID, networkID, zone, cidr string, in networkInputs) (string, error) {
	tags := netMergeTags(in.Tags, systemTags(in.Name, networkID))
	name := vswitchName(in.Name, zone)
	parts := []string{"CreateVSwitch", c.Region(), vpcID, zone, cidr, name}
	for _, k := range sortedKeys(tags) {
		parts = append(parts, k+"="+tags[k])
	}
	id, err := createAdoptable("vSwitch", parts, func(token string) (string, error) {
		req := vpc.CreateCreateVSwitchRequest()
		req.RegionId = c.Region()
		req.ClientToken = token
		req.VpcId = vpcID
		req.ZoneId = zone
		req.CidrBlock = cidr
		req.VSwitchName = name
		ts := make([]vpc.CreateVSwitchTag, 0, len(tags))
		for _, k := range sortedKeys(tags) {
			ts = append(ts, vpc.CreateVSwitchTag{Key: k, Value: tags[k]})
		}
		req.Tag = &ts
		resp := vpc.CreateCreateVSwitchResponse()
		if err := c.Call(ctx, req, resp, cloud.RetryOn("IncorrectVpcStatus", "OperationConflict")); err != nil {
			return "", err
		}
		return resp.VSwitchId, nil
	}, func(id string) error { _, err := c.FindVSwitch(ctx, id); return err })
	if err != nil {
		return "", err
	}
	if _, err := c.WaitVSwitchAvailable(ctx, id); err != nil {
		return "", err
	}
	return id, nil
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
	v, err := c.FindVPC(ctx, g.VpcId)
	if cloud.IsNotFound(err) {
		return m, fmt.Sprintf("Its VPC %s no longer exists.", g.VpcId), diags
	}
	if err != nil {
		diags.AddError("Error "+what+": VPC "+g.VpcId, err.Error())
		return m, "", diags
	}
	tags := sgTags(g)
	opts, ok := decodeOptions(tags[tagOptions])
	if !ok {
		// Not made by this provider (or its tag was edited): fall back to what the cloud shows.
		opts = networkOptions{CIDRBlock: v.CidrBlock, OwnsVPC: tags[tagManagedBy] == managedByVal}
		diags.AddWarning("RDMA network "+id+": settings tag missing",
			fmt.Sprintf("The security group's %s tag is missing or malformed; cidr_block, erdma, allow_public_ssh and vpc_managed were guessed from the cloud. The next apply writes the tag again.", tagOptions))
	}
	m.Name = types.StringValue(g.SecurityGroupName)
	m.VPCID = types.StringValue(g.VpcId)
	m.VPCManaged = types.BoolValue(opts.OwnsVPC)
	m.CIDRBlock = types.StringValue(opts.CIDRBlock)
	m.ERDMA = types.BoolValue(opts.ERDMA)
	m.AllowPublicSSH = types.BoolValue(opts.AllowPublicSSH)
	m.NCCLEnv = stringMap(netplan.NCCLEnv(opts.ERDMA))
	m.BandwidthPlan = bandwidthPlanValue()
	user := netUserTags(tags)
	if len(user) == 0 && (prior.Tags.IsNull() || prior.Tags.IsUnknown()) {
		m.Tags = types.MapNull(types.StringType)
	} else {
		m.Tags = stringMap(user)
	}

	vswitches, err := c.FindVSwitches(ctx, g.VpcId, map[string]string{tagNetworkID: id})
	if err != nil {
		diags.AddError("Error "+what+": vSwitches of VPC "+g.VpcId, err.Error())
		return m, "", diags
	}
	zones := []string{}
	ids, cidrs := map[string]string{}, map[string]string{}
	for _, sw := range vswitches {
		zones = append(zones, sw.ZoneId)
		ids[sw.ZoneId] = sw.VSwitchId
		cidrs[sw.ZoneId] = sw.CidrBlock
	}
	sort.Strings(zones)
	m.ZoneIDs = netStringSet(zones)
	m.VSwitchIDs = stringMap(ids)
	m.VSwitchCIDRs = stringMap(cidrs)

	rules, _, err := actualRules(ctx, c, id)
	if err != nil {
		diags.AddError("Error "+what+": security group rules", err.Error())
		return m, "", diags
	}
	m.SecurityGroupRules = rulesValue(rules)
	m.AdminCIDRs = netStringSet(netplan.AdminCIDRs(rules))

	sets, err := placementSets(ctx, c, id)
	if err != nil {
		diags.AddError("Error "+what+": deployment sets", err.Error())
		return m, "", diags
	}
	placement := netplan.PlacementNone
	dsIDs := make([]string, 0, len(sets))
	for i := 0; i < len(sets); i++ {
		ds, ok := sets[i]
		if !ok {
			break // a gap: the groups after it are reported missing, and an apply fills them in
		}
		placement = netplan.PlacementFromStrategy(ds.Strategy)
		dsIDs = append(dsIDs, ds.DeploymentSetId)
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

	h, err := c.FindHpcClusterByName(ctx, hpcClusterName(id))
	switch {
	case cloud.IsNotFound(err):
		m.HPCCluster = types.BoolValue(false)
		m.HPCClusterID = types.StringNull()
	case err != nil:
		diags.AddError("Error "+what+": HPC cluster", err.Error())
		return m, "", diags
	default:
		m.HPCCluster = types.BoolValue(true)
		m.HPCClusterID = types.StringValue(h.HpcClusterId)
	}
	tflog.Debug(ctx, "read RDMA network", map[string]any{"id": id, "vpc_id": g.VpcId, "zones": zones, "rules": len(rules)})
	return m, "", diags
}
