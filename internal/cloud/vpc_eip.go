package cloud

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

// EIP statuses.
const (
	EIPStatusAvailable = "Available"
	EIPStatusInUse     = "InUse"
)

// What an EIP can be bound to (AssociateEIP's instanceType).
const (
	EIPInstanceNAT = "Nat"
	EIPInstanceECS = "EcsInstance"
)

// EIP billing of traffic (pay-as-you-go EIPs).
const (
	EIPChargeByBandwidth = "PayByBandwidth"
	EIPChargeByTraffic   = "PayByTraffic"
)

// The vendor's bandwidth range of one pay-as-you-go EIP, in Mbit/s, per billing of traffic;
// more needs an Internet Shared Bandwidth plan. Source ("Bandwidth" of AllocateEipAddress):
// https://alibabacloud.com/help/tc/eip/developer-reference/api-120192 and
// https://alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-allocateeipaddress
// (subscription EIPs, which the provider does not buy, go to 1000).
const (
	EIPMinBandwidthMbps            = 1
	EIPMaxBandwidthMbpsByBandwidth = 500
	EIPMaxBandwidthMbpsByTraffic   = 200
)

// ValidateEIPBandwidth checks a pay-as-you-go EIP's bandwidth against the vendor's range for its
// billing, without a call: the provider runs it at plan time. The error says the range and the
// way out.
func ValidateEIPBandwidth(chargeType string, mbps int) error {
	var hi int
	switch chargeType {
	case EIPChargeByBandwidth:
		hi = EIPMaxBandwidthMbpsByBandwidth
	case EIPChargeByTraffic:
		hi = EIPMaxBandwidthMbpsByTraffic
	default:
		return fmt.Errorf("EIP internet charge type %q is not one of %s, %s", chargeType, EIPChargeByBandwidth, EIPChargeByTraffic)
	}
	if mbps < EIPMinBandwidthMbps || mbps > hi {
		return fmt.Errorf("EIP bandwidth %d Mbit/s is outside %d-%d Mbit/s, the range of a pay-as-you-go EIP billed %s: choose a bandwidth in that range (%s allows up to %d), or put the EIP in an Internet Shared Bandwidth plan for more",
			mbps, EIPMinBandwidthMbps, hi, chargeType, EIPChargeByBandwidth, EIPMaxBandwidthMbpsByBandwidth)
	}
	return nil
}

// EIP is what the provider keeps of an elastic IP address.
type EIP struct {
	ID, Address, Name, Description string
	Status                         string
	BandwidthMbps                  int
	InternetChargeType             string
	// InstanceID and InstanceType name what the EIP is bound to; "" when it is free.
	InstanceID, InstanceType string
	Tags                     map[string]string
}

func eipFromSDK(e *vpc.EipAddress) EIP {
	bw, _ := strconv.Atoi(e.Bandwidth)
	return EIP{ID: e.AllocationId, Address: e.IpAddress, Name: e.Name, Description: e.Description, Status: e.Status,
		BandwidthMbps: bw, InternetChargeType: e.InternetChargeType, InstanceID: e.InstanceId, InstanceType: e.InstanceType,
		Tags: tagsOf(e.Tags.Tag, func(t vpc.Tag) (string, string) { return t.Key, t.Value })}
}

// EIPInput is what AllocateEIP needs.
type EIPInput struct {
	BandwidthMbps      int
	InternetChargeType string // EIPChargeByBandwidth or EIPChargeByTraffic
	Name, Description  string
	// Tags are set right after the allocation (AllocateEipAddress takes none).
	Tags map[string]string
	// ClientToken makes the allocation idempotent (see CreateOrAdopt).
	ClientToken string
}

// AllocateEIP allocates a pay-as-you-go BGP EIP, tags it, and returns its allocation id and
// address. The bandwidth is checked first (ValidateEIPBandwidth). When only the tagging fails,
// the id comes back with the error, so the caller can keep track of the EIP.
func (c *Client) AllocateEIP(ctx context.Context, in EIPInput) (id, address string, err error) {
	if err := ValidateEIPBandwidth(in.InternetChargeType, in.BandwidthMbps); err != nil {
		return "", "", err
	}
	req := vpc.CreateAllocateEipAddressRequest()
	req.RegionId = c.region
	req.ClientToken = in.ClientToken
	req.Bandwidth = strconv.Itoa(in.BandwidthMbps)
	req.InternetChargeType = in.InternetChargeType
	req.InstanceChargeType = "PostPaid"
	req.ISP = "BGP"
	req.Name = in.Name
	req.Description = in.Description
	resp := vpc.CreateAllocateEipAddressResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return "", "", fmt.Errorf("allocating an EIP of %d Mbit/s: %w", in.BandwidthMbps, err)
	}
	if err := c.TagResources(ctx, KindEIP, []string{resp.AllocationId}, in.Tags); err != nil {
		return resp.AllocationId, resp.EipAddress, err
	}
	return resp.AllocationId, resp.EipAddress, nil
}

