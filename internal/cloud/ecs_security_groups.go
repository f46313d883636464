package cloud

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

// maxPermissionsPerCall is how many rules one AuthorizeSecurityGroup or RevokeSecurityGroup
// call carries (the vendor's limit).
const maxPermissionsPerCall = 100

// SecurityGroup is what the provider keeps of a security group.
type SecurityGroup struct {
	ID, Name, VPCID string
	Tags            map[string]string
}

// IngressRule is one ingress rule of a security group. Exactly one of the source fields is set.
type IngressRule struct {
	// RuleID is the service's id of the rule; set by SecurityGroupIngress, ignored by
	// AuthorizeIngress.
	RuleID                                                        string
	Protocol, PortRange, Policy, Description                      string
	Priority                                                      int
	SourceCIDR, SourceGroupID, SourcePrefixListID, SourceIPv6CIDR string
}

// SecurityGroupInput is what CreateSecurityGroup needs.
type SecurityGroupInput struct {
	VPCID, Name, Description string
	Tags                     map[string]string
	// ClientToken makes the create idempotent (see CreateOrAdopt).
	ClientToken string
}

// CreateSecurityGroup creates a normal security group in a VPC, tagged at creation, and returns
// its id.
func (c *Client) CreateSecurityGroup(ctx context.Context, in SecurityGroupInput) (string, error) {
	req := ecs.CreateCreateSecurityGroupRequest()
	req.RegionId = c.region
	req.ClientToken = in.ClientToken
	req.VpcId = in.VPCID
	req.SecurityGroupName = in.Name
	req.Description = in.Description
	req.SecurityGroupType = "normal"
	ts := make([]ecs.CreateSecurityGroupTag, 0, len(in.Tags))
	for _, k := range sortedKeys(in.Tags) {
		ts = append(ts, ecs.CreateSecurityGroupTag{Key: k, Value: in.Tags[k]})
	}
	req.Tag = &ts
	resp := ecs.CreateCreateSecurityGroupResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return "", err
	}
	return resp.SecurityGroupId, nil
}

// RenameSecurityGroup changes a security group's name.
func (c *Client) RenameSecurityGroup(ctx context.Context, id, name string) error {
	req := ecs.CreateModifySecurityGroupAttributeRequest()
	req.RegionId = c.region
	req.SecurityGroupId = id
	req.SecurityGroupName = name
	return c.Call(ctx, req, ecs.CreateModifySecurityGroupAttributeResponse())
}

// FindSecurityGroup returns the security group with this id, tags included, or an error matching
// ErrNotFound.
func (c *Client) FindSecurityGroup(ctx context.Context, id string) (*SecurityGroup, error) {
	req := ecs.CreateDescribeSecurityGroupsRequest()
	req.RegionId = c.region
	req.SecurityGroupId = id
	resp := ecs.CreateDescribeSecurityGroupsResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for i := range resp.SecurityGroups.SecurityGroup {
		if g := &resp.SecurityGroups.SecurityGroup[i]; g.SecurityGroupId == id {
			return &SecurityGroup{ID: g.SecurityGroupId, Name: g.SecurityGroupName, VPCID: g.VpcId,
				Tags: tagsOf(g.Tags.Tag, func(t ecs.Tag) (string, string) {
					if t.TagKey == "" {
						return t.Key, t.Value
					}
					return t.TagKey, t.TagValue
				})}, nil
		}
	}
	return nil, notFound(ProductECS, "DescribeSecurityGroups", "InvalidSecurityGroupId.NotFound", "security group "+id)
}

// SecurityGroupIngress lists the ingress rules of a security group (all pages).
func (c *Client) SecurityGroupIngress(ctx context.Context, id string) ([]IngressRule, error) {
	return pageTokens("the ingress rules of security group "+id, 0, func(token string) ([]IngressRule, int, string, error) {
		req := ecs.CreateDescribeSecurityGroupAttributeRequest()
		req.RegionId = c.region
		req.SecurityGroupId = id
		req.Direction = "ingress"
		req.NextToken = token
		resp := ecs.CreateDescribeSecurityGroupAttributeResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, 0, "", err
		}
		out := make([]IngressRule, 0, len(resp.Permissions.Permission))
		for _, p := range resp.Permissions.Permission {
			prio, _ := strconv.Atoi(p.Priority)
			out = append(out, IngressRule{
				RuleID: p.SecurityGroupRuleId, Protocol: p.IpProtocol, PortRange: p.PortRange, Policy: p.Policy,
				Description: p.Description, Priority: prio, SourceCIDR: p.SourceCidrIp, SourceGroupID: p.SourceGroupId,
				SourcePrefixListID: p.SourcePrefixListId, SourceIPv6CIDR: p.Ipv6SourceCidrIp,
			})
		}
		return out, len(out), resp.NextToken, nil
	})
}

// AuthorizeIngress adds ingress rules, maxPermissionsPerCall a call. Identical rules are a no-op
// at the service, so a retried call is harmless.
func (c *Client) AuthorizeIngress(ctx context.Context, sgID string, rules []IngressRule) error {
	for batch := range slices.Chunk(rules, maxPermissionsPerCall) {
		req := ecs.CreateAuthorizeSecurityGroupRequest()
		req.RegionId = c.region
		req.SecurityGroupId = sgID
		perms := make([]ecs.AuthorizeSecurityGroupPermissions, 0, len(batch))
		for _, r := range batch {
			perms = append(perms, ecs.AuthorizeSecurityGroupPermissions{IpProtocol: r.Protocol, PortRange: r.PortRange,
				Policy: r.Policy, Priority: strconv.Itoa(r.Priority), Description: r.Description,
				SourceGroupId: r.SourceGroupID, SourceCidrIp: r.SourceCIDR})
		}
		req.Permissions = &perms
		if err := c.Call(ctx, req, ecs.CreateAuthorizeSecurityGroupResponse()); err != nil {
			return fmt.Errorf("authorising %d rule(s): %w", len(batch), err)
		}
	}
	return nil
}

// RevokeIngress removes ingress rules by id, maxPermissionsPerCall a call.
func (c *Client) RevokeIngress(ctx context.Context, sgID string, ruleIDs []string) error {
	for batch := range slices.Chunk(ruleIDs, maxPermissionsPerCall) {
		batch := slices.Clone(batch)
		req := ecs.CreateRevokeSecurityGroupRequest()
		req.RegionId = c.region
		req.SecurityGroupId = sgID
		req.SecurityGroupRuleId = &batch
		if err := c.Call(ctx, req, ecs.CreateRevokeSecurityGroupResponse()); err != nil {
			return fmt.Errorf("revoking %d rule(s): %w", len(batch), err)
		}
	}
	return nil
}

// DeleteSecurityGroup deletes a security group, retrying DependencyViolation (instances still
// leaving it) until ctx ends; not found counts as done.
func (c *Client) DeleteSecurityGroup(ctx context.Context, id string) error {
	err := DeleteUntilGone(ctx, func() error {
		req := ecs.CreateDeleteSecurityGroupRequest()
		req.RegionId = c.region
		req.SecurityGroupId = id
		return c.Call(ctx, req, ecs.CreateDeleteSecurityGroupResponse())
	})
	if err != nil {
		return fmt.Errorf("deleting security group %s: %w", id, err)
	}
	return waitGone(ctx, "security group "+id, func() error { _, err := c.FindSecurityGroup(ctx, id); return err })
}
