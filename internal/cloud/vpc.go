package cloud

import (
	"context"
	"fmt"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

// VPCStatusAvailable is the status of a VPC or vSwitch that is ready for use.
const VPCStatusAvailable = "Available"

// vpcPending is the one state a VPC or vSwitch passes through before Available; the API
// documents no failed state for either
// (https://www.alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-describevpcs,
// https://www.alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-describevswitches).
var vpcPending = []string{"Pending"}

// vpcPageSize is the largest page the VPC API gives (DescribeVpcs, DescribeVSwitches).
const vpcPageSize = 50

// VPC is what the provider keeps of a VPC.
type VPC struct {
	ID, Name, CIDRBlock, Status string
}

// VSwitch is what the provider keeps of a vSwitch.
type VSwitch struct {
	ID, Name, VPCID, ZoneID, CIDRBlock, Status string
	// FreeAddresses is DescribeVSwitches' AvailableIpAddressCount: the private addresses the
	// vSwitch can still hand out
	// (https://www.alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-describevswitches).
	FreeAddresses int
}

func vpcFromSDK(v *vpc.Vpc) *VPC {
	return &VPC{ID: v.VpcId, Name: v.VpcName, CIDRBlock: v.CidrBlock, Status: v.Status}
}

func vswitchFromSDK(sw *vpc.VSwitch) VSwitch {
	return VSwitch{ID: sw.VSwitchId, Name: sw.VSwitchName, VPCID: sw.VpcId, ZoneID: sw.ZoneId, CIDRBlock: sw.CidrBlock, Status: sw.Status,
		FreeAddresses: int(sw.AvailableIpAddressCount)}
}

// VPCInput is what CreateVPC needs.
type VPCInput struct {
	Name, CIDRBlock, Description string
	Tags                         map[string]string
	// ClientToken makes the create idempotent (see CreateOrAdopt).
	ClientToken string
}

// CreateVPC creates a VPC, tagged at creation, and returns its id; it does not wait.
func (c *Client) CreateVPC(ctx context.Context, in VPCInput) (string, error) {
	req := vpc.CreateCreateVpcRequest()
	req.RegionId = c.region
	req.ClientToken = in.ClientToken
	req.VpcName = in.Name
	req.CidrBlock = in.CIDRBlock
	req.Description = in.Description
	ts := make([]vpc.CreateVpcTag, 0, len(in.Tags))
	for _, k := range sortedKeys(in.Tags) {
		ts = append(ts, vpc.CreateVpcTag{Key: k, Value: in.Tags[k]})
	}
	req.Tag = &ts
	resp := vpc.CreateCreateVpcResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return "", err
	}
	return resp.VpcId, nil
}

// RenameVPC changes a VPC's name.
func (c *Client) RenameVPC(ctx context.Context, id, name string) error {
	req := vpc.CreateModifyVpcAttributeRequest()
	req.RegionId = c.region
	req.VpcId = id
	req.VpcName = name
	return c.Call(ctx, req, vpc.CreateModifyVpcAttributeResponse())
}

// FindVPC returns the VPC with this id, or an error matching ErrNotFound.
func (c *Client) FindVPC(ctx context.Context, id string) (*VPC, error) {
	req := vpc.CreateDescribeVpcsRequest()
	req.RegionId = c.region
	req.VpcId = id
	resp := vpc.CreateDescribeVpcsResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for i := range resp.Vpcs.Vpc {
		if v := &resp.Vpcs.Vpc[i]; v.VpcId == id {
			return vpcFromSDK(v), nil
		}
	}
	return nil, notFound(ProductVPC, "DescribeVpcs", "InvalidVpcId.NotFound", "VPC "+id)
}

// WaitVPCAvailable waits until the VPC is Available (CreateVpc is asynchronous).
func (c *Client) WaitVPCAvailable(ctx context.Context, id string) (*VPC, error) {
	return waitFor(ctx, waiter[*VPC]{
		what: "VPC " + id, goal: "become Available",
		refresh: refreshStatus(func() (*VPC, error) { return c.FindVPC(ctx, id) }, func(v *VPC) string { return v.Status }),
		pending: vpcPending, target: []string{VPCStatusAvailable},
	})
}

// WaitVPCDeleted waits until FindVPC says not found.
func (c *Client) WaitVPCDeleted(ctx context.Context, id string) error {
	return waitGone(ctx, "VPC "+id, func() error { _, err := c.FindVPC(ctx, id); return err })
}

// DeleteVPC deletes a VPC, retrying DependencyViolation (vSwitches and security groups still
// draining) until ctx ends, and waits until it is gone; not found counts as done.
func (c *Client) DeleteVPC(ctx context.Context, id string) error {
	err := DeleteUntilGone(ctx, func() error {
		req := vpc.CreateDeleteVpcRequest()
		req.RegionId = c.region
		req.VpcId = id
		return c.Call(ctx, req, vpc.CreateDeleteVpcResponse())
	}, "IncorrectVpcStatus")
	if err != nil {
		return fmt.Errorf("deleting VPC %s: %w", id, err)
	}
	return c.WaitVPCDeleted(ctx, id)
}

