package cloud

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

// Status values of VPCs and vSwitches.
const (
	VPCStatusAvailable = "Available"
	VPCStatusPending   = "Pending"
)

// vpcPageSize is the largest page the VPC API gives (DescribeVpcs, DescribeVSwitches).
const vpcPageSize = 50

// notFound builds the typed not-found answer finders return when a Describe call succeeds but
// lists nothing: IsNotFound recognises it like the service's own *.NotFound codes.
func notFound(product, action, code, id string) error {
	return &APIError{Product: product, Action: action, Code: code, Message: fmt.Sprintf("%s does not exist", id)}
}

// FindVPC returns the VPC with this id, or an error for which IsNotFound is true.
func (c *Client) FindVPC(ctx context.Context, id string) (*vpc.Vpc, error) {
	req := vpc.CreateDescribeVpcsRequest()
	req.RegionId = c.region
	req.VpcId = id
	resp := vpc.CreateDescribeVpcsResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for i := range resp.Vpcs.Vpc {
		if v := &resp.Vpcs.Vpc[i]; v.VpcId == id {
			return v, nil
		}
	}
	return nil, notFound(ProductVPC, "DescribeVpcs", "InvalidVpcId.NotFound", "VPC "+id)
}

// VPCStatus is the status function of a VPC: its Status, or "" with a not-found error.
func (c *Client) VPCStatus(ctx context.Context, id string) (string, error) {
	v, err := c.FindVPC(ctx, id)
	if err != nil {
		return "", err
	}
	return v.Status, nil
}

// WaitVPCAvailable waits until the VPC is Available (CreateVpc is asynchronous).
func (c *Client) WaitVPCAvailable(ctx context.Context, id string) (*vpc.Vpc, error) {
	var out *vpc.Vpc
	err := poll(ctx, func() (bool, error) {
		v, err := c.FindVPC(ctx, id)
		if err != nil {
			return false, err
		}
		out = v
		return v.Status == VPCStatusAvailable, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for VPC %s to become Available: %w", id, err)
	}
	return out, nil
}

// WaitVPCDeleted waits until FindVPC says not found.
func (c *Client) WaitVPCDeleted(ctx context.Context, id string) error {
	return waitGone(ctx, "VPC "+id, func() error { _, err := c.FindVPC(ctx, id); return err })
}

// FindVSwitch returns the vSwitch with this id, or an error for which IsNotFound is true.
func (c *Client) FindVSwitch(ctx context.Context, id string) (*vpc.VSwitch, error) {
	req := vpc.CreateDescribeVSwitchesRequest()
	req.RegionId = c.region
	req.VSwitchId = id
	resp := vpc.CreateDescribeVSwitchesResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for i := range resp.VSwitches.VSwitch {
		if sw := &resp.VSwitches.VSwitch[i]; sw.VSwitchId == id {
			return sw, nil
		}
	}
	return nil, notFound(ProductVPC, "DescribeVSwitches", "InvalidVSwitchId.NotFound", "vSwitch "+id)
}

// FindVSwitches lists the vSwitches of a VPC that carry every given tag, all pages.
func (c *Client) FindVSwitches(ctx context.Context, vpcID string, tags map[string]string) ([]vpc.VSwitch, error) {
	var out []vpc.VSwitch
	for page := 1; ; page++ {
		req := vpc.CreateDescribeVSwitchesRequest()
		req.RegionId = c.region
		req.VpcId = vpcID
		req.PageNumber = requests.NewInteger(page)
		req.PageSize = requests.NewInteger(vpcPageSize)
		if len(tags) > 0 {
			var ts []vpc.DescribeVSwitchesTag
			for k, v := range tags {
				ts = append(ts, vpc.DescribeVSwitchesTag{Key: k, Value: v})
			}
			req.Tag = &ts
		}
		resp := vpc.CreateDescribeVSwitchesResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, err
		}
		out = append(out, resp.VSwitches.VSwitch...)
		if len(resp.VSwitches.VSwitch) < vpcPageSize || len(out) >= resp.TotalCount {
			return out, nil
		}
	}
}

