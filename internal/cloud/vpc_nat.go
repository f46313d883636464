package cloud

import (
	"context"
	"fmt"
	"sort"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

// NATGatewayStatusAvailable is the status of a NAT gateway that takes EIPs and SNAT entries.
const NATGatewayStatusAvailable = "Available"

// The NAT gateway states on the way to Available, and the one it does not come back from
// (https://www.alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-describenatgateways:
// Creating, Available, Modifying, Deleting, Converting).
var (
	natGatewayPending = []string{"Creating", "Modifying", "Converting"}
	natGatewayFailed  = []string{"Deleting"}
)

// NATGateway is what the provider keeps of an (enhanced, internet) NAT gateway.
type NATGateway struct {
	ID, Name, Description string
	VPCID, VSwitchID      string
	Status                string
	// SnatTableID is the gateway's SNAT table, where CreateSNATEntry adds entries.
	SnatTableID string
	PrivateIP   string
	// EIPs are the allocation ids of the EIPs bound to the gateway, sorted.
	EIPs []string
	Tags map[string]string
}

func natGatewayFromSDK(n *vpc.NatGateway) NATGateway {
	out := NATGateway{ID: n.NatGatewayId, Name: n.Name, Description: n.Description, VPCID: n.VpcId,
		VSwitchID: n.NatGatewayPrivateInfo.VswitchId, Status: n.Status, PrivateIP: n.NatGatewayPrivateInfo.PrivateIpAddress,
		// The vendor's DescribeNatGateways model names a gateway's tags TagKey/TagValue (its VPC,
		// vSwitch and EIP models say Key/Value); the SDK's shared Tag struct carries both.
		Tags: tagsOf(n.Tags.Tag, func(t vpc.Tag) (string, string) { return t.TagKey, t.TagValue })}
	if ids := n.SnatTableIds.SnatTableId; len(ids) > 0 {
		out.SnatTableID = ids[0]
	}
	for _, ip := range n.IpLists.IpList {
		out.EIPs = append(out.EIPs, ip.AllocationId)
	}
	sort.Strings(out.EIPs)
	return out
}

// NATGatewayInput is what CreateNATGateway needs.
type NATGatewayInput struct {
	VPCID, VSwitchID  string
	Name, Description string
	Tags              map[string]string
	// ClientToken makes the create idempotent (see CreateOrAdopt).
	ClientToken string
}

// CreateNATGateway creates an enhanced internet NAT gateway (pay-as-you-go, billed by LCU, the
// only kind the vendor still sells) in a vSwitch, tagged at creation, and returns its id and the
// id of its SNAT table; it does not wait. A VPC or vSwitch still being created is waited out.
func (c *Client) CreateNATGateway(ctx context.Context, in NATGatewayInput) (id, snatTableID string, err error) {
	req := vpc.CreateCreateNatGatewayRequest()
	req.RegionId = c.region
	req.ClientToken = in.ClientToken
	req.VpcId = in.VPCID
	req.VSwitchId = in.VSwitchID
	req.Name = in.Name
	req.Description = in.Description
	req.NatType = "Enhanced"
	req.NetworkType = "internet"
	req.InstanceChargeType = "PostPaid"
	req.InternetChargeType = "PayByLcu"
	ts := make([]vpc.CreateNatGatewayTag, 0, len(in.Tags))
	for _, k := range sortedKeys(in.Tags) {
		ts = append(ts, vpc.CreateNatGatewayTag{Key: k, Value: in.Tags[k]})
	}
	req.Tag = &ts
	resp := vpc.CreateCreateNatGatewayResponse()
	if err := c.Call(ctx, req, resp, RetryOn("VpcStatusError", "VswitchStatusError", "IncorrectVpcStatus")); err != nil {
		return "", "", fmt.Errorf("creating a NAT gateway in VPC %s: %w", in.VPCID, err)
	}
	if ids := resp.SnatTableIds.SnatTableId; len(ids) > 0 {
		snatTableID = ids[0]
	}
	return resp.NatGatewayId, snatTableID, nil
}

// FindNATGateway returns the NAT gateway with this id, or an error matching ErrNotFound.
func (c *Client) FindNATGateway(ctx context.Context, id string) (*NATGateway, error) {
	req := vpc.CreateDescribeNatGatewaysRequest()
	req.RegionId = c.region
	req.NatGatewayId = id
	resp := vpc.CreateDescribeNatGatewaysResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for i := range resp.NatGateways.NatGateway {
		if n := &resp.NatGateways.NatGateway[i]; n.NatGatewayId == id {
			out := natGatewayFromSDK(n)
			return &out, nil
		}
	}
	return nil, notFound(ProductVPC, "DescribeNatGateways", "InvalidNatGatewayId.NotFound", "NAT gateway "+id)
}

// FindNATGateways lists the NAT gateways in a VPC ("" for the whole region) that carry every
// given tag, all pages, sorted by id: the finder that adopts what an interrupted apply left.
func (c *Client) FindNATGateways(ctx context.Context, vpcID string, tags map[string]string) ([]NATGateway, error) {
	filter := make([]vpc.DescribeNatGatewaysTag, 0, len(tags))
	for _, k := range sortedKeys(tags) {
		filter = append(filter, vpc.DescribeNatGatewaysTag{Key: k, Value: tags[k]})
	}
	out, err := pageNumbers(fmt.Sprintf("NAT gateways tagged %v", tags), vpcPageSize, 0, func(page int) ([]NATGateway, int, int, error) {
		req := vpc.CreateDescribeNatGatewaysRequest()
		req.RegionId = c.region
		req.VpcId = vpcID
		req.Tag = &filter
		req.PageNumber = requests.NewInteger(page)
		req.PageSize = requests.NewInteger(vpcPageSize)
		resp := vpc.CreateDescribeNatGatewaysResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, 0, 0, fmt.Errorf("listing NAT gateways tagged %v: %w", tags, err)
		}
		var kept []NATGateway
		for i := range resp.NatGateways.NatGateway {
			// The service filters; checking again keeps a lenient endpoint from handing back a
			// gateway that is not ours.
			if n := natGatewayFromSDK(&resp.NatGateways.NatGateway[i]); hasTags(n.Tags, tags) && (vpcID == "" || n.VPCID == vpcID) {
				kept = append(kept, n)
			}
		}
		return kept, len(resp.NatGateways.NatGateway), resp.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// hasTags reports whether have carries every key and value of want.
func hasTags(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// WaitNATGatewayAvailable waits until the gateway is Available (CreateNatGateway is
// asynchronous); one Deleting fails the wait at once.
func (c *Client) WaitNATGatewayAvailable(ctx context.Context, id string) (*NATGateway, error) {
	return waitFor(ctx, waiter[*NATGateway]{
		what: "NAT gateway " + id, goal: "become Available",
		refresh: refreshStatus(func() (*NATGateway, error) { return c.FindNATGateway(ctx, id) }, func(n *NATGateway) string { return n.Status }),
		pending: natGatewayPending, target: []string{NATGatewayStatusAvailable}, failed: natGatewayFailed,
	})
}

// RenameNATGateway changes a gateway's name and description.
func (c *Client) RenameNATGateway(ctx context.Context, id, name, description string) error {
	req := vpc.CreateModifyNatGatewayAttributeRequest()
	req.RegionId = c.region
	req.NatGatewayId = id
	req.Name = name
	req.Description = description
	return c.Call(ctx, req, vpc.CreateModifyNatGatewayAttributeResponse(), RetryOn("IncorrectStatus.NatGateway"))
}

// DeleteNATGateway deletes a NAT gateway and waits until it is gone; not found counts as done.
// Without force, SNAT entries and bound EIPs (DependencyViolation.SnatEntry, .EIPS) are waited
// out until ctx ends, for whoever deletes them concurrently; with force the service deletes the
// entries and unbinds the EIPs itself (the EIPs are not released).
func (c *Client) DeleteNATGateway(ctx context.Context, id string, force bool) error {
	// A gateway still Creating (or already Deleting) answers IncorrectStatus.NatGateway.
	err := DeleteUntilGone(ctx, func() error {
		req := vpc.CreateDeleteNatGatewayRequest()
		req.RegionId = c.region
		req.NatGatewayId = id
		req.Force = requests.NewBoolean(force)
		return c.Call(ctx, req, vpc.CreateDeleteNatGatewayResponse())
	}, "IncorrectStatus.NatGateway")
	if err != nil {
		return fmt.Errorf("deleting NAT gateway %s: %w", id, err)
	}
	return waitGone(ctx, "NAT gateway "+id, func() error { _, err := c.FindNATGateway(ctx, id); return err })
}
