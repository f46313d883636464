package emulator

import (
	"net/netip"
	"sort"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

func init() {
	register(versionVPC, "CreateVpc", route{fn: createVpc, write: true, idem: true})
	register(versionVPC, "DescribeVpcs", route{fn: describeVpcs})
	register(versionVPC, "DeleteVpc", route{fn: deleteVpc, write: true, regionOptional: true})
	register(versionVPC, "ModifyVpcAttribute", route{fn: modifyVpcAttribute, write: true, regionOptional: true})
	register(versionVPC, "CreateVSwitch", route{fn: createVSwitch, write: true, idem: true, regionOptional: true})
	register(versionVPC, "DescribeVSwitches", route{fn: describeVSwitches, regionOptional: true})
	register(versionVPC, "DeleteVSwitch", route{fn: deleteVSwitch, write: true, regionOptional: true})
	register(versionVPC, "ModifyVSwitchAttribute", route{fn: modifyVSwitchAttribute, write: true, regionOptional: true})
}

// privateRanges are the blocks a VPC CIDR must lie in.
var privateRanges = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
}

func prefixContains(outer, inner netip.Prefix) bool {
	return outer.Bits() <= inner.Bits() && outer.Contains(inner.Addr())
}

func parseCIDR(name, v string) (netip.Prefix, *apiError) {
	p, err := netip.ParsePrefix(v)
	if err != nil || !p.Addr().Is4() {
		return netip.Prefix{}, errf(400, "InvalidCidrBlock.Malformed", "Specified %s %q is not a valid IPv4 CIDR block.", name, v)
	}
	if p.Masked() != p {
		return netip.Prefix{}, errf(400, "InvalidCidrBlock.Malformed", "Specified %s %q has host bits set; did you mean %s?", name, v, p.Masked())
	}
	return p, nil
}

func createVpc(c *call) (any, *apiError) {
	cidr := orDefault(c.p["CidrBlock"], "172.16.0.0/12")
	pfx, e := parseCIDR("CidrBlock", cidr)
	if e != nil {
		return nil, e
	}
	ok := false
	for _, r := range privateRanges {
		ok = ok || prefixContains(r, pfx)
	}
	if !ok || pfx.Bits() > 28 {
		return nil, errf(400, "InvalidCidrBlock.Malformed", "CidrBlock %s must be inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 with a mask of /8-/28.", cidr)
	}
	tags, e := c.p.Tags("Tag")
	if e != nil {
		return nil, e
	}
	d := c.s.db
	v := &vpcRec{ID: d.newID("vpc"), Region: c.region, Name: c.p["VpcName"], Desc: c.p["Description"], CIDR: cidr,
		Created: c.now.UnixNano(), Tags: tags}
	v.VRouter = d.newID("vrt")
	v.RouteTable = d.newID("vtb")
	d.network().Vpcs[v.ID] = v
	return &vpc.CreateVpcResponse{RequestId: c.reqID, VpcId: v.ID, VRouterId: v.VRouter, RouteTableId: v.RouteTable,
		ResourceGroupId: defaultResourceGroup}, nil
}

const defaultResourceGroup = core.DefaultResourceGroup

func describeVpcs(c *call) (any, *apiError) {
	q, e := c.listQuery("VpcId", 50)
	if e != nil {
		return nil, e
	}
	d := c.s.db
	var list []*vpcRec
	for _, v := range d.network().Vpcs {
		if v.Region != c.region || (c.p["VpcName"] != "" && v.Name != c.p["VpcName"]) || !q.Match(v.ID, v.Tags) {
			continue
		}
		list = append(list, v)
	}
	page := pageOf(q, list, func(x *vpcRec) string { return x.ID })
	resp := &vpc.DescribeVpcsResponse{RequestId: c.reqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(list)}
	resp.Vpcs.Vpc = []vpc.Vpc{}
	for _, v := range page {
		out := vpc.Vpc{VpcId: v.ID, RegionId: v.Region, VpcName: v.Name, Description: v.Desc, CidrBlock: v.CIDR,
			VRouterId: v.VRouter, Status: c.s.asyncStatus(v.Created, c.now, "Pending", "Available"),
			CreationTime: fmtTime(v.Created), ResourceGroupId: defaultResourceGroup}
		out.VSwitchIds.VSwitchId = []string{}
		for _, sw := range d.network().VSwitches {
			if sw.VpcID == v.ID {
				out.VSwitchIds.VSwitchId = append(out.VSwitchIds.VSwitchId, sw.ID)
			}
		}
		sort.Strings(out.VSwitchIds.VSwitchId)
		out.RouterTableIds.RouterTableIds = []string{v.RouteTable}
		out.Tags.Tag = []vpc.Tag{}
		for _, t := range v.Tags {
			out.Tags.Tag = append(out.Tags.Tag, vpc.Tag{Key: t.K, Value: t.V})
		}
		resp.Vpcs.Vpc = append(resp.Vpcs.Vpc, out)
	}
	return resp, nil
}