// WaitVSwitchAvailable waits until the vSwitch is Available.
func (c *Client) WaitVSwitchAvailable(ctx context.Context, id string) (*vpc.VSwitch, error) {
	var out *vpc.VSwitch
	err := poll(ctx, func() (bool, error) {
		sw, err := c.FindVSwitch(ctx, id)
		if err != nil {
			return false, err
		}
		out = sw
		return sw.Status == VPCStatusAvailable, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for vSwitch %s to become Available: %w", id, err)
	}
	return out, nil
}

// WaitVSwitchDeleted waits until FindVSwitch says not found.
func (c *Client) WaitVSwitchDeleted(ctx context.Context, id string) error {
	return waitGone(ctx, "vSwitch "+id, func() error { _, err := c.FindVSwitch(ctx, id); return err })
}

// ZoneIDs lists the zone ids of the client's region (ECS DescribeZones).
func (c *Client) ZoneIDs(ctx context.Context) ([]string, error) {
	req := ecs.CreateDescribeZonesRequest()
	req.RegionId = c.region
	resp := ecs.CreateDescribeZonesResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(resp.Zones.Zone))
	for _, z := range resp.Zones.Zone {
		out = append(out, z.ZoneId)
	}
	return out, nil
}

// DeleteUntilGone calls del until it succeeds or says not found, retrying the given codes
// (typically DependencyViolation while dependents drain) with backoff until ctx ends. Not found
// counts as done.
func DeleteUntilGone(ctx context.Context, del func() error, retryCodes ...string) error {
	for attempt := 0; ; attempt++ {
		err := del()
		if err == nil || IsNotFound(err) {
			return nil
		}
		if !IsCode(err, retryCodes...) {
			return err
		}
		if sleepErr := sleep(ctx, backoff(time.Second, 10*time.Second, attempt)); sleepErr != nil {
			return fmt.Errorf("%w (still refused: %v)", sleepErr, err)
		}
	}
}

// Poll interval bounds of waiters.
var (
	pollMin = 500 * time.Millisecond
	pollMax = 5 * time.Second
)

// poll calls check until it reports done, fails, or ctx ends.
func poll(ctx context.Context, check func() (bool, error)) error {
	for attempt := 0; ; attempt++ {
		done, err := check()
		if err != nil || done {
			return err
		}
		if err := sleep(ctx, min(pollMin*time.Duration(1<<min(attempt, 4)), pollMax)); err != nil {
			return err
		}
	}
}

// waitGone polls find until it reports not found.
func waitGone(ctx context.Context, what string, find func() error) error {
	err := poll(ctx, func() (bool, error) {
		err := find()
		if IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("waiting for %s to be deleted: %w", what, err)
	}
	return err
}

// DeleteVSwitch deletes a vSwitch, retrying DependencyViolation until ctx ends, and waits until it
// is gone; not found counts as done.
func (c *Client) DeleteVSwitch(ctx context.Context, id string) error {
	err := DeleteUntilGone(ctx, func() error {
		req := vpc.CreateDeleteVSwitchRequest()
		req.RegionId = c.region
		req.VSwitchId = id
		return c.Call(ctx, req, vpc.CreateDeleteVSwitchResponse())
	}, "DependencyViolation", "IncorrectVSwitchStatus", "IncorrectStatus.VSwitch")
	if err != nil {
		return fmt.Errorf("deleting vSwitch %s: %w", id, err)
	}
	return c.WaitVSwitchDeleted(ctx, id)
}

// DeleteVPC deletes a VPC, retrying DependencyViolation (vSwitches and security groups still
// draining) until ctx ends, and waits until it is gone; not found counts as done.
func (c *Client) DeleteVPC(ctx context.Context, id string) error {
	err := DeleteUntilGone(ctx, func() error {
		req := vpc.CreateDeleteVpcRequest()
		req.RegionId = c.region
		req.VpcId = id
		return c.Call(ctx, req, vpc.CreateDeleteVpcResponse())
	}, "DependencyViolation", "DependencyViolation.VSwitch", "DependencyViolation.SecurityGroup", "IncorrectVpcStatus")
	if err != nil {
		return fmt.Errorf("deleting VPC %s: %w", id, err)
	}
	return c.WaitVPCDeleted(ctx, id)
}
