package emulator

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

	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

func init() {
	register(versionVPC, "CreateSnatEntry", route{fn: netWrite(createSnatEntry), write: true, idem: true})
	register(versionVPC, "DescribeSnatTableEntries", route{fn: describeSnatTableEntries})
	register(versionVPC, "DeleteSnatEntry", route{fn: netWrite(deleteSnatEntry), write: true, idem: true})
}

// snatQuota is the vendor's default number of SNAT entries per SNAT table.
const snatQuota = 40

// natBySnatTable finds the live gateway owning an SNAT table.
func (c *call) natBySnatTable(table string) (*natGateway, *apiError) {
	for _, n := range c.s.db.Nats {
		if n.SnatTable == table && n.Region == c.region && !c.s.natGone(n, c.now) {
			return n, nil
		}
	}
	return nil, errf(404, "InvalidSnatTableId.NotFound", "Specified SNAT table %q does not exist.", table)
}

func createSnatEntry(c *call) (any, *apiError) {
	table, e := c.p.Required("SnatTableId")
	if e != nil {
		return nil, e
	}
	n, e := c.natBySnatTable(table)
	if e != nil {
		return nil, e
	}
	if st := c.s.natStatus(n, c.now); st != "Available" {
		return nil, errf(400, "IncorrectStatus.NatGateway", "NAT gateway %s is %s; SNAT entries can be added once it is Available.", n.ID, st)
	}
	snatIP, e := c.p.Required("SnatIp")
	if e != nil {
		return nil, e
	}
	bound := map[string]*eipRec{}
	for _, x := range c.s.natEIPs(n) {
		bound[x.IP] = x
	}
	ips := strings.Split(snatIP, ",")
	for _, ip := range ips {
		if _, err := netip.ParseAddr(ip); err != nil {
			return nil, errf(400, "InvalidSnatIp.Malformed", "The specified SnatIp %q is not a valid IP address.", ip)
		}
		x := bound[ip]
		if x == nil {
			return nil, errf(404, "InvalidSnatIp.NotFound", "Specified SnatIp %s does not found on the NAT Gateway %s: associate the EIP with it first.", ip, n.ID)
		}
		if st := c.s.eipStatus(x, c.now); st != "InUse" {
			return nil, errEipStatus(x, st, "InUse")
		}
	}
	vswID, cidr := c.p["SourceVSwitchId"], c.p["SourceCIDR"]
	switch {
	case vswID == "" && cidr == "":
		return nil, errMissing("SourceVSwitchId")
	case vswID != "" && cidr != "":
		return nil, errf(400, "INVALID_PARAMETER", "The parameter invalid: give SourceVSwitchId or SourceCIDR, not both.")
	}
	src := cidr
	if vswID != "" {
		sw := c.s.db.network().VSwitches[vswID]
		if sw == nil || sw.Region != c.region {
			return nil, errf(404, "InvalidVSwitchId.NotFound", "The specified virtual switch %q does not exists.", vswID)
		}
		if sw.VpcID != n.VpcID {
			return nil, errf(400, "INVALID_PARAMETER", "The parameter invalid: vSwitch %s is in VPC %s, NAT gateway %s in VPC %s.", sw.ID, sw.VpcID, n.ID, n.VpcID)
		}
		src = sw.CIDR
	} else if p, err := netip.ParsePrefix(cidr); err != nil || !p.Addr().Is4() || p.Masked() != p {
		return nil, errf(400, "INVALID_PARAMETER", "The parameter invalid: SourceCIDR %q is not an IPv4 CIDR block.", cidr)
	}
	live := c.s.liveSnat(n, c.now)
	srcPfx := netip.MustParsePrefix(src)
	for _, x := range live {
		if vswID != "" && x.SourceVSw == vswID || x.SourceNet == src {
			return nil, errf(400, "Forbidden.SourceVSwitchId.Duplicated", "The specified SourceCIDR is duplicated: SNAT entry %s already translates %s.", x.ID, src)
		}
		if netip.MustParsePrefix(x.SourceNet).Overlaps(srcPfx) && (vswID == "" || x.SourceVSw == "") {
			return nil, errf(400, "OperationUnsupported.CidrConflict", "The specified CIDR block %s conflicts with SNAT entry %s (%s).", src, x.ID, x.SourceNet)
		}
	}
	if len(live) >= snatQuota {
		return nil, errf(400, "Forbidden.SnatEntryCountLimited", "SNAT entry in the specified SNAT table %s reach its limit of %d.", table, snatQuota)
	}
	if name := c.p["SnatEntryName"]; name != "" && (len(name) < 2 || len(name) > 128) {
		return nil, errf(400, "InvalidParameter.Name.Malformed", "The specified Name %q is not valid: 2-128 characters.", name)
	}
	x := &snatEntry{ID: c.s.db.newID("snat"), Name: c.p["SnatEntryName"], SourceVSw: vswID, SourceNet: src,
		SnatIP: snatIP, Created: c.now.UnixNano()}
	n.Snat = append(n.Snat, x)
	return &vpc.CreateSnatEntryResponse{RequestId: c.reqID, SnatEntryId: x.ID}, nil
}

