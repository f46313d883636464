package vpc

// SNAT entries of a NAT gateway's SNAT table (VPC API 2016-04-28). Semantics
// and codes follow
//   https://alibabacloud.com/help/en/nat-gateway/developer-reference/api-vpc-2016-04-28-createsnatentry-natgws
//   https://alibabacloud.com/help/en/nat-gateway/developer-reference/api-vpc-2016-04-28-describesnattableentries-natgws
//   https://alibabacloud.com/help/en/nat-gateway/developer-reference/api-vpc-2016-04-28-deletesnatentry-natgws
// An entry translates one source (a vSwitch or a CIDR block) to one or more
// EIPs that must be bound to the entry's gateway. Creation is asynchronous
// (Pending -> Available), as is deletion (Deleting -> gone); an entry that is
// not Available cannot be deleted (IncorretSnatEntryStatus, the vendor's spelling).

import (
	"net/netip"
	"sort"
	"strings"

	vpcsdk "github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "CreateSnatEntry", core.Route{Fn: write(createSnatEntry), Write: true, Idem: true})
	core.Register(Version, "DescribeSnatTableEntries", core.Route{Fn: describeSnatTableEntries})
	core.Register(Version, "DeleteSnatEntry", core.Route{Fn: write(deleteSnatEntry), Write: true, Idem: true})
}

// snatQuota is the vendor's default number of SNAT entries per SNAT table.
const snatQuota = 40

// natBySnatTable finds the live gateway owning an SNAT table.
func natBySnatTable(c *core.Call, table string) (*NatGateway, *core.Error) {
	for _, n := range StoreIn(c.Stores).Nats {
		if n.SnatTable == table && n.Region == c.Region && !n.Gone(c.Env, c.Now) {
			return n, nil
		}
	}
	return nil, core.Errf(404, "InvalidSnatTableId.NotFound", "Specified SNAT table %q does not exist.", table)
}

func createSnatEntry(c *core.Call) (any, *core.Error) {
	table, e := c.P.Required("SnatTableId")
	if e != nil {
		return nil, e
	}
	n, e := natBySnatTable(c, table)
	if e != nil {
		return nil, e
	}
	if st := n.Status(c.Env, c.Now); st != "Available" {
		return nil, core.Errf(400, "IncorrectStatus.NatGateway", "NAT gateway %s is %s; SNAT entries can be added once it is Available.", n.ID, st)
	}
	snatIP, e := c.P.Required("SnatIp")
	if e != nil {
		return nil, e
	}
	bound := map[string]*EIP{}
	for _, x := range natEIPs(c, n) {
		bound[x.IP] = x
	}
	ips := strings.Split(snatIP, ",")
	for _, ip := range ips {
		if _, err := netip.ParseAddr(ip); err != nil {
			return nil, core.Errf(400, "InvalidSnatIp.Malformed", "The specified SnatIp %q is not a valid IP address.", ip)
		}
		x := bound[ip]
		if x == nil {
			return nil, core.Errf(404, "InvalidSnatIp.NotFound", "Specified SnatIp %s does not found on the NAT Gateway %s: associate the EIP with it first.", ip, n.ID)
		}
		if st := x.Status(c.Env, c.Now); st != "InUse" {
			return nil, errEipStatus(x, st, "InUse")
		}
	}
	vswID, cidr := c.P["SourceVSwitchId"], c.P["SourceCIDR"]
	switch {
	case vswID == "" && cidr == "":
		return nil, core.ErrMissing("SourceVSwitchId")
	case vswID != "" && cidr != "":
		return nil, core.Errf(400, "INVALID_PARAMETER", "The parameter invalid: give SourceVSwitchId or SourceCIDR, not both.")
	}
	src := cidr
	if vswID != "" {
		sw := StoreIn(c.Stores).VSwitches[vswID]
		if sw == nil || sw.Region != c.Region {
			return nil, core.Errf(404, "InvalidVSwitchId.NotFound", "The specified virtual switch %q does not exists.", vswID)
		}
		if sw.VpcID != n.VpcID {
			return nil, core.Errf(400, "INVALID_PARAMETER", "The parameter invalid: vSwitch %s is in VPC %s, NAT gateway %s in VPC %s.", sw.ID, sw.VpcID, n.ID, n.VpcID)
		}
		src = sw.CIDR
	} else if p, err := netip.ParsePrefix(cidr); err != nil || !p.Addr().Is4() || p.Masked() != p {
		return nil, core.Errf(400, "INVALID_PARAMETER", "The parameter invalid: SourceCIDR %q is not an IPv4 CIDR block.", cidr)
	}
	live := n.LiveSnat(c.Env, c.Now)
	srcPfx := netip.MustParsePrefix(src)
	for _, x := range live {
		if vswID != "" && x.SourceVSw == vswID || x.SourceNet == src {
			return nil, core.Errf(400, "Forbidden.SourceVSwitchId.Duplicated", "The specified SourceCIDR is duplicated: SNAT entry %s already translates %s.", x.ID, src)
		}
		if netip.MustParsePrefix(x.SourceNet).Overlaps(srcPfx) && (vswID == "" || x.SourceVSw == "") {
			return nil, core.Errf(400, "OperationUnsupported.CidrConflict", "The specified CIDR block %s conflicts with SNAT entry %s (%s).", src, x.ID, x.SourceNet)
		}
	}
	if len(live) >= snatQuota {
		return nil, core.Errf(400, "Forbidden.SnatEntryCountLimited", "SNAT entry in the specified SNAT table %s reach its limit of %d.", table, snatQuota)
	}
	if name := c.P["SnatEntryName"]; name != "" && (len(name) < 2 || len(name) > 128) {
		return nil, core.Errf(400, "InvalidParameter.Name.Malformed", "The specified Name %q is not valid: 2-128 characters.", name)
	}
	x := &SnatEntry{ID: c.Env.NewID("snat"), Name: c.P["SnatEntryName"], SourceVSw: vswID, SourceNet: src,
		SnatIP: snatIP, Created: c.Now.UnixNano()}
	n.Snat = append(n.Snat, x)
	return &vpcsdk.CreateSnatEntryResponse{RequestId: c.ReqID, SnatEntryId: x.ID}, nil
}