// FindEIP returns the EIP with this allocation id, or an error matching ErrNotFound.
func (c *Client) FindEIP(ctx context.Context, id string) (*EIP, error) {
	req := vpc.CreateDescribeEipAddressesRequest()
	req.RegionId = c.region
	req.AllocationId = id
	resp := vpc.CreateDescribeEipAddressesResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for i := range resp.EipAddresses.EipAddress {
		if e := &resp.EipAddresses.EipAddress[i]; e.AllocationId == id {
			out := eipFromSDK(e)
			return &out, nil
		}
	}
	return nil, notFound(ProductVPC, "DescribeEipAddresses", "InvalidAllocationId.NotFound", "EIP "+id)
}

// eipPageSize is the largest page DescribeEipAddresses gives.
const eipPageSize = 100

// FindEIPsByTags lists the EIPs in the region that carry every tag, all pages, sorted by id.
func (c *Client) FindEIPsByTags(ctx context.Context, tags map[string]string) ([]EIP, error) {
	filter := make([]vpc.DescribeEipAddressesTag, 0, len(tags))
	for _, k := range sortedKeys(tags) {
		filter = append(filter, vpc.DescribeEipAddressesTag{Key: k, Value: tags[k]})
	}
	out, err := pageNumbers(fmt.Sprintf("EIPs tagged %v", tags), eipPageSize, 0, func(page int) ([]EIP, int, int, error) {
		req := vpc.CreateDescribeEipAddressesRequest()
		req.RegionId = c.region
		req.Tag = &filter
		req.PageNumber = requests.NewInteger(page)
		req.PageSize = requests.NewInteger(eipPageSize)
		resp := vpc.CreateDescribeEipAddressesResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, 0, 0, fmt.Errorf("listing EIPs tagged %v: %w", tags, err)
		}
		var kept []EIP
		for i := range resp.EipAddresses.EipAddress {
			if e := eipFromSDK(&resp.EipAddresses.EipAddress[i]); hasTags(e.Tags, tags) {
				kept = append(kept, e)
			}
		}
		return kept, len(resp.EipAddresses.EipAddress), resp.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// eipStates are the EIP states of DescribeEipAddresses
// (https://www.alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-describeeipaddresses:
// Associating, Unassociating, InUse, Available, Releasing). Every one but Releasing may come
// before any other, so a wait for one treats the others as pending; Releasing is the end.
var (
	eipStates = []string{"Associating", "Unassociating", EIPStatusInUse, EIPStatusAvailable}
	eipFailed = []string{"Releasing"}
)

// WaitEIPStatus waits until the EIP has the status (association and release are asynchronous).
// An EIP Releasing fails the wait at once; one the service no longer finds is an error matching
// ErrNotFound.
func (c *Client) WaitEIPStatus(ctx context.Context, id, status string) (*EIP, error) {
	return waitFor(ctx, waiter[*EIP]{
		what:    "EIP " + id,
		refresh: refreshStatus(func() (*EIP, error) { return c.FindEIP(ctx, id) }, func(e *EIP) string { return e.Status }),
		pending: eipStates, target: []string{status}, failed: eipFailed,
	})
}

// AssociateEIP binds the EIP to an instance (instanceType EIPInstanceNAT or EIPInstanceECS) and
// waits until it is InUse. Binding to what it is already bound to is a no-op, so a retried apply
// is harmless; an EIP bound elsewhere is an error naming the holder. A target or an EIP still
// settling (IncorrectInstanceStatus, IncorrectEipStatus) is waited out.
func (c *Client) AssociateEIP(ctx context.Context, id, instanceID, instanceType string) error {
	// Each round looks, and calls when the EIP is free: the call is idempotent only through
	// that look, so the waiter's refresh does both.
	const bound, settling = "bound here", "settling"
	_, err := waitFor(ctx, waiter[struct{}]{
		what: "EIP " + id, goal: "be bound to " + instanceType + " " + instanceID,
		refresh: func() (struct{}, string, error) {
			e, err := c.FindEIP(ctx, id)
			if err != nil {
				return struct{}{}, "", err
			}
			switch {
			case e.InstanceID == instanceID:
				return struct{}{}, bound, nil
			case e.InstanceID != "":
				return struct{}{}, "", fmt.Errorf("EIP %s (%s) is bound to %s %s", id, e.Address, e.InstanceType, e.InstanceID)
			case e.Status != EIPStatusAvailable:
				return struct{}{}, settling, nil // still unbinding from its last holder
			}
			req := vpc.CreateAssociateEipAddressRequest()
			req.RegionId = c.region
			req.AllocationId = id
			req.InstanceId = instanceID
			req.InstanceType = instanceType
			err = c.Call(ctx, req, vpc.CreateAssociateEipAddressResponse(), RetryOn("IncorrectInstanceStatus"))
			switch {
			case err == nil:
				return struct{}{}, bound, nil // WaitEIPStatus below waits for InUse
			case IsCode(err, "IncorrectEipStatus"):
				return struct{}{}, settling, nil // moved between our look and the call: look again
			}
			return struct{}{}, "", err
		},
		pending: []string{settling}, target: []string{bound},
	})
	if err != nil {
		return fmt.Errorf("binding EIP %s to %s %s: %w", id, instanceType, instanceID, err)
	}
	_, err = c.WaitEIPStatus(ctx, id, EIPStatusInUse)
	return err
}

// UnassociateEIP unbinds the EIP from whatever holds it and waits until it is Available; a free
// EIP is left as it is. SNAT entries still using the address (DependencyViolation.SnatEntry)
// are waited out until ctx ends, for whoever deletes them.
func (c *Client) UnassociateEIP(ctx context.Context, id string) error {
	// IncorrectEipStatus: still Associating; the next look sees it InUse.
	err := DeleteUntilGone(ctx, func() error {
		e, err := c.FindEIP(ctx, id)
		if err != nil || e.InstanceID == "" {
			return err
		}
		req := vpc.CreateUnassociateEipAddressRequest()
		req.RegionId = c.region
		req.AllocationId = id
		req.InstanceId = e.InstanceID
		req.InstanceType = e.InstanceType
		return c.Call(ctx, req, vpc.CreateUnassociateEipAddressResponse())
	}, "IncorrectEipStatus")
	if err != nil {
		return fmt.Errorf("unbinding EIP %s: %w", id, err)
	}
	_, err = c.WaitEIPStatus(ctx, id, EIPStatusAvailable)
	if IsNotFound(err) {
		return nil
	}
	return err
}

// ReleaseEIP unbinds the EIP if it is bound (see UnassociateEIP), releases it and waits until it
// is gone; not found counts as done.
func (c *Client) ReleaseEIP(ctx context.Context, id string) error {
	if err := c.UnassociateEIP(ctx, id); err != nil && !IsNotFound(err) {
		return err
	}
	// IncorrectEipStatus: Unassociating settles into Available.
	err := DeleteUntilGone(ctx, func() error {
		req := vpc.CreateReleaseEipAddressRequest()
		req.RegionId = c.region
		req.AllocationId = id
		return c.Call(ctx, req, vpc.CreateReleaseEipAddressResponse())
	}, "IncorrectEipStatus")
	if err != nil {
		return fmt.Errorf("releasing EIP %s: %w", id, err)
	}
	return waitGone(ctx, "EIP "+id, func() error { _, err := c.FindEIP(ctx, id); return err })
}

// SetEIPBandwidth changes the EIP's bandwidth (checked against its billing first).
func (c *Client) SetEIPBandwidth(ctx context.Context, id string, mbps int) error {
	e, err := c.FindEIP(ctx, id)
	if err != nil {
		return err
	}
	if err := ValidateEIPBandwidth(e.InternetChargeType, mbps); err != nil {
		return err
	}
	req := vpc.CreateModifyEipAddressAttributeRequest()
	req.RegionId = c.region
	req.AllocationId = id
	req.Bandwidth = strconv.Itoa(mbps)
	if err := c.Call(ctx, req, vpc.CreateModifyEipAddressAttributeResponse()); err != nil {
		return fmt.Errorf("setting EIP %s to %d Mbit/s: %w", id, mbps, err)
	}
	return nil
}

// RenameEIP changes the EIP's name and description.
func (c *Client) RenameEIP(ctx context.Context, id, name, description string) error {
	req := vpc.CreateModifyEipAddressAttributeRequest()
	req.RegionId = c.region
	req.AllocationId = id
	req.Name = name
	req.Description = description
	return c.Call(ctx, req, vpc.CreateModifyEipAddressAttributeResponse())
}
