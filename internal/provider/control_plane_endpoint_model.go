package provider

import (
	"context"
	"fmt"
	"regexp"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/network"
)

// loadBalancerSpecs are the Classic Load Balancer's performance-guaranteed specifications, smallest
// first; cloud.DefaultLoadBalancerSpec is the first.
var loadBalancerSpecs = []string{"slb.s1.small", "slb.s2.small", "slb.s2.medium", "slb.s3.small", "slb.s3.medium",
	"slb.s3.large", "slb.s3.xlarge", "slb.s3.xxlarge"}

var (
	loadBalancerIDPattern = regexp.MustCompile(`^lb-[0-9a-z]+$`)
	endpointNamePattern   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]*$`)
)

type endpointModel struct {
	ID               types.String `tfsdk:"id"`
	NetworkID        types.String `tfsdk:"network_id"`
	Name             types.String `tfsdk:"name"`
	VSwitchID        types.String `tfsdk:"vswitch_id"`
	LoadBalancerSpec types.String `tfsdk:"load_balancer_spec"`
	Tags             types.Map    `tfsdk:"tags"`
	LoadBalancerID   types.String `tfsdk:"load_balancer_id"`
	Address          types.String `tfsdk:"address"`
	Endpoint         types.String `tfsdk:"endpoint"`
	APIServerName    types.String `tfsdk:"api_server_name"`
	AllowedSources   types.List   `tfsdk:"allowed_sources"`
	ListenerStatus   types.String `tfsdk:"listener_status"`
}

// setLoadBalancer records what the cloud says of the endpoint's load balancer.
func (m *endpointModel) setLoadBalancer(lb *cloud.LoadBalancer) {
	m.ID = types.StringValue(lb.ID)
	m.LoadBalancerID = types.StringValue(lb.ID)
	m.Name = types.StringValue(lb.Name)
	m.VSwitchID = types.StringValue(lb.VSwitchID)
	m.LoadBalancerSpec = types.StringValue(lb.Spec)
	m.Address = types.StringValue(lb.Address)
	m.Endpoint = types.StringValue(apiEndpoint(lb.Address))
	m.APIServerName = types.StringValue(bootstrap.APIServerNameFor(lb.ID))
	if id := lb.Tags[tagNetworkID]; id != "" {
		m.NetworkID = types.StringValue(id)
	}
	user := userTags(lb.Tags)
	if len(user) > 0 || !m.Tags.IsNull() {
		m.Tags = stringMap(user)
	}
}

// apiEndpoint is the host:port kubeadm and the workers use.
func apiEndpoint(address string) string { return address + ":" + strconv.Itoa(network.APIServerPort) }

func endpointSummary(verb string, m *endpointModel) string {
	if id := m.ID.ValueString(); id != "" {
		return fmt.Sprintf("%s control plane endpoint %q (%s)", verb, m.Name.ValueString(), id)
	}
	return fmt.Sprintf("%s control plane endpoint %q", verb, m.Name.ValueString())
}

// setTraffic records the listener and the endpoint's rules as the cloud has them.
func (m *endpointModel) setTraffic(ctx context.Context, c *cloud.Client, lbID string) error {
	status, sources, err := network.EndpointTraffic(ctx, c, lbID, m.NetworkID.ValueString())
	if err != nil {
		return fmt.Errorf("reading the listener and security group rules: %w", err)
	}
	m.ListenerStatus, m.AllowedSources = types.StringValue(status), stringList(sources)
	return nil
}
