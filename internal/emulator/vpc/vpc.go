package vpc

import (
	"cmp"
	"net/netip"
	"sort"

	vpcsdk "github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// Version is the VPC API version the emulator serves.
const Version = "2016-04-28"

func init() {
	core.Register(Version, "CreateVpc", core.Route{Fn: createVpc, Write: true, Idem: true})
	core.Register(Version, "DescribeVpcs", core.Route{Fn: describeVpcs})
	core.Register(Version, "DeleteVpc", core.Route{Fn: deleteVpc, Write: true, RegionOptional: true})
	core.Register(Version, "ModifyVpcAttribute", core.Route{Fn: modifyVpcAttribute, Write: true, RegionOptional: true})
	core.Register(Version, "CreateVSwitch", core.Route{Fn: createVSwitch, Write: true, Idem: true, RegionOptional: true})
	core.Register(Version, "DescribeVSwitches", core.Route{Fn: describeVSwitches, RegionOptional: true})
	core.Register(Version, "DeleteVSwitch", core.Route{Fn: deleteVSwitch, Write: true, RegionOptional: true})
	core.Register(Version, "ModifyVSwitchAttribute", core.Route{Fn: modifyVSwitchAttribute, Write: true, RegionOptional: true})
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

func parseCIDR(name, v string) (netip.Prefix, *core.Error) {
	p, err := netip.ParsePrefix(v)
	if err != nil || !p.Addr().Is4() {
		return netip.Prefix{}, core.Errf(400, "InvalidCidrBlock.Malformed", "Specified %s %q is not a valid IPv4 CIDR block.", name, v)
	}
	if p.Masked() != p {
		return netip.Prefix{}, core.Errf(400, "InvalidCidrBlock.Malformed", "Specified %s %q has host bits set; did you mean %s?", name, v, p.Masked())
	}
	return p, nil
}

func createVpc(c *core.Call) (any, *core.Error) {
	cidr := cmp.Or(c.P["CidrBlock"], "172.16.0.0/12")
	pfx, e := parseCIDR("CidrBlock", cidr)
	if e != nil {
		return nil, e
	}
	ok := false
	for _, r := range privateRanges {
		ok = ok || prefixContains(r, pfx)
	}
	if !ok || pfx.Bits() > 28 {
		return nil, core.Errf(400, "InvalidCidrBlock.Malformed", "CidrBlock %s must be inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 with a mask of /8-/28.", cidr)
	}
	tags, e := c.P.Tags("Tag")
	if e != nil {
		return nil, e
	}
	v := &VPC{ID: c.Env.NewID("vpc"), Region: c.Region, Name: c.P["VpcName"], Desc: c.P["Description"], CIDR: cidr,
		Created: c.Now.UnixNano(), Tags: tags}
	v.VRouter = c.Env.NewID("vrt")
	v.RouteTable = c.Env.NewID("vtb")
	StoreIn(c.Stores).Vpcs[v.ID] = v
	return &vpcsdk.CreateVpcResponse{RequestId: c.ReqID, VpcId: v.ID, VRouterId: v.VRouter, RouteTableId: v.RouteTable,
		ResourceGroupId: core.DefaultResourceGroup}, nil
}

func describeVpcs(c *core.Call) (any, *core.Error) {
	q, e := core.ReadListQuery(c.P, "VpcId", 50)
	if e != nil {
		return nil, e
	}
	var list []*VPC
	for _, v := range StoreIn(c.Stores).Vpcs {
		if v.Region != c.Region || (c.P["VpcName"] != "" && v.Name != c.P["VpcName"]) || !q.Match(v.ID, v.Tags) {
			continue
		}
		list = append(list, v)
	}
	page := core.PageOf(q, list, func(x *VPC) string { return x.ID })
	resp := &vpcsdk.DescribeVpcsResponse{RequestId: c.ReqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(list)}
	resp.Vpcs.Vpc = []vpcsdk.Vpc{}
	for _, v := range page {
		out := vpcsdk.Vpc{VpcId: v.ID, RegionId: v.Region, VpcName: v.Name, Description: v.Desc, CidrBlock: v.CIDR,
			VRouterId: v.VRouter, Status: c.Env.AsyncStatus(v.Created, c.Now, "Pending", "Available"),
			CreationTime: core.FormatTime(v.Created), ResourceGroupId: core.DefaultResourceGroup}
		out.VSwitchIds.VSwitchId = []string{}
		for _, sw := range StoreIn(c.Stores).VSwitches {
			if sw.VpcID == v.ID {
				out.VSwitchIds.VSwitchId = append(out.VSwitchIds.VSwitchId, sw.ID)
			}
		}
		sort.Strings(out.VSwitchIds.VSwitchId)
		out.RouterTableIds.RouterTableIds = []string{v.RouteTable}
		out.Tags.Tag = []vpcsdk.Tag{}
		for _, t := range v.Tags {
			out.Tags.Tag = append(out.Tags.Tag, vpcsdk.Tag{Key: t.K, Value: t.V})
		}
		resp.Vpcs.Vpc = append(resp.Vpcs.Vpc, out)
	}
	return resp, nil
}

func findVpc(c *core.Call) (*VPC, *core.Error) {
	id, e := c.P.Required("VpcId")
	if e != nil {
		return nil, e
	}
	v := StoreIn(c.Stores).Vpcs[id]
	if v == nil || v.Region != c.Region {
		return nil, core.ErrNotFound("InvalidVpcId.NotFound", id)
	}
	return v, nil
}

func deleteVpc(c *core.Call) (any, *core.Error) {
	v, e := findVpc(c)
	if e != nil {
		return nil, e
	}
	if e := natVpcDependency(c, v.ID); e != nil {
		return nil, e
	}
	// The vendor names what still holds the VPC in a fixed order: the products above VPC
	// register their checks by rank, and the VPC's own vSwitches are one of them
	// (RankVSwitches: after the instances, which hold the vSwitches too).
	if e := VpcDependency(c, v.ID); e != nil {
		return nil, e
	}
	delete(StoreIn(c.Stores).Vpcs, v.ID)
	return &vpcsdk.DeleteVpcResponse{RequestId: c.ReqID}, nil
}

// vswitchVpcDependency is DeleteVpc's check for the VPC's own vSwitches.
func vswitchVpcDependency(c *core.Call, vpcID string) *core.Error {
	if sw := firstSorted(StoreIn(c.Stores).VSwitches, func(sw *VSwitch) bool { return sw.VpcID == vpcID }); sw != nil {
		return core.Errf(400, "DependencyViolation.VSwitch", "VPC %s still has vSwitch %s; delete it first.", vpcID, sw.ID)
	}
	return nil
}

func init() { RegisterDependent(Dependent{Rank: RankVSwitches, Vpc: vswitchVpcDependency}) }

func modifyVpcAttribute(c *core.Call) (any, *core.Error) {
	v, e := findVpc(c)
	if e != nil {
		return nil, e
	}
	if _, ok := c.P["VpcName"]; ok {
		v.Name = c.P["VpcName"]
	}
	if _, ok := c.P["Description"]; ok {
		v.Desc = c.P["Description"]
	}
	return &vpcsdk.ModifyVpcAttributeResponse{RequestId: c.ReqID}, nil
}

func createVSwitch(c *core.Call) (any, *core.Error) {
	v, e := findVpc(c)
	if e != nil {
		return nil, e
	}
	if c.Env.AsyncStatus(v.Created, c.Now, "Pending", "Available") != "Available" {
		return nil, core.Errf(400, "IncorrectVpcStatus", "The current status of VPC %s (Pending) does not support this operation; wait until it is Available.", v.ID)
	}
	zone, e := c.P.Required("ZoneId")
	if e != nil {
		return nil, e
	}
	if !c.Env.ZoneExists(c.Region, zone) {
		return nil, core.ErrNotFound("InvalidZoneId.NotFound", zone)
	}
	cidrS, e := c.P.Required("CidrBlock")
	if e != nil {
		return nil, e
	}
	pfx, e := parseCIDR("CidrBlock", cidrS)
	if e != nil {
		return nil, e
	}
	vpcPfx := netip.MustParsePrefix(v.CIDR)
	if pfx.Bits() < 16 || pfx.Bits() > 29 {
		return nil, core.Errf(400, "InvalidCidrBlock.Malformed", "CidrBlock %s: the mask must be /16 to /29.", cidrS)
	}
	if !prefixContains(vpcPfx, pfx) {
		return nil, core.Errf(400, "InvalidCidrBlock.Malformed", "CidrBlock %s is not inside the VPC's CIDR %s.", cidrS, v.CIDR)
	}
	n := 0
	for _, sw := range StoreIn(c.Stores).VSwitches {
		if sw.VpcID != v.ID {
			continue
		}
		n++
		if netip.MustParsePrefix(sw.CIDR).Overlaps(pfx) {
			return nil, core.Errf(400, "InvalidCidrBlock.Overlapped", "CidrBlock %s overlaps vSwitch %s (%s).", cidrS, sw.ID, sw.CIDR)
		}
	}
	if n >= 150 {
		return nil, core.Errf(400, "QuotaExceeded.VSwitch", "VPC %s already has 150 vSwitches.", v.ID)
	}
	tags, e := c.P.Tags("Tag")
	if e != nil {
		return nil, e
	}
	sw := &VSwitch{ID: c.Env.NewID("vsw"), Region: c.Region, VpcID: v.ID, Zone: zone, CIDR: cidrS,
		Name: c.P["VSwitchName"], Desc: c.P["Description"], Created: c.Now.UnixNano(), Tags: tags}
	StoreIn(c.Stores).VSwitches[sw.ID] = sw
	return &vpcsdk.CreateVSwitchResponse{RequestId: c.ReqID, VSwitchId: sw.ID}, nil
}

func describeVSwitches(c *core.Call) (any, *core.Error) {
	q, e := core.ReadListQuery(c.P, "VSwitchId", 50)
	if e != nil {
		return nil, e
	}
	var list []*VSwitch
	for _, sw := range StoreIn(c.Stores).VSwitches {
		if sw.Region != c.Region || (c.P["VpcId"] != "" && sw.VpcID != c.P["VpcId"]) || (c.P["ZoneId"] != "" && sw.Zone != c.P["ZoneId"]) ||
			(c.P["VSwitchName"] != "" && sw.Name != c.P["VSwitchName"]) || !q.Match(sw.ID, sw.Tags) {
			continue
		}
		list = append(list, sw)
	}
	page := core.PageOf(q, list, func(x *VSwitch) string { return x.ID })
	resp := &vpcsdk.DescribeVSwitchesResponse{RequestId: c.ReqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(list)}
	resp.VSwitches.VSwitch = []vpcsdk.VSwitch{}
	for _, sw := range page {
		used := instances.InVSwitch(c, sw.ID)
		out := vpcsdk.VSwitch{VSwitchId: sw.ID, VpcId: sw.VpcID, ZoneId: sw.Zone, CidrBlock: sw.CIDR, VSwitchName: sw.Name,
			Description: sw.Desc, Status: c.Env.AsyncStatus(sw.Created, c.Now, "Pending", "Available"),
			CreationTime: core.FormatTime(sw.Created), ResourceGroupId: core.DefaultResourceGroup,
			AvailableIpAddressCount: int64(vswitchCapacity(sw.CIDR)) - int64(used)}
		out.Tags.Tag = []vpcsdk.Tag{}
		for _, t := range sw.Tags {
			out.Tags.Tag = append(out.Tags.Tag, vpcsdk.Tag{Key: t.K, Value: t.V})
		}
		resp.VSwitches.VSwitch = append(resp.VSwitches.VSwitch, out)
	}
	return resp, nil
}

func findVSwitch(c *core.Call) (*VSwitch, *core.Error) {
	id, e := c.P.Required("VSwitchId")
	if e != nil {
		return nil, e
	}
	sw := StoreIn(c.Stores).VSwitches[id]
	if sw == nil || sw.Region != c.Region {
		return nil, core.ErrNotFound("InvalidVSwitchId.NotFound", id)
	}
	return sw, nil
}

func deleteVSwitch(c *core.Call) (any, *core.Error) {
	sw, e := findVSwitch(c)
	if e != nil {
		return nil, e
	}
	if e := natVSwitchDependency(c, sw.ID); e != nil {
		return nil, e
	}
	if e := VSwitchDependency(c, sw.ID); e != nil {
		return nil, e
	}
	delete(StoreIn(c.Stores).VSwitches, sw.ID)
	return &vpcsdk.DeleteVSwitchResponse{RequestId: c.ReqID}, nil
}

func modifyVSwitchAttribute(c *core.Call) (any, *core.Error) {
	sw, e := findVSwitch(c)
	if e != nil {
		return nil, e
	}
	if _, ok := c.P["VSwitchName"]; ok {
		sw.Name = c.P["VSwitchName"]
	}
	if _, ok := c.P["Description"]; ok {
		sw.Desc = c.P["Description"]
	}
	return &vpcsdk.ModifyVSwitchAttributeResponse{RequestId: c.ReqID}, nil
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
