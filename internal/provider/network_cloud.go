package provider

// Cloud-side helpers of gpucluster_rdma_network: tags, client tokens, rules and the calls that
// create or reconcile one kind of object each. resource_rdma_network.go holds the Terraform glue.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
)

// Tags the provider puts on what it creates. Keys under "gpucluster:" are reserved.
const (
	tagPrefix    = "gpucluster:"
	tagManagedBy = "gpucluster:managed-by"
	tagNetwork   = "gpucluster:network"    // the network's name
	tagNetworkID = "gpucluster:network-id" // the network's id, on objects created after it exists
	tagOptions   = "gpucluster:options"    // settings with no other cloud-side record (security group only)
	managedByVal = "terraform-provider-gpucluster"
)

// maxUserTags leaves room for the reserved tags within the API's 20 per resource.
const maxUserTags = 16

// networkOptions are the settings that have no cloud object of their own; they ride on the
// security group's gpucluster:options tag so import can rebuild them exactly.
type networkOptions struct {
	CIDRBlock      string
	ERDMA          bool
	AllowPublicSSH bool
	OwnsVPC        bool
}

func (o networkOptions) encode() string {
	return fmt.Sprintf("cidr=%s,erdma=%t,public_ssh=%t,own_vpc=%t", o.CIDRBlock, o.ERDMA, o.AllowPublicSSH, o.OwnsVPC)
}

func decodeOptions(s string) (networkOptions, bool) {
	var o networkOptions
	seen := 0
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		b, _ := strconv.ParseBool(v)
		switch k {
		case "cidr":
			o.CIDRBlock = v
		case "erdma":
			o.ERDMA = b
		case "public_ssh":
			o.AllowPublicSSH = b
		case "own_vpc":
			o.OwnsVPC = b
		default:
			continue
		}
		seen++
	}
	return o, seen == 4
}

// systemTags are the reserved tags of one object.
func systemTags(name, networkID string) map[string]string {
	t := map[string]string{tagManagedBy: managedByVal, tagNetwork: name}
	if networkID != "" {
		t[tagNetworkID] = networkID
	}
	return t
}