func (c *call) findVpc() (*vpcRec, *apiError) {
	id, e := c.p.Required("VpcId")
	if e != nil {
		return nil, e
	}
	v := c.s.db.network().Vpcs[id]
	if v == nil || v.Region != c.region {
		return nil, errNotFound("InvalidVpcId.NotFound", id)
	}
	return v, nil
}

func deleteVpc(c *call) (any, *apiError) {
	v, e := c.findVpc()
	if e != nil {
		return nil, e
	}
	if e := c.netVpcDependency(v.ID); e != nil {
		return nil, e
	}
	d := c.s.db
	// The vendor names what still holds the VPC: DependencyViolation.Instance, .VSwitch or
	// .SecurityGroup (instances first: they hold the vSwitches and groups too).
	for _, in := range d.order {
		if in.VpcID == v.ID {
			return nil, errf(400, "DependencyViolation.Instance", "VPC %s still has instance %s; release it first.", v.ID, in.ID)
		}
	}
	if sw := firstSorted(d.network().VSwitches, func(sw *vswitchRec) bool { return sw.VpcID == v.ID }); sw != nil {
		return nil, errf(400, "DependencyViolation.VSwitch", "VPC %s still has vSwitch %s; delete it first.", v.ID, sw.ID)
	}
	if g := firstSorted(d.SGs, func(g *securityGroup) bool { return g.VpcID == v.ID }); g != nil {
		return nil, errf(400, "DependencyViolation.SecurityGroup", "VPC %s still has security group %s; delete it first.", v.ID, g.ID)
	}
	if e := emuvpc.VpcDependency(d.stores, v.ID); e != nil {
		return nil, e
	}
	delete(d.network().Vpcs, v.ID)
	return &vpc.DeleteVpcResponse{RequestId: c.reqID}, nil
}

func modifyVpcAttribute(c *call) (any, *apiError) {
	v, e := c.findVpc()
	if e != nil {
		return nil, e
	}
	if _, ok := c.p["VpcName"]; ok {
		v.Name = c.p["VpcName"]
	}
	if _, ok := c.p["Description"]; ok {
		v.Desc = c.p["Description"]
	}
	return &vpc.ModifyVpcAttributeResponse{RequestId: c.reqID}, nil
}

func createVSwitch(c *call) (any, *apiError) {
	v, e := c.findVpc()
	if e != nil {
		return nil, e
	}
	if c.s.asyncStatus(v.Created, c.now, "Pending", "Available") != "Available" {
		return nil, errf(400, "IncorrectVpcStatus", "The current status of VPC %s (Pending) does not support this operation; wait until it is Available.", v.ID)
	}
	zone, e := c.p.Required("ZoneId")
	if e != nil {
		return nil, e
	}
	if !c.s.zoneExists(c.region, zone) {
		return nil, errNotFound("InvalidZoneId.NotFound", zone)
	}
	cidrS, e := c.p.Required("CidrBlock")
	if e != nil {
		return nil, e
	}
	pfx, e := parseCIDR("CidrBlock", cidrS)
	if e != nil {
		return nil, e
	}
	vpcPfx := netip.MustParsePrefix(v.CIDR)
	if pfx.Bits() < 16 || pfx.Bits() > 29 {
		return nil, errf(400, "InvalidCidrBlock.Malformed", "CidrBlock %s: the mask must be /16 to /29.", cidrS)
	}
	if !prefixContains(vpcPfx, pfx) {
		return nil, errf(400, "InvalidCidrBlock.Malformed", "CidrBlock %s is not inside the VPC's CIDR %s.", cidrS, v.CIDR)
	}
	d := c.s.db
	n := 0
	for _, sw := range d.network().VSwitches {
		if sw.VpcID != v.ID {
			continue
		}
		n++
		if netip.MustParsePrefix(sw.CIDR).Overlaps(pfx) {
			return nil, errf(400, "InvalidCidrBlock.Overlapped", "CidrBlock %s overlaps vSwitch %s (%s).", cidrS, sw.ID, sw.CIDR)
		}
	}
	if n >= 150 {
		return nil, errf(400, "QuotaExceeded.VSwitch", "VPC %s already has 150 vSwitches.", v.ID)
	}
	tags, e := c.p.Tags("Tag")
	if e != nil {
		return nil, e
	}
	sw := &vswitchRec{ID: d.newID("vsw"), Region: c.region, VpcID: v.ID, Zone: zone, CIDR: cidrS,
		Name: c.p["VSwitchName"], Desc: c.p["Description"], Created: c.now.UnixNano(), Tags: tags}
	d.network().VSwitches[sw.ID] = sw
	return &vpc.CreateVSwitchResponse{RequestId: c.reqID, VSwitchId: sw.ID}, nil
}

