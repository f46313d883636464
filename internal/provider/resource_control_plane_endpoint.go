package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/network"
)

var (
	_ resource.ResourceWithConfigure      = (*endpointResource)(nil)
	_ resource.ResourceWithImportState    = (*endpointResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*endpointResource)(nil)
	_ resource.ResourceWithValidateConfig = (*endpointResource)(nil)
)

func newControlPlaneEndpointResource() resource.Resource { return &endpointResource{} }

// endpointResource is the stable address of a Kubernetes control plane: an internal Classic Load
// Balancer in the network, listening on TCP 6443, with the security group rules that traffic
// needs. The control-plane node pool keeps its backend servers equal to its nodes.
type endpointResource struct {
	client *cloud.Client
}

func (r *endpointResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_control_plane_endpoint"
}

func (r *endpointResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := joinAttributes(endpointInputAttributes(), endpointComputedAttributes())
	resp.Schema = schema.Schema{
		MarkdownDescription: "The stable API endpoint of a highly available Kubernetes control plane: an internal (VPC) Classic Load " +
			"Balancer (CLB, SLB API 2014-05-15, which the Alibaba Cloud Go SDK's `services/slb` covers completely) in a " +
			"`gpucluster_rdma_network`, with a TCP listener on 6443 forwarding to the API servers' 6443 and checking their health " +
			"over TCP. Its `api_server_name` is kubeadm's `controlPlaneEndpoint`, a name the nodes map to `endpoint` (workers) or to " +
			"themselves (control-plane nodes, which the load balancer would not answer); a " +
			"`gpucluster_node_pool` with `kubernetes.role = \"control_plane\"` and `kubernetes.load_balancer_id` keeps the load " +
			"balancer's backend servers equal to its nodes.\n\n" +
			"The endpoint also owns, in the network's security group, exactly the rules this traffic needs: TCP 6443 from each of " +
			"the network's vSwitch CIDRs (the workers; a layer-4 listener passes their own source address on) and from " +
			"`100.64.0.0/10`, the block the CLB's health checks come from (the vendor documents it at " +
			"https://help.aliyun.com/en/slb/classic-load-balancer/user-guide/health-check-overview/ and says the group needs no " +
			"rule for it; the rule is there so the path stays open whatever other rules the group gets). The rules sit at priority 2 (the " +
			"network's cross-segment drops are at 100) with a description naming the " +
			"load balancer, so the network never shows, restores or revokes them; destroying the endpoint revokes them. A " +
			"missing or stopped listener, a missing rule, or a vSwitch added to the network shows in the next plan " +
			"(`listener_status`, `allowed_sources`) and the apply puts it right.\n\n" +
			"The load balancer carries `gpucluster:managed-by`, `gpucluster:network-id` and `gpucluster:control-plane-endpoint` " +
			"(the name) and is created with a ClientToken derived from the request, so an interrupted apply adopts it instead of " +
			"creating a second one. Import by the load balancer id.",
		Attributes: attrs,
	}
}

// endpointInputAttributes: where the endpoint's load balancer goes and what it is.
func endpointInputAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "The load balancer id (`lb-...`).",
			PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"network_id": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "Id of the `gpucluster_rdma_network` the control plane runs in. Changing it replaces the endpoint.",
			PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
		"name": schema.StringAttribute{
			Required: true,
			MarkdownDescription: "Name of the load balancer, unique within the network: a re-run after an interrupted apply adopts the " +
				"load balancer tagged with this name and network. 2-80 characters: a letter first, then letters, digits, `-`, `_` and `.`. Changed in place.",
			Validators: []validator.String{stringvalidator.LengthBetween(2, 80), stringvalidator.RegexMatches(endpointNamePattern,
				"must start with a letter and hold only letters, digits, '-', '_' and '.'")},
		},
		"vswitch_id": schema.StringAttribute{
			Optional: true,
			Computed: true,
			MarkdownDescription: "vSwitch the load balancer's address comes from; one of the network's `vswitch_ids`. Default: the " +
				"network's first vSwitch (by zone). Changing it replaces the endpoint (and its address).",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace()},
		},
		"load_balancer_spec": schema.StringAttribute{
			Optional: true,
			Computed: true,
			Default:  stringdefault.StaticString(cloud.DefaultLoadBalancerSpec),
			MarkdownDescription: fmt.Sprintf("Performance-guaranteed CLB specification: %s. Default `%s`, the smallest, "+
				"ample for API server traffic. Changing it replaces the endpoint.", mdValues(loadBalancerSpecs), cloud.DefaultLoadBalancerSpec),
			Validators:    []validator.String{stringvalidator.OneOf(loadBalancerSpecs...)},
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
		"tags": schema.MapAttribute{
			Optional:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Tags on the load balancer, changed in place. Keys starting with `gpucluster:` are reserved.",
		},
	}
}