func netMergeTags(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// clientToken derives a ClientToken from what identifies one create call, plus a generation.
// The same request gets the same token, so a create interrupted after the service acted is
// answered with the object it made instead of a duplicate; a token whose object has since been
// deleted is skipped by moving to the next generation (see createAdoptable).
func clientToken(gen int, parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return fmt.Sprintf("gpc-%s-%d", hex.EncodeToString(h[:])[:40], gen)
}

// maxTokenGenerations bounds createAdoptable's walk past tokens of deleted objects.
const maxTokenGenerations = 32

// createAdoptable runs create with the token of generation 0, 1, ... until it returns an object
// that exists: an object left by an interrupted apply is adopted, one since deleted is skipped.
func createAdoptable(what string, parts []string, create func(token string) (string, error), exists func(id string) error) (string, error) {
	for gen := 0; gen < maxTokenGenerations; gen++ {
		id, err := create(clientToken(gen, parts...))
		if cloud.IsCode(err, "IdempotentParameterMismatch") {
			continue
		}
		if err != nil {
			return "", err
		}
		err = exists(id)
		if err == nil {
			return id, nil
		}
		if !cloud.IsNotFound(err) {
			return "", err
		}
	}
	return "", fmt.Errorf("creating %s: every client token up to generation %d answered with a deleted object", what, maxTokenGenerations)
}

// --- security group rules ---

// ruleFromPermission turns an API rule into a netplan.Rule.
func ruleFromPermission(p ecs.Permission) netplan.Rule {
	prio, _ := strconv.Atoi(p.Priority)
	src := p.SourceCidrIp
	switch {
	case p.SourceGroupId != "":
		src = p.SourceGroupId
	case p.SourcePrefixListId != "":
		src = p.SourcePrefixListId
	case p.Ipv6SourceCidrIp != "":
		src = p.Ipv6SourceCidrIp
	}
	return netplan.Rule{Protocol: strings.ToUpper(p.IpProtocol), PortRange: p.PortRange, Source: src,
		Policy: strings.ToLower(p.Policy), Priority: prio, Description: p.Description}
}

// actualRules reads the ingress rules of the security group, with their ids.
func actualRules(ctx context.Context, c *cloud.Client, sgID string) ([]netplan.Rule, map[string]string, error) {
	perms, err := c.SecurityGroupIngress(ctx, sgID)
	if err != nil {
		return nil, nil, err
	}
	rules := make([]netplan.Rule, 0, len(perms))
	ids := map[string]string{}
	for _, p := range perms {
		r := ruleFromPermission(p)
		rules = append(rules, r)
		ids[r.Key()] = p.SecurityGroupRuleId
	}
	netplan.SortRules(rules)
	return rules, ids, nil
}

// maxPermissionsPerCall is how many rules one Authorize call carries.
const maxPermissionsPerCall = 100

// reconcileRules makes the group's ingress rules the desired set: it authorises what is missing
// first and revokes what is extra second, so access in both sets never drops.
func reconcileRules(ctx context.Context, c *cloud.Client, sgID string, desired []netplan.Rule) error {
	actual, ids, err := actualRules(ctx, c, sgID)
	if err != nil {
		return fmt.Errorf("reading the rules: %w", err)
	}
	add, remove := netplan.DiffRules(desired, actual)
	for start := 0; start < len(add); start += maxPermissionsPerCall {
		batch := add[start:min(start+maxPermissionsPerCall, len(add))]
		req := ecs.CreateAuthorizeSecurityGroupRequest()
		req.RegionId = c.Region()
		req.SecurityGroupId = sgID
		perms := make([]ecs.AuthorizeSecurityGroupPermissions, 0, len(batch))
		for _, r := range batch {
			p := ecs.AuthorizeSecurityGroupPermissions{IpProtocol: r.Protocol, PortRange: r.PortRange, Policy: r.Policy,
				Priority: strconv.Itoa(r.Priority), Description: r.Description}
			if r.IsGroupSource() {
				p.SourceGroupId = r.Source
			} else {
				p.SourceCidrIp = r.Source
			}
			perms = append(perms, p)
		}
		req.Permissions = &perms
		// Identical rules are a no-op at the service, so a retried call is harmless.
		if err := c.Call(ctx, req, ecs.CreateAuthorizeSecurityGroupResponse()); err != nil {
			return fmt.Errorf("authorising %d rule(s): %w", len(batch), err)
		}
	}
	if len(remove) == 0 {
		return nil
	}
	var ruleIDs []string
	for _, r := range remove {
		if id := ids[r.Key()]; id != "" {
			ruleIDs = append(ruleIDs, id)
		}
	}
	for start := 0; start < len(ruleIDs); start += maxPermissionsPerCall {
		batch := ruleIDs[start:min(start+maxPermissionsPerCall, len(ruleIDs))]
		req := ecs.CreateRevokeSecurityGroupRequest()
		req.RegionId = c.Region()
		req.SecurityGroupId = sgID
		req.SecurityGroupRuleId = &batch
		if err := c.Call(ctx, req, ecs.CreateRevokeSecurityGroupResponse()); err != nil {
			return fmt.Errorf("revoking %d rule(s): %w", len(batch), err)
		}
	}
	return nil
}

// --- deployment sets and the HPC cluster ---

// Deployment sets and HPC clusters take no tags: their names carry the network id instead, and
// the network id never changes.
func deploymentSetPrefix(networkID string) string { return "gpucluster-" + networkID + "-pg-" }

func hpcClusterName(networkID string) string { return "gpucluster-" + networkID }

// placementSets reads the network's deployment sets, indexed by the number in their name.
func placementSets(ctx context.Context, c *cloud.Client, networkID string) (map[int]ecs.DeploymentSet, error) {
	prefix := deploymentSetPrefix(networkID)
	list, err := c.FindDeploymentSetsByPrefix(ctx, prefix)
	if err != nil {
		return nil, err
	}
	out := map[int]ecs.DeploymentSet{}
	for _, ds := range list {
		i, err := strconv.Atoi(strings.TrimPrefix(ds.DeploymentSetName, prefix))
		if err != nil || i < 0 {
			continue
		}
		out[i] = ds
	}
	return out, nil
}

// reconcilePlacement makes the network's deployment sets n sets of the placement's strategy,
// numbered 0..n-1: sets of another strategy or beyond n are deleted, missing ones created.
func reconcilePlacement(ctx context.Context, c *cloud.Client, networkID, name, placement string, n int) ([]string, error) {
	have, err := placementSets(ctx, c, networkID)
	if err != nil {
		return nil, fmt.Errorf("listing deployment sets: %w", err)
	}
	strategy := netplan.Strategy(placement)
	for i, ds := range have {
		if i >= n || ds.Strategy != strategy {
			if err := c.DeleteDeploymentSet(ctx, ds.DeploymentSetId); err != nil {
				return nil, err
			}
			delete(have, i)
		}
	}
	ids := make([]string, n)
	for i := 0; i < n; i++ {
		if ds, ok := have[i]; ok {
			ids[i] = ds.DeploymentSetId
			continue
		}
		dsName := deploymentSetPrefix(networkID) + strconv.Itoa(i)
		desc := fmt.Sprintf("placement group %d of gpucluster network %s", i, name)
		id, err := createAdoptable("deployment set "+dsName, []string{"CreateDeploymentSet", c.Region(), dsName, strategy, desc},
			func(token string) (string, error) {
				req := ecs.CreateCreateDeploymentSetRequest()
				req.RegionId = c.Region()
				req.ClientToken = token
				req.DeploymentSetName = dsName
				req.Description = desc
				req.Strategy = strategy
				resp := ecs.CreateCreateDeploymentSetResponse()
				if err := c.Call(ctx, req, resp); err != nil {
					return "", err
				}
				return resp.DeploymentSetId, nil
			},
			func(id string) error { _, err := c.FindDeploymentSet(ctx, id); return err })
		if err != nil {
			return nil, fmt.Errorf("creating deployment set %s: %w", dsName, err)
		}
		ids[i] = id
	}
	return ids, nil
}

// reconcileHPC creates the network's HPC cluster when wanted and deletes it when not; it returns
// the cluster's id or "".
func reconcileHPC(ctx context.Context, c *cloud.Client, networkID, name string, want bool) (string, error) {
	hpcName := hpcClusterName(networkID)
	h, err := c.FindHpcClusterByName(ctx, hpcName)
	if err != nil && !cloud.IsNotFound(err) {
		return "", fmt.Errorf("looking for HPC cluster %s: %w", hpcName, err)
	}
	if !want {
		if h != nil {
			return "", c.DeleteHpcCluster(ctx, h.HpcClusterId)
		}
		return "", nil
	}
	if h != nil {
		return h.HpcClusterId, nil
	}
	desc := "HPC cluster of gpucluster network " + name
	id, err := createAdoptable("HPC cluster "+hpcName, []string{"CreateHpcCluster", c.Region(), hpcName, desc},
		func(token string) (string, error) {
			req := ecs.CreateCreateHpcClusterRequest()
			req.RegionId = c.Region()
			req.ClientToken = token
			req.Name = hpcName
			req.Description = desc
			resp := ecs.CreateCreateHpcClusterResponse()
			if err := c.Call(ctx, req, resp); err != nil {
				return "", err
			}
			return resp.HpcClusterId, nil
		},
		func(id string) error { _, err := c.FindHpcCluster(ctx, id); return err })
	if err != nil {
		return "", fmt.Errorf("creating HPC cluster %s: %w", hpcName, err)
	}
	return id, nil
}

// --- tags ---

// retagSecurityGroup makes the group's tags exactly want (reserved and user tags alike).
func retagSecurityGroup(ctx context.Context, c *cloud.Client, sgID string, have, want map[string]string) error {
	var stale []string
	for k := range have {
		if _, ok := want[k]; !ok {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		req := ecs.CreateUntagResourcesRequest()
		req.RegionId = c.Region()
		req.ResourceType = "securitygroup"
		req.ResourceId = &[]string{sgID}
		req.TagKey = &stale
		if err := c.Call(ctx, req, ecs.CreateUntagResourcesResponse()); err != nil {
			return fmt.Errorf("removing tags %v: %w", stale, err)
		}
	}
	var tags []ecs.TagResourcesTag
	for _, k := range sortedKeys(want) {
		if v, ok := have[k]; !ok || v != want[k] {
			tags = append(tags, ecs.TagResourcesTag{Key: k, Value: want[k]})
		}
	}
	if len(tags) == 0 {
		return nil
	}
	req := ecs.CreateTagResourcesRequest()
	req.RegionId = c.Region()
	req.ResourceType = "securitygroup"
	req.ResourceId = &[]string{sgID}
	req.Tag = &tags
	if err := c.Call(ctx, req, ecs.CreateTagResourcesResponse()); err != nil {
		return fmt.Errorf("setting tags: %w", err)
	}
	return nil
}

// retagVPCObjects moves VPC-API objects (resourceType VPC or VSWITCH) from the tags in have to
// the tags in want (VPC TagResources / UnTagResources).
func retagVPCObjects(ctx context.Context, c *cloud.Client, resourceType string, ids []string, have, want map[string]string) error {
	if len(ids) == 0 {
		return nil
	}
	var stale []string
	for k := range have {
		if _, ok := want[k]; !ok {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		req := vpc.CreateUnTagResourcesRequest()
		req.RegionId = c.Region()
		req.ResourceType = resourceType
		req.ResourceId = &ids
		req.TagKey = &stale
		if err := c.Call(ctx, req, vpc.CreateUnTagResourcesResponse()); err != nil {
			return fmt.Errorf("removing tags %v from %s %v: %w", stale, resourceType, ids, err)
		}
	}
	var tags []vpc.TagResourcesTag
	for _, k := range sortedKeys(want) {
		if v, ok := have[k]; !ok || v != want[k] {
			tags = append(tags, vpc.TagResourcesTag{Key: k, Value: want[k]})
		}
	}
	if len(tags) == 0 {
		return nil
	}
	req := vpc.CreateTagResourcesRequest()
	req.RegionId = c.Region()
	req.ResourceType = resourceType
	req.ResourceId = &ids
	req.Tag = &tags
	if err := c.Call(ctx, req, vpc.CreateTagResourcesResponse()); err != nil {
		return fmt.Errorf("setting tags on %s %v: %w", resourceType, ids, err)
	}
	return nil
}

func sgTags(g *ecs.SecurityGroup) map[string]string {
	out := map[string]string{}
	for _, t := range g.Tags.Tag {
		k, v := t.TagKey, t.TagValue
		if k == "" {
			k, v = t.Key, t.Value
		}
		out[k] = v
	}
	return out
}

func netUserTags(all map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range all {
		if !strings.HasPrefix(k, tagPrefix) {
			out[k] = v
		}
	}
	return out
}