func describeVSwitches(c *call) (any, *apiError) {
	q, e := c.listQuery("VSwitchId", 50)
	if e != nil {
		return nil, e
	}
	d := c.s.db
	var list []*vswitchRec
	for _, sw := range d.network().VSwitches {
		if sw.Region != c.region || (c.p["VpcId"] != "" && sw.VpcID != c.p["VpcId"]) || (c.p["ZoneId"] != "" && sw.Zone != c.p["ZoneId"]) ||
			(c.p["VSwitchName"] != "" && sw.Name != c.p["VSwitchName"]) || !q.Match(sw.ID, sw.Tags) {
			continue
		}
		list = append(list, sw)
	}
	page := pageOf(q, list, func(x *vswitchRec) string { return x.ID })
	resp := &vpc.DescribeVSwitchesResponse{RequestId: c.reqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(list)}
	resp.VSwitches.VSwitch = []vpc.VSwitch{}
	for _, sw := range page {
		used := len(d.byVSwitch[sw.ID])
		out := vpc.VSwitch{VSwitchId: sw.ID, VpcId: sw.VpcID, ZoneId: sw.Zone, CidrBlock: sw.CIDR, VSwitchName: sw.Name,
			Description: sw.Desc, Status: c.s.asyncStatus(sw.Created, c.now, "Pending", "Available"),
			CreationTime: fmtTime(sw.Created), ResourceGroupId: defaultResourceGroup,
			AvailableIpAddressCount: int64(vswitchCapacity(sw.CIDR)) - int64(used)}
		out.Tags.Tag = []vpc.Tag{}
		for _, t := range sw.Tags {
			out.Tags.Tag = append(out.Tags.Tag, vpc.Tag{Key: t.K, Value: t.V})
		}
		resp.VSwitches.VSwitch = append(resp.VSwitches.VSwitch, out)
	}
	return resp, nil
}

func (c *call) findVSwitch() (*vswitchRec, *apiError) {
	id, e := c.p.Required("VSwitchId")
	if e != nil {
		return nil, e
	}
	sw := c.s.db.network().VSwitches[id]
	if sw == nil || sw.Region != c.region {
		return nil, errNotFound("InvalidVSwitchId.NotFound", id)
	}
	return sw, nil
}

func deleteVSwitch(c *call) (any, *apiError) {
	sw, e := c.findVSwitch()
	if e != nil {
		return nil, e
	}
	if e := c.netVSwitchDependency(sw.ID); e != nil {
		return nil, e
	}
	d := c.s.db
	if n := len(d.byVSwitch[sw.ID]); n > 0 {
		return nil, errDependency("vSwitch %s still has %d instance(s); delete them first.", sw.ID, n)
	}
	if e := emuvpc.VSwitchDependency(d.stores, sw.ID); e != nil {
		return nil, e
	}
	delete(d.network().VSwitches, sw.ID)
	return &vpc.DeleteVSwitchResponse{RequestId: c.reqID}, nil
}

func modifyVSwitchAttribute(c *call) (any, *apiError) {
	sw, e := c.findVSwitch()
	if e != nil {
		return nil, e
	}
	if _, ok := c.p["VSwitchName"]; ok {
		sw.Name = c.p["VSwitchName"]
	}
	if _, ok := c.p["Description"]; ok {
		sw.Desc = c.p["Description"]
	}
	return &vpc.ModifyVSwitchAttributeResponse{RequestId: c.reqID}, nil
}

// firstSorted answers the entry with the smallest id that matches (nil when none does), so an
// error naming one of several dependencies names the same one every time.
func firstSorted[T any](m map[string]T, match func(T) bool) (out T) {
	best := ""
	for id, v := range m {
		if match(v) && (best == "" || id < best) {
			best, out = id, v
		}
	}
	return out
}