// endpointComputedAttributes: the load balancer, its address, and its traffic path as the cloud has it.
func endpointComputedAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"load_balancer_id": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "The load balancer id, for `gpucluster_node_pool.kubernetes.load_balancer_id`.",
			PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"address": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "The load balancer's private IPv4 address in `vswitch_id`.",
			PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"endpoint": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "`address:6443`: the `api_endpoint` to give the workers' `gpucluster_node_pool` (with `api_server_name`), " +
				"and what a client off the cluster's nodes (a kubeconfig of yours) connects to: the API server certificate names it.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"api_server_name": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "`api.<load_balancer_id>.gpucluster.internal`: the name the cluster's API is reached by, kubeadm's " +
				"`controlPlaneEndpoint` (with port 6443) and every join's endpoint. It resolves only on the cluster's nodes, through an " +
				"`/etc/hosts` entry their bootstrap writes: to the load balancer on workers; on control-plane nodes to the load balancer " +
				"until the node serves the API and to the node itself from then on, because a Layer-4 Classic Load Balancer gives no " +
				"answer to a backend server's connection that it forwards back to that server " +
				"(https://www.alibabacloud.com/help/faq-detail/55198.htm), and every kubeconfig kubeadm writes on a control-plane node " +
				"points at `controlPlaneEndpoint`. A control-plane `gpucluster_node_pool` with this `load_balancer_id` uses it by " +
				"itself; pass it to the workers' pools as `kubernetes.api_server_name`. `.internal` is reserved for private use and never " +
				"delegated in public DNS.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"allowed_sources": schema.ListAttribute{
			Computed:    true,
			ElementType: types.StringType,
			MarkdownDescription: "The sources the endpoint's own security group rules let reach TCP 6443, as they are in the cloud, " +
				"sorted: the network's vSwitch CIDRs and `100.64.0.0/10`. A rule revoked outside Terraform, or a vSwitch added to " +
				"the network, makes the plan differ here, and the apply puts the rules right.",
		},
		"listener_status": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "The TCP 6443 listener as the cloud reports it: `running` after every apply; `stopped`, `missing` " +
				"or `forwarding to <port>` after a refresh that found it changed outside Terraform, which the next apply restores.",
		},
	}
}