func describeSnatTableEntries(c *core.Call) (any, *core.Error) {
	number, size, e := core.Page(c.P, 50)
	if e != nil {
		return nil, e
	}
	var gws []*NatGateway
	switch {
	case c.P["SnatTableId"] != "":
		n, e := natBySnatTable(c, c.P["SnatTableId"])
		if e != nil {
			return nil, e
		}
		gws = []*NatGateway{n}
	case c.P["NatGatewayId"] != "":
		n, e := findNat(c)
		if e != nil {
			return nil, e
		}
		gws = []*NatGateway{n}
	default:
		for _, id := range core.SortedKeys(StoreIn(c.Stores).Nats) {
			if n := StoreIn(c.Stores).Nats[id]; n.Region == c.Region && !n.Gone(c.Env, c.Now) {
				gws = append(gws, n)
			}
		}
	}
	if c.P["NatGatewayId"] != "" && gws[0].ID != c.P["NatGatewayId"] {
		gws = nil
	}
	var list []vpcsdk.SnatTableEntry
	for _, n := range gws {
		for _, x := range n.LiveSnat(c.Env, c.Now) {
			if !core.MatchParam(c.P, "SnatEntryId", x.ID) || !core.MatchParam(c.P, "SourceVSwitchId", x.SourceVSw) ||
				!core.MatchParam(c.P, "SourceCIDR", x.SourceNet) || !core.MatchParam(c.P, "SnatIp", x.SnatIP) ||
				!core.MatchParam(c.P, "SnatEntryName", x.Name) {
				continue
			}
			list = append(list, vpcsdk.SnatTableEntry{SnatEntryId: x.ID, SnatTableId: n.SnatTable, NatGatewayId: n.ID,
				SnatEntryName: x.Name, SourceVSwitchId: x.SourceVSw, SourceCIDR: x.SourceNet, SnatIp: x.SnatIP,
				Status: x.Status(c.Env, c.Now), EipAffinity: "0"})
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].SnatEntryId < list[j].SnatEntryId })
	lo, hi := core.PageBounds(len(list), number, size)
	resp := &vpcsdk.DescribeSnatTableEntriesResponse{RequestId: c.ReqID, PageNumber: number, PageSize: size, TotalCount: len(list)}
	resp.SnatTableEntries.SnatTableEntry = append([]vpcsdk.SnatTableEntry{}, list[lo:hi]...)
	return resp, nil
}

func deleteSnatEntry(c *core.Call) (any, *core.Error) {
	table, e := c.P.Required("SnatTableId")
	if e != nil {
		return nil, e
	}
	id, e := c.P.Required("SnatEntryId")
	if e != nil {
		return nil, e
	}
	n, e := natBySnatTable(c, table)
	if e != nil {
		return nil, e
	}
	for _, x := range n.LiveSnat(c.Env, c.Now) {
		if x.ID != id {
			continue
		}
		if st := x.Status(c.Env, c.Now); st != "Available" {
			return nil, core.Errf(400, "IncorretSnatEntryStatus", "The Specified SnatEntry %s is not stable status (%s), can not operation.", x.ID, st)
		}
		x.DeletedAt = c.Now.UnixNano()
		return &vpcsdk.DeleteSnatEntryResponse{RequestId: c.ReqID}, nil
	}
	return nil, core.Errf(404, "InvalidSnatEntryId.NotFound", "Specified SNAT entry %q does not exist.", id)
}
