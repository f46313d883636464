package cloud

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

// SNATEntryStatusAvailable is the status of an SNAT entry that translates traffic.
const SNATEntryStatusAvailable = "Available"

// SNATEntryStatusDeleting is the status of an entry whose deletion has been accepted: it is still
// listed for a while but no longer translates, and a new entry for the same source is refused
// until it is gone.
const SNATEntryStatusDeleting = "Deleting"

// SNATEntry is one entry of a NAT gateway's SNAT table: traffic from a vSwitch (or a CIDR
// block) leaves through the listed EIP addresses.
type SNATEntry struct {
	ID, SnatTableID, NATGatewayID string
	Name                          string
	// SourceVSwitchID is set for a vSwitch entry; SourceCIDR is then the vSwitch's block.
	SourceVSwitchID, SourceCIDR string
	SnatIPs                     []string
	Status                      string
}

func snatEntryFromSDK(e *vpc.SnatTableEntry) SNATEntry {
	return SNATEntry{ID: e.SnatEntryId, SnatTableID: e.SnatTableId, NATGatewayID: e.NatGatewayId, Name: e.SnatEntryName,
		SourceVSwitchID: e.SourceVSwitchId, SourceCIDR: e.SourceCIDR, SnatIPs: strings.Split(e.SnatIp, ","), Status: e.Status}
}

// SNATEntryInput is what CreateSNATEntry needs. Exactly one of SourceVSwitchID and SourceCIDR.
type SNATEntryInput struct {
	SnatTableID                 string
	SourceVSwitchID, SourceCIDR string
	// SnatIPs are addresses of EIPs bound to the entry's gateway.
	SnatIPs []string
	Name    string
	// ClientToken makes the create idempotent (see CreateOrAdopt).
	ClientToken string
}

// CreateSNATEntry adds an entry to an SNAT table and returns its id; it does not wait. A gateway
// still being created or an EIP still being bound is waited out.
func (c *Client) CreateSNATEntry(ctx context.Context, in SNATEntryInput) (string, error) {
	if (in.SourceVSwitchID == "") == (in.SourceCIDR == "") {
		return "", errors.New("an SNAT entry translates either a vSwitch or a CIDR block: give exactly one")
	}
	req := vpc.CreateCreateSnatEntryRequest()
	req.RegionId = c.region
	req.ClientToken = in.ClientToken
	req.SnatTableId = in.SnatTableID
	req.SourceVSwitchId = in.SourceVSwitchID
	req.SourceCIDR = in.SourceCIDR
	req.SnatIp = strings.Join(in.SnatIPs, ",")
	req.SnatEntryName = in.Name
	resp := vpc.CreateCreateSnatEntryResponse()
	if err := c.Call(ctx, req, resp, RetryOn("IncorrectStatus.NatGateway", "IncorrectEipStatus")); err != nil {
		return "", fmt.Errorf("creating an SNAT entry for %s%s in table %s: %w", in.SourceVSwitchID, in.SourceCIDR, in.SnatTableID, err)
	}
	return resp.SnatEntryId, nil
}

// snatPageSize is the largest page DescribeSnatTableEntries gives.
const snatPageSize = 50

// FindSNATEntries lists the entries of an SNAT table, all pages, sorted by id. A table whose
// gateway is gone answers an error matching ErrNotFound.
func (c *Client) FindSNATEntries(ctx context.Context, snatTableID string) ([]SNATEntry, error) {
	return c.listSNATEntries(ctx, snatTableID, "")
}

func (c *Client) listSNATEntries(ctx context.Context, snatTableID, entryID string) ([]SNATEntry, error) {
	out, err := pageNumbers("entries of SNAT table "+snatTableID, snatPageSize, 0, func(page int) ([]SNATEntry, int, int, error) {
		req := vpc.CreateDescribeSnatTableEntriesRequest()
		req.RegionId = c.region
		req.SnatTableId = snatTableID
		req.SnatEntryId = entryID
		req.PageNumber = requests.NewInteger(page)
		req.PageSize = requests.NewInteger(snatPageSize)
		resp := vpc.CreateDescribeSnatTableEntriesResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, 0, 0, err
		}
		out := make([]SNATEntry, 0, len(resp.SnatTableEntries.SnatTableEntry))
		for i := range resp.SnatTableEntries.SnatTableEntry {
			out = append(out, snatEntryFromSDK(&resp.SnatTableEntries.SnatTableEntry[i]))
		}
		return out, len(out), resp.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// FindSNATEntry returns one entry of an SNAT table, or an error matching ErrNotFound.
func (c *Client) FindSNATEntry(ctx context.Context, snatTableID, id string) (*SNATEntry, error) {
	entries, err := c.listSNATEntries(ctx, snatTableID, id)
	if err != nil {
		return nil, err
	}
	for i := range entries {
		if entries[i].ID == id {
			return &entries[i], nil
		}
	}
	return nil, notFound(ProductVPC, "DescribeSnatTableEntries", "InvalidSnatEntryId.NotFound", "SNAT entry "+id)
}

// WaitSNATEntryAvailable waits until the entry is Available (CreateSnatEntry is asynchronous).
// An entry Deleting fails the wait at once: Pending, Available and Deleting are the states
// DescribeSnatTableEntries documents
// (https://www.alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-describesnattableentries).
func (c *Client) WaitSNATEntryAvailable(ctx context.Context, snatTableID, id string) (*SNATEntry, error) {
	return waitFor(ctx, waiter[*SNATEntry]{
		what: "SNAT entry " + id, goal: "become Available",
		refresh: refreshStatus(func() (*SNATEntry, error) { return c.FindSNATEntry(ctx, snatTableID, id) }, func(e *SNATEntry) string { return e.Status }),
		pending: []string{"Pending"}, target: []string{SNATEntryStatusAvailable}, failed: []string{SNATEntryStatusDeleting},
	})
}

// DeleteSNATEntry deletes an entry and waits until it is gone; not found (of the entry or of its
// table) counts as done. An entry still being created is waited out.
func (c *Client) DeleteSNATEntry(ctx context.Context, snatTableID, id string) error {
	// The vendor spells the status code "IncorretSnatEntryStatus"; the correct spelling is
	// accepted too in case it is ever fixed.
	err := DeleteUntilGone(ctx, func() error {
		req := vpc.CreateDeleteSnatEntryRequest()
		req.RegionId = c.region
		req.SnatTableId = snatTableID
		req.SnatEntryId = id
		return c.Call(ctx, req, vpc.CreateDeleteSnatEntryResponse())
	}, "IncorretSnatEntryStatus", "IncorrectSnatEntryStatus", "IncorrectStatus.NatGateway")
	if err != nil {
		return fmt.Errorf("deleting SNAT entry %s of table %s: %w", id, snatTableID, err)
	}
	return c.WaitSNATEntryGone(ctx, snatTableID, id)
}

// WaitSNATEntryGone waits until an entry (one being deleted, say) is no longer listed.
func (c *Client) WaitSNATEntryGone(ctx context.Context, snatTableID, id string) error {
	return waitGone(ctx, "SNAT entry "+id, func() error { _, err := c.FindSNATEntry(ctx, snatTableID, id); return err })
}
