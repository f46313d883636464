package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
)

// endpointNetwork is what the endpoint needs of its network: the security group (whose id is the
// network's id), the vSwitch the load balancer goes in, and every vSwitch's CIDR (the workers'
// addresses).
type endpointNetwork struct {
	ID        string
	VSwitchID string
	CIDRs     []string
}

// loadEndpointNetwork reads the network and picks the vSwitch: vswitchID when given (it must be one
// of the network's), otherwise the network's first (by zone).
func loadEndpointNetwork(ctx context.Context, c *cloud.Client, networkID, vswitchID string) (endpointNetwork, error) {
	n, err := lookupNetwork(ctx, c, networkID, "")
	if err != nil {
		return endpointNetwork{}, err
	}
	out := endpointNetwork{ID: n.ID}
	var ids []string
	for _, sw := range n.VSwitches {
		out.CIDRs = append(out.CIDRs, sw.CIDRBlock)
		ids = append(ids, sw.ID)
	}
	switch {
	case vswitchID == "":
		out.VSwitchID = n.VSwitches[0].ID
	case slices.Contains(ids, vswitchID):
		out.VSwitchID = vswitchID
	default:
		return out, &vswitchError{networkID: networkID, vswitchID: vswitchID, have: ids}
	}
	return out, nil
}

// vswitchError: vswitch_id is not one of the network's vSwitches.
type vswitchError struct {
	networkID, vswitchID string
	have                 []string
}

func (e *vswitchError) Error() string {
	return fmt.Sprintf("vswitch_id = %q is not a vSwitch of network %s, whose vSwitches are %s: the load balancer must sit in "+
		"the network its API servers are in. Use one of those, or leave vswitch_id out for the first.", e.vswitchID, e.networkID, strings.Join(e.have, ", "))
}

// endpointInput is the configuration of an endpoint, resolved.
type endpointInput struct {
	Network  endpointNetwork
	Name     string
	Spec     string
	UserTags map[string]string
}

// createOrAdoptLoadBalancer finds the load balancer an interrupted apply of this endpoint left
// (by its tags), or creates one under a ClientToken derived from the request, and returns it.
func createOrAdoptLoadBalancer(ctx context.Context, c *cloud.Client, in endpointInput) (string, error) {
	found, err := c.FindLoadBalancersByTags(ctx, endpointFinderTags(in.Network.ID, in.Name))
	if err != nil {
		return "", fmt.Errorf("looking for the load balancer of an interrupted earlier apply: %w", err)
	}
	if len(found) > 0 {
		return found[0].ID, nil
	}
	tags := endpointTags(in.Network.ID, in.Name, in.UserTags)
	return cloud.CreateOrAdopt("load balancer "+in.Name, adoptParts(tags, "control-plane-endpoint", in.Network.VSwitchID, in.Name, in.Spec),
		func(token string) (string, error) {
			id, _, err := c.CreateInternalLoadBalancer(ctx, cloud.LoadBalancerInput{VSwitchID: in.Network.VSwitchID, Name: in.Name,
				Spec: in.Spec, Tags: tags, ClientToken: token})
			return id, err
		},
		func(id string) error { _, err := c.FindLoadBalancer(ctx, id); return err })
}

// ensureEndpointTraffic makes the load balancer forward the Kubernetes API (TCP listener 6443 to
// backend port 6443, health-checked over TCP, running) and the network's security group let that
// traffic in: the endpoint's own rules, exactly netplan.EndpointRules.
func ensureEndpointTraffic(ctx context.Context, c *cloud.Client, lbID string, network endpointNetwork) error {
	if _, err := c.EnsureTCPListener(ctx, lbID, cloud.TCPListenerInput{Port: apiServerPort, BackendPort: apiServerPort,
		HealthCheck: apiHealthCheck, Description: "gpucluster: Kubernetes API"}); err != nil {
		return err
	}
	if err := reconcileEndpointRules(ctx, c, network.ID, lbID, netplan.EndpointRules(lbID, network.CIDRs)); err != nil {
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
		if r := ruleFromCloud(p); netplan.EndpointRuleOwner(r) == lbID {
			rules = append(rules, r)
			ids[r.Key()] = p.RuleID
		}
	}
	netplan.SortRules(rules)
	return rules, ids, nil
}

// reconcileEndpointRules makes the endpoint's own rules in the group desired: missing ones are
// authorised first, extra ones revoked second. Rules of the network, or of another endpoint, are
// never touched.
func reconcileEndpointRules(ctx context.Context, c *cloud.Client, sgID, lbID string, desired []netplan.Rule) error {
	have, ids, err := endpointRulesOf(ctx, c, sgID, lbID)
	if err != nil {
		return fmt.Errorf("reading the rules: %w", err)
	}
	add, remove := netplan.DiffRules(desired, have)
	grant := make([]cloud.IngressRule, 0, len(add))
	for _, r := range add {
		grant = append(grant, ruleToCloud(r))
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

// endpointTraffic is the traffic path as the cloud has it: the status of the TCP listener on 6443
// (listenerMissing, or one that forwards elsewhere, counts as not running) and the sources the
// endpoint's own rules let in, sorted.
func endpointTraffic(ctx context.Context, c *cloud.Client, lbID, sgID string) (status string, sources []string, err error) {
	l, err := c.FindTCPListener(ctx, lbID, apiServerPort)
	switch {
	case cloud.IsNotFound(err):
		status = listenerMissing
	case err != nil:
		return "", nil, err
	case l.BackendPort != apiServerPort:
		status = fmt.Sprintf("forwarding to %d", l.BackendPort)
	default:
		status = l.Status
	}
	rules, _, err := endpointRulesOf(ctx, c, sgID, lbID)
	if err != nil {
		return "", nil, err
	}
	return status, endpointSources(rules), nil
}

// endpointSources are the sources of the endpoint's rules, sorted.
func endpointSources(rules []netplan.Rule) []string {
	out := make([]string, 0, len(rules))
	for _, r := range rules {
		out = append(out, r.Source)
	}
	slices.Sort(out)
	return out
}