func describeSnatTableEntries(c *call) (any, *apiError) {
	number, size, e := c.page(50)
	if e != nil {
		return nil, e
	}
	var gws []*natGateway
	switch {
	case c.p["SnatTableId"] != "":
		n, e := c.natBySnatTable(c.p["SnatTableId"])
		if e != nil {
			return nil, e
		}
		gws = []*natGateway{n}
	case c.p["NatGatewayId"] != "":
		n, e := c.findNat()
		if e != nil {
			return nil, e
		}
		gws = []*natGateway{n}
	default:
		for _, id := range sortedKeys(c.s.db.Nats) {
			if n := c.s.db.Nats[id]; n.Region == c.region && !c.s.natGone(n, c.now) {
				gws = append(gws, n)
			}
		}
	}
	if c.p["NatGatewayId"] != "" && gws[0].ID != c.p["NatGatewayId"] {
		gws = nil
	}
	var list []vpc.SnatTableEntry
	for _, n := range gws {
		for _, x := range c.s.liveSnat(n, c.now) {
			if !matchParam(c.p, "SnatEntryId", x.ID) || !matchParam(c.p, "SourceVSwitchId", x.SourceVSw) ||
				!matchParam(c.p, "SourceCIDR", x.SourceNet) || !matchParam(c.p, "SnatIp", x.SnatIP) ||
				!matchParam(c.p, "SnatEntryName", x.Name) {
				continue
			}
			list = append(list, vpc.SnatTableEntry{SnatEntryId: x.ID, SnatTableId: n.SnatTable, NatGatewayId: n.ID,
				SnatEntryName: x.Name, SourceVSwitchId: x.SourceVSw, SourceCIDR: x.SourceNet, SnatIp: x.SnatIP,
				Status: c.s.snatStatus(x, c.now), EipAffinity: "0"})
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].SnatEntryId < list[j].SnatEntryId })
	lo, hi := pageBounds(len(list), number, size)
	resp := &vpc.DescribeSnatTableEntriesResponse{RequestId: c.reqID, PageNumber: number, PageSize: size, TotalCount: len(list)}
	resp.SnatTableEntries.SnatTableEntry = append([]vpc.SnatTableEntry{}, list[lo:hi]...)
	return resp, nil
}

func deleteSnatEntry(c *call) (any, *apiError) {
	table, e := c.p.Required("SnatTableId")
	if e != nil {
		return nil, e
	}
	id, e := c.p.Required("SnatEntryId")
	if e != nil {
		return nil, e
	}
	n, e := c.natBySnatTable(table)
	if e != nil {
		return nil, e
	}
	for _, x := range c.s.liveSnat(n, c.now) {
		if x.ID != id {
			continue
		}
		if st := c.s.snatStatus(x, c.now); st != "Available" {
			return nil, errf(400, "IncorretSnatEntryStatus", "The Specified SnatEntry %s is not stable status (%s), can not operation.", x.ID, st)
		}
		x.DeletedAt = c.now.UnixNano()
		return &vpc.DeleteSnatEntryResponse{RequestId: c.reqID}, nil
	}
	return nil, errf(404, "InvalidSnatEntryId.NotFound", "Specified SNAT entry %q does not exist.", id)
}