// VSwitchInput is what CreateVSwitch needs.
type VSwitchInput struct {
	VPCID, ZoneID, CIDRBlock, Name string
	Tags                           map[string]string
	// ClientToken makes the create idempotent (see CreateOrAdopt).
	ClientToken string
}

// CreateVSwitch creates a vSwitch, tagged at creation, and returns its id; it does not wait.
// A VPC still settling (IncorrectVpcStatus, OperationConflict) is waited out.
func (c *Client) CreateVSwitch(ctx context.Context, in VSwitchInput) (string, error) {
	req := vpc.CreateCreateVSwitchRequest()
	req.RegionId = c.region
	req.ClientToken = in.ClientToken
	req.VpcId = in.VPCID
	req.ZoneId = in.ZoneID
	req.CidrBlock = in.CIDRBlock
	req.VSwitchName = in.Name
	ts := make([]vpc.CreateVSwitchTag, 0, len(in.Tags))
	for _, k := range sortedKeys(in.Tags) {
		ts = append(ts, vpc.CreateVSwitchTag{Key: k, Value: in.Tags[k]})
	}
	req.Tag = &ts
	resp := vpc.CreateCreateVSwitchResponse()
	if err := c.Call(ctx, req, resp, RetryOn("IncorrectVpcStatus", "OperationConflict")); err != nil {
		return "", err
	}
	return resp.VSwitchId, nil
}

// RenameVSwitch changes a vSwitch's name.
func (c *Client) RenameVSwitch(ctx context.Context, id, name string) error {
	req := vpc.CreateModifyVSwitchAttributeRequest()
	req.RegionId = c.region
	req.VSwitchId = id
	req.VSwitchName = name
	return c.Call(ctx, req, vpc.CreateModifyVSwitchAttributeResponse())
}

// FindVSwitch returns the vSwitch with this id, or an error matching ErrNotFound.
func (c *Client) FindVSwitch(ctx context.Context, id string) (*VSwitch, error) {
	req := vpc.CreateDescribeVSwitchesRequest()
	req.RegionId = c.region
	req.VSwitchId = id
	resp := vpc.CreateDescribeVSwitchesResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for i := range resp.VSwitches.VSwitch {
		if sw := &resp.VSwitches.VSwitch[i]; sw.VSwitchId == id {
			out := vswitchFromSDK(sw)
			return &out, nil
		}
	}
	return nil, notFound(ProductVPC, "DescribeVSwitches", "InvalidVSwitchId.NotFound", "vSwitch "+id)
}

// FindVSwitches lists the vSwitches of a VPC that carry every given tag, all pages.
func (c *Client) FindVSwitches(ctx context.Context, vpcID string, tags map[string]string) ([]VSwitch, error) {
	return pageNumbers("vSwitches of "+vpcID, vpcPageSize, 0, func(page int) ([]VSwitch, int, int, error) {
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
			return nil, 0, 0, err
		}
		out := make([]VSwitch, 0, len(resp.VSwitches.VSwitch))
		for i := range resp.VSwitches.VSwitch {
			out = append(out, vswitchFromSDK(&resp.VSwitches.VSwitch[i]))
		}
		return out, len(out), resp.TotalCount, nil
	})
}

// WaitVSwitchAvailable waits until the vSwitch is Available.
func (c *Client) WaitVSwitchAvailable(ctx context.Context, id string) (*VSwitch, error) {
	return waitFor(ctx, waiter[*VSwitch]{
		what: "vSwitch " + id, goal: "become Available",
		refresh: refreshStatus(func() (*VSwitch, error) { return c.FindVSwitch(ctx, id) }, func(sw *VSwitch) string { return sw.Status }),
		pending: vpcPending, target: []string{VPCStatusAvailable},
	})
}

// WaitVSwitchDeleted waits until FindVSwitch says not found.
func (c *Client) WaitVSwitchDeleted(ctx context.Context, id string) error {
	return waitGone(ctx, "vSwitch "+id, func() error { _, err := c.FindVSwitch(ctx, id); return err })
}

// DeleteVSwitch deletes a vSwitch, retrying DependencyViolation until ctx ends, and waits until it
// is gone; not found counts as done.
func (c *Client) DeleteVSwitch(ctx context.Context, id string) error {
	err := DeleteUntilGone(ctx, func() error {
		req := vpc.CreateDeleteVSwitchRequest()
		req.RegionId = c.region
		req.VSwitchId = id
		return c.Call(ctx, req, vpc.CreateDeleteVSwitchResponse())
	}, "IncorrectVSwitchStatus", "IncorrectStatus.VSwitch")
	if err != nil {
		return fmt.Errorf("deleting vSwitch %s: %w", id, err)
	}
	return c.WaitVSwitchDeleted(ctx, id)
}