func (r *endpointResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (r *endpointResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg endpointModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	checkUserTags(cfg.Tags, maxUserTags, &resp.Diagnostics)
}

// ModifyPlan checks vswitch_id against the network when both are known and plans what every apply
// leaves: a running listener and rules from the network's current vSwitch CIDRs. A refresh that
// found otherwise (listener_status, allowed_sources) makes the plan an update that restores them.
func (r *endpointResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan endpointModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ListenerStatus = types.StringValue(cloud.ListenerStatusRunning)
	if r.client != nil && !plan.NetworkID.IsUnknown() {
		vswitch := ""
		if !plan.VSwitchID.IsUnknown() {
			vswitch = plan.VSwitchID.ValueString()
		}
		epNet, err := loadEndpointNetwork(ctx, r.client, plan.NetworkID.ValueString(), vswitch)
		var vsErr *vswitchError
		switch {
		case errors.As(err, &vsErr):
			resp.Diagnostics.AddAttributeError(path.Root("vswitch_id"), "vSwitch not in the network", err.Error())
			return
		case err != nil:
			resp.Diagnostics.AddAttributeError(path.Root("network_id"), "Reading the endpoint's network", err.Error())
			return
		}
		if plan.VSwitchID.IsUnknown() && req.State.Raw.IsNull() {
			plan.VSwitchID = types.StringValue(epNet.VSwitchID)
		}
		plan.AllowedSources = stringList(network.EndpointSources(netplan.EndpointRules("", epNet.CIDRs)))
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *endpointResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan endpointModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	summary := endpointSummary("creating", &plan)
	in, ok := r.input(ctx, &plan, summary, &resp.Diagnostics)
	if !ok {
		return
	}
	id, err := network.CreateOrAdoptLoadBalancer(ctx, r.client, in)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	// The load balancer is recorded before anything else can fail: a failed create leaves a
	// tainted resource that knows it, never an orphan.
	plan.ID, plan.LoadBalancerID = types.StringValue(id), types.StringValue(id)
	r.finish(ctx, id, in, &plan, summary, resp.State.Set, &resp.Diagnostics)
}

func (r *endpointResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state endpointModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := state.ID.ValueString()
	plan.ID, plan.LoadBalancerID = state.ID, state.LoadBalancerID
	summary := endpointSummary("updating", &state)
	in, ok := r.input(ctx, &plan, summary, &resp.Diagnostics)
	if !ok {
		return
	}
	if !plan.Name.Equal(state.Name) {
		if err := r.client.RenameLoadBalancer(ctx, id, in.Name); err != nil {
			resp.Diagnostics.AddError(summary, err.Error())
			return
		}
	}
	lb, err := r.client.FindLoadBalancer(ctx, id)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	if err := r.client.SyncTags(ctx, cloud.KindLoadBalancer, []string{id}, lb.Tags, network.EndpointTags(in.Network.ID, in.Name, in.UserTags)); err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	r.finish(ctx, id, in, &plan, summary, resp.State.Set, &resp.Diagnostics)
}

// input resolves the plan against the network (vswitch_id defaults to the network's first).
func (r *endpointResource) input(ctx context.Context, plan *endpointModel, summary string, diags *diag.Diagnostics) (network.EndpointInput, bool) {
	user, d := mapOf(ctx, plan.Tags)
	diags.Append(d...)
	epNet, err := loadEndpointNetwork(ctx, r.client, plan.NetworkID.ValueString(), plan.VSwitchID.ValueString())
	if err != nil {
		diags.AddError(summary, err.Error())
		return network.EndpointInput{}, false
	}
	return network.EndpointInput{Network: epNet, Name: plan.Name.ValueString(), Spec: plan.LoadBalancerSpec.ValueString(), UserTags: user}, !diags.HasError()
}

// finish puts the listener and rules in place and records the load balancer as the cloud has it.
// The state is saved whatever happens, so the load balancer is never lost.
func (r *endpointResource) finish(ctx context.Context, id string, in network.EndpointInput, plan *endpointModel, summary string,
	save func(context.Context, any) diag.Diagnostics, diags *diag.Diagnostics) {
	plan.NetworkID = types.StringValue(in.Network.ID)
	plan.APIServerName = types.StringValue(bootstrap.APIServerNameFor(id)) // known from the id, even if the read below fails
	trafficErr := network.EnsureEndpointTraffic(ctx, r.client, id, in.Network)
	if trafficErr == nil {
		trafficErr = plan.setTraffic(ctx, r.client, id)
	}
	if trafficErr != nil {
		plan.ListenerStatus, plan.AllowedSources = types.StringNull(), types.ListNull(types.StringType)
	}
	lb, err := r.client.FindLoadBalancer(ctx, id)
	if err == nil {
		plan.setLoadBalancer(lb)
	} else {
		plan.VSwitchID = types.StringValue(in.Network.VSwitchID)
		plan.Address, plan.Endpoint = types.StringUnknown(), types.StringUnknown()
		diags.AddError(summary, "reading the load balancer back: "+err.Error())
	}
	if plan.Address.IsUnknown() {
		plan.Address, plan.Endpoint = types.StringNull(), types.StringNull()
	}
	diags.Append(save(ctx, plan)...)
	if trafficErr != nil {
		diags.AddError(summary, trafficErr.Error())
	}
}

func (r *endpointResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state endpointModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	lb, err := r.client.FindLoadBalancer(ctx, state.ID.ValueString())
	if cloud.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError(endpointSummary("reading", &state), err.Error())
		return
	}
	if lb.Tags[tagNetworkID] == "" || lb.AddressType != "intranet" {
		resp.Diagnostics.AddError(endpointSummary("reading", &state), fmt.Sprintf("load balancer %s is not a control plane endpoint: it "+
			"lacks the tag %s (the network it serves) or is not internal. Import only load balancers gpucluster_control_plane_endpoint created.", lb.ID, tagNetworkID))
		return
	}
	state.setLoadBalancer(lb)
	if err := state.setTraffic(ctx, r.client, lb.ID); err != nil {
		resp.Diagnostics.AddError(endpointSummary("reading", &state), err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *endpointResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state endpointModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, summary := state.ID.ValueString(), endpointSummary("deleting", &state)
	// Rules first: while the load balancer exists, its id keeps naming them.
	err := network.ReconcileEndpointRules(ctx, r.client, state.NetworkID.ValueString(), id, nil)
	if err != nil && !cloud.IsNotFound(err) {
		resp.Diagnostics.AddError(summary, fmt.Sprintf("revoking the endpoint's rules in security group %s: %s", state.NetworkID.ValueString(), err))
		return
	}
	if err := r.client.DeleteLoadBalancer(ctx, id); err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
	}
}

func (r *endpointResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !loadBalancerIDPattern.MatchString(req.ID) {
		resp.Diagnostics.AddError("importing control plane endpoint", fmt.Sprintf("%q is not a load balancer id: give the id of the load balancer (lb-...), the endpoint's `id`.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("tags"), types.MapNull(types.StringType))...)
}
