package cloud

import (
	"context"
	"fmt"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

// FindSecurityGroup returns the security group with this id, tags included, or an error for which
// IsNotFound is true.
func (c *Client) FindSecurityGroup(ctx context.Context, id string) (*ecs.SecurityGroup, error) {
	req := ecs.CreateDescribeSecurityGroupsRequest()
	req.RegionId = c.region
	req.SecurityGroupId = id
	resp := ecs.CreateDescribeSecurityGroupsResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for i := range resp.SecurityGroups.SecurityGroup {
		if g := &resp.SecurityGroups.SecurityGroup[i]; g.SecurityGroupId == id {
			return g, nil
		}
	}
	return nil, notFound(ProductECS, "DescribeSecurityGroups", "InvalidSecurityGroupId.NotFound", "security group "+id)
}

// SecurityGroupIngress lists the ingress rules of a security group (all pages).
func (c *Client) SecurityGroupIngress(ctx context.Context, id string) ([]ecs.Permission, error) {
	var out []ecs.Permission
	token := ""
	for {
		req := ecs.CreateDescribeSecurityGroupAttributeRequest()
		req.RegionId = c.region
		req.SecurityGroupId = id
		req.Direction = "ingress"
		req.NextToken = token
		resp := ecs.CreateDescribeSecurityGroupAttributeResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, err
		}
		out = append(out, resp.Permissions.Permission...)
		if resp.NextToken == "" || resp.NextToken == token {
			return out, nil
		}
		token = resp.NextToken
	}
}

// DeleteSecurityGroup deletes a security group, retrying DependencyViolation (instances still
// leaving it) until ctx ends; not found counts as done.
func (c *Client) DeleteSecurityGroup(ctx context.Context, id string) error {
	err := DeleteUntilGone(ctx, func() error {
		req := ecs.CreateDeleteSecurityGroupRequest()
		req.RegionId = c.region
		req.SecurityGroupId = id
		return c.Call(ctx, req, ecs.CreateDeleteSecurityGroupResponse())
	}, "DependencyViolation")
	if err != nil {
		return fmt.Errorf("deleting security group %s: %w", id, err)
	}
	return waitGone(ctx, "security group "+id, func() error { _, err := c.FindSecurityGroup(ctx, id); return err })
}
