package network

// The control-plane endpoint of a cluster: an internal Classic Load Balancer in the network,
// listening on TCP 6443, and the security group rules that let its traffic reach the API
// servers. The node pool (internal/nodepool) keeps its backend servers.

import (
	"context"
	"fmt"
	"slices"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// The Kubernetes API port: the listener's port and the API servers' (backend) port.
const APIServerPort = netplan.KubernetesPort

// apiHealthCheck is the listener's TCP health check of the API servers: the vendor's recommended
// values for a TCP listener (3 probes either way, 5 s timeout, 2 s interval), written out so the
// listener is the same whatever the service's defaults become.
var apiHealthCheck = cloud.HealthCheck{HealthyThreshold: 3, UnhealthyThreshold: 3, TimeoutSeconds: 5, IntervalSeconds: 2}

// ListenerMissing is listener_status when the load balancer has no TCP listener on 6443.
const ListenerMissing = "missing"

// EndpointTags are every tag of the endpoint's load balancer: the user's and the provider's.
func EndpointTags(networkID, name string, user map[string]string) map[string]string {
	return tagging.Merge(user, map[string]string{tagging.ManagedBy: tagging.ManagedByVal, tagging.NetworkID: networkID, tagging.ControlPlaneEndpoint: name})
}

// EndpointFinderTags find the load balancer of the endpoint named name in a network.
func EndpointFinderTags(networkID, name string) map[string]string {
	return map[string]string{tagging.ManagedBy: tagging.ManagedByVal, tagging.NetworkID: networkID, tagging.ControlPlaneEndpoint: name}
}

// EndpointNetwork is what the endpoint needs of its network: the security group (whose id is the
// network's id), the vSwitch the load balancer goes in, and every vSwitch's CIDR (the workers'
// addresses).
type EndpointNetwork struct {
	ID        string
	VSwitchID string
	CIDRs     []string
}

// EndpointInput is the configuration of an endpoint, resolved.
type EndpointInput struct {
	Network  EndpointNetwork
	Name     string
	Spec     string
	UserTags map[string]string
}

// CreateOrAdoptLoadBalancer finds the load balancer an interrupted apply of this endpoint left
// (by its tags), or creates one under a ClientToken derived from the request, and returns it.
func CreateOrAdoptLoadBalancer(ctx context.Context, c *cloud.Client, in EndpointInput) (string, error) {
	found, err := c.FindLoadBalancersByTags(ctx, EndpointFinderTags(in.Network.ID, in.Name))
	if err != nil {
		return "", fmt.Errorf("looking for the load balancer of an interrupted earlier apply: %w", err)
	}
	if len(found) > 0 {
		return found[0].ID, nil
	}
	tags := EndpointTags(in.Network.ID, in.Name, in.UserTags)
	return cloud.CreateOrAdopt("load balancer "+in.Name, tagging.TokenParts(tags, "control-plane-endpoint", in.Network.VSwitchID, in.Name, in.Spec),
		func(token string) (string, error) {
			id, _, err := c.CreateInternalLoadBalancer(ctx, cloud.LoadBalancerInput{VSwitchID: in.Network.VSwitchID, Name: in.Name,
				Spec: in.Spec, Tags: tags, ClientToken: token})
			return id, err
		},
		func(id string) error { _, err := c.FindLoadBalancer(ctx, id); return err })
}

// EnsureEndpointTraffic makes the load balancer forward the Kubernetes API (TCP listener 6443 to
// backend port 6443, health-checked over TCP, running) and the network's security group let that
// traffic in: the endpoint's own rules, exactly netplan.EndpointRules.
func EnsureEndpointTraffic(ctx context.Context, c *cloud.Client, lbID string, network EndpointNetwork) error {
	if _, err := c.EnsureTCPListener(ctx, lbID, cloud.TCPListenerInput{Port: APIServerPort, BackendPort: APIServerPort,
		HealthCheck: apiHealthCheck, Description: "gpucluster: Kubernetes API"}); err != nil {
		return err
	}
	if err := ReconcileEndpointRules(ctx, c, network.ID, lbID, netplan.EndpointRules(lbID, network.CIDRs)); err != nil {
		return fmt.Errorf("security group %s: %w", network.ID, err)
	}
	return nil
}

// endpointRulesOf reads the rules of the security group that the endpoint of lbID owns, with ids.
func endpointRulesOf(ctx context.Context, c *cloud.Client, sgID, lbID string) ([]netplan.Rule, map[string]string, error) {
	perms, err := c.SecurityGroupIngress(ctx, sgID)
	if err != nil {
		return nil, nil, err
	}
	var rules []netplan.Rule
	ids := map[string]string{}
	for _, p := range perms {
		if r := RuleFromCloud(p); netplan.EndpointRuleOwner(r) == lbID {
			rules = append(rules, r)
			ids[r.Key()] = p.RuleID
		}
	}
	netplan.SortRules(rules)
	return rules, ids, nil
}

// ReconcileEndpointRules makes the endpoint's own rules in the group desired: missing ones are
// authorised first, extra ones revoked second. Rules of the network, or of another endpoint, are
// never touched.
func ReconcileEndpointRules(ctx context.Context, c *cloud.Client, sgID, lbID string, desired []netplan.Rule) error {
	have, ids, err := endpointRulesOf(ctx, c, sgID, lbID)
	if err != nil {
		return fmt.Errorf("reading the rules: %w", err)
	}
	add, remove := netplan.DiffRules(desired, have)
	grant := make([]cloud.IngressRule, 0, len(add))
	for _, r := range add {
		grant = append(grant, RuleToCloud(r))
	}
	if err := c.AuthorizeIngress(ctx, sgID, grant); err != nil {
		return err
	}
	var revoke []string
	for _, r := range remove {
		revoke = append(revoke, ids[r.Key()])
	}
	return c.RevokeIngress(ctx, sgID, revoke)
}

// EndpointTraffic is the traffic path as the cloud has it: the status of the TCP listener on 6443
// (ListenerMissing, or one that forwards elsewhere, counts as not running) and the sources the
// endpoint's own rules let in, sorted.
func EndpointTraffic(ctx context.Context, c *cloud.Client, lbID, sgID string) (status string, sources []string, err error) {
	l, err := c.FindTCPListener(ctx, lbID, APIServerPort)
	switch {
	case cloud.IsNotFound(err):
		status = ListenerMissing
	case err != nil:
		return "", nil, err
	case l.BackendPort != APIServerPort:
		status = fmt.Sprintf("forwarding to %d", l.BackendPort)
	default:
		status = l.Status
	}
	rules, _, err := endpointRulesOf(ctx, c, sgID, lbID)
	if err != nil {
		return "", nil, err
	}
	return status, EndpointSources(rules), nil
}

// EndpointSources are the sources of the endpoint's rules, sorted.
func EndpointSources(rules []netplan.Rule) []string {
	out := make([]string, 0, len(rules))
	for _, r := range rules {
		out = append(out, r.Source)
	}
	slices.Sort(out)
	return out
}
