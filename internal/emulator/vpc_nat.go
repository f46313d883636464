package emulator

// NAT gateways (VPC API 2016-04-28), enhanced type only: the vendor sells no
// other kind any more. Semantics and error codes follow
//   https://help.aliyun.com/en/nat-gateway/api-createnatgateway
//   https://alibabacloud.com/help/en/nat-gateway/developer-reference/api-vpc-2016-04-28-deletenatgateway-natgws
//   https://alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-deletevpc (DependencyViolation.NatGateway)
// CreateNatGateway is asynchronous (Creating -> Available), as is
// DeleteNatGateway (Deleting -> gone); while either runs only queries work.

import (
	"strings"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

func init() {
	register(versionVPC, "CreateNatGateway", route{fn: netWrite(createNatGateway), write: true, idem: true})
	register(versionVPC, "DescribeNatGateways", route{fn: describeNatGateways})
	register(versionVPC, "DeleteNatGateway", route{fn: netWrite(deleteNatGateway), write: true})
	register(versionVPC, "ModifyNatGatewayAttribute", route{fn: netWrite(modifyNatGatewayAttribute), write: true})
}

// natMaxBandwidth is what DescribeNatGateways reports for an enhanced gateway (Mbit/s).
const natMaxBandwidth = 5120

func createNatGateway(c *call) (any, *apiError) {
	v, e := c.findVpc()
	if e != nil {
		return nil, e
	}
	if c.s.asyncStatus(v.Created, c.now, "Pending", "Available") != "Available" {
		return nil, errf(400, "VpcStatusError", "The Vpc is creating: VPC %s is still Pending.", v.ID)
	}
	natType := orDefault(c.p["NatType"], "Enhanced")
	if e := oneOf("NatType", natType, "Enhanced"); e != nil {
		return nil, e
	}
	sw, e := c.natVSwitch(v)
	if e != nil {
		return nil, e
	}
	if sw.VpcID != v.ID {
		return nil, errInvalid("VSwitchId", "vSwitch %s belongs to VPC %s, not %s", sw.ID, sw.VpcID, v.ID)
	}
	if c.s.asyncStatus(sw.Created, c.now, "Pending", "Available") != "Available" {
		return nil, errf(400, "VswitchStatusError", "The VSwitch is creating: vSwitch %s is still Pending.", sw.ID)
	}
	netType := orDefault(c.p["NetworkType"], "internet")
	if e := oneOf("NetworkType", netType, "internet", "intranet"); e != nil {
		return nil, e
	}
	charge := orDefault(c.p["InternetChargeType"], "PayByLcu")
	if e := oneOf("InternetChargeType", charge, "PayByLcu", "PayBySpec"); e != nil {
		return nil, e
	}
	// Subscription NAT gateways are no longer sold.
	if e := oneOf("InstanceChargeType", orDefault(c.p["InstanceChargeType"], "PostPaid"), "PostPaid"); e != nil {
		return nil, e
	}
	bind := orDefault(c.p["EipBindMode"], "MULTI_BINDED")
	if e := oneOf("EipBindMode", bind, "MULTI_BINDED", "NAT"); e != nil {
		return nil, e
	}
	if name := c.p["Name"]; name != "" && (len(name) < 2 || len(name) > 128) {
		return nil, errf(400, "InvalidParameter.Name.Malformed", "The specified Name is not valid: %q must be 2-128 characters.", name)
	}
	tags, e := c.p.Tags("Tag")
	if e != nil {
		return nil, e
	}
	d := c.s.db
	n := &natGateway{ID: d.newID("ngw"), Region: c.region, VpcID: v.ID, VSwitchID: sw.ID, Zone: sw.Zone,
		Name: c.p["Name"], Desc: c.p["Description"], NetworkType: netType, ChargeType: charge, EipBindMode: bind,
		PrivateIP: allocIP(sw), Created: c.now.UnixNano(), Tags: tags}
	n.SnatTable, n.ForwardTable, n.FullNatTable = d.newID("stb"), d.newID("ftb"), d.newID("fulltb")
	d.Nats[n.ID] = n
	resp := &vpc.CreateNatGatewayResponse{RequestId: c.reqID, NatGatewayId: n.ID}
	resp.SnatTableIds.SnatTableId = []string{n.SnatTable}
	resp.ForwardTableIds.ForwardTableId = []string{n.ForwardTable}
	resp.FullNatTableIds.FullNatTableId = []string{n.FullNatTable}
	resp.BandwidthPackageIds.BandwidthPackageId = []string{}
	return resp, nil
}

// natVSwitch is the vSwitch a new gateway takes its address from: VSwitchId,
// or, as the vendor does where none is given (its API model leaves VSwitchId
// optional), the VPC's first Available vSwitch. A VPC without one cannot hold
// a gateway, and the answer names the missing parameter.
func (c *call) natVSwitch(v *vpcRec) (*vswitchRec, *apiError) {
	if c.p["VSwitchId"] != "" {
		return c.findVSwitch()
	}
	for _, id := range sortedKeys(c.s.db.network().VSwitches) {
		sw := c.s.db.network().VSwitches[id]
		if sw.VpcID == v.ID && c.s.asyncStatus(sw.Created, c.now, "Pending", "Available") == "Available" {
			return sw, nil
		}
	}
	return nil, errf(400, "MissingParameter", "The input parameter \"VSwitchId\" that is mandatory for processing this request is not supplied: VPC %s has no Available vSwitch to choose.", v.ID)
}

// findNat reads NatGatewayId; a gateway whose deletion has settled is gone.
func (c *call) findNat() (*natGateway, *apiError) {
	id, e := c.p.Required("NatGatewayId")
	if e != nil {
		return nil, e
	}
	n := c.s.db.Nats[id]
	if n == nil || n.Region != c.region || c.s.natGone(n, c.now) {
		return nil, errf(404, "InvalidNatGatewayId.NotFound", "The specified NatGatewayId %q does not exist in our records.", id)
	}
	return n, nil
}

func describeNatGateways(c *call) (any, *apiError) {
	q, e := c.listQuery("", 50)
	if e != nil {
		return nil, e
	}
	// Ids come as NatGatewayIds.N and as one NatGatewayId.
	ids := c.p.List("NatGatewayIds")
	if v := c.p["NatGatewayId"]; v != "" {
		ids = append(ids, v)
	}
	if len(ids) > 0 {
		q.IDs = ids
	}
	d := c.s.db
	var list []*natGateway
	for _, n := range d.Nats {
		if n.Region != c.region || c.s.natGone(n, c.now) ||
			!matchParam(c.p, "VpcId", n.VpcID) || !matchParam(c.p, "VSwitchId", n.VSwitchID) ||
			!matchParam(c.p, "ZoneId", n.Zone) || !matchParam(c.p, "Name", n.Name) ||
			!matchParam(c.p, "NatType", "Enhanced") || !matchParam(c.p, "NetworkType", n.NetworkType) ||
			!matchParam(c.p, "Status", c.s.natStatus(n, c.now)) || !q.Match(n.ID, n.Tags) {
			continue
		}
		list = append(list, n)
	}
	page := pageOf(q, list, func(n *natGateway) string { return n.ID })
	resp := &vpc.DescribeNatGatewaysResponse{RequestId: c.reqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(list)}
	resp.NatGateways.NatGateway = []vpc.NatGateway{}
	for _, n := range page {
		resp.NatGateways.NatGateway = append(resp.NatGateways.NatGateway, c.natOut(n))
	}
	return resp, nil
}

// matchParam reports whether an optional filter parameter is absent or equal to have.

func (c *call) natOut(n *natGateway) vpc.NatGateway {
	out := vpc.NatGateway{NatGatewayId: n.ID, Name: n.Name, Description: n.Desc, VpcId: n.VpcID, NatType: "Enhanced",
		NetworkType: n.NetworkType, InstanceChargeType: "PostPaid", InternetChargeType: n.ChargeType,
		Status: c.s.natStatus(n, c.now), BusinessStatus: "Normal", CreationTime: fmtTime(n.Created), RegionId: n.Region,
		ResourceGroupId: defaultResourceGroup, EipBindMode: n.EipBindMode, IcmpReplyEnabled: true, PrivateLinkMode: "FullNat",
		NatGatewayPrivateInfo: vpc.NatGatewayPrivateInfo{VswitchId: n.VSwitchID, PrivateIpAddress: n.PrivateIP,
			IzNo: n.Zone, EniInstanceId: "eni-" + strings.TrimPrefix(n.ID, "ngw-"), EniType: "indirect",
			MaxBandwidth: natMaxBandwidth}}
	out.SnatTableIds.SnatTableId = []string{n.SnatTable}
	out.ForwardTableIds.ForwardTableId = []string{n.ForwardTable}
	out.FullNatTableIds.FullNatTableId = []string{n.FullNatTable}
	out.BandwidthPackageIds.BandwidthPackageId = []string{}
	snatIPs := map[string]bool{}
	for _, e := range c.s.liveSnat(n, c.now) {
		for _, ip := range strings.Split(e.SnatIP, ",") {
			snatIPs[ip] = true
		}
	}
	out.IpLists.IpList = []vpc.IpList{}
	for _, eip := range c.s.natEIPs(n) {
		use := "Idle"
		if snatIPs[eip.IP] {
			use = "UsedBySnatTable"
		}
		out.IpLists.IpList = append(out.IpLists.IpList, vpc.IpList{AllocationId: eip.ID, IpAddress: eip.IP,
			UsingStatus: use, SnatEntryEnabled: snatIPs[eip.IP]})
	}
	out.Tags.Tag = natTagList(n.Tags)
	return out
}

// natTagList writes a gateway's tags as the vendor's DescribeNatGateways model names them,
// TagKey/TagValue (its VPC, vSwitch and EIP models say Key/Value): the answer is pruned to the
// model, so tags under the other names would reach clients as empty objects.
func natTagList(ts []tag) []vpc.Tag {
	out := make([]vpc.Tag, 0, len(ts))
	for _, t := range ts {
		out = append(out, vpc.Tag{TagKey: t.K, TagValue: t.V})
	}
	return out
}

func vpcTagList(ts []tag) []vpc.Tag {
	out := make([]vpc.Tag, 0, len(ts))
	for _, t := range ts {
		out = append(out, vpc.Tag{Key: t.K, Value: t.V})
	}
	return out
}

// natEIPs lists the EIPs bound to a gateway, by id.
func (s *Server) natEIPs(n *natGateway) []*eipRec {
	var out []*eipRec
	for _, id := range sortedKeys(s.db.EIPs) {
		if e := s.db.EIPs[id]; e.Instance == n.ID && e.InstanceType == eipTargetNat {
			out = append(out, e)
		}
	}
	return out
}

func deleteNatGateway(c *call) (any, *apiError) {
	n, e := c.findNat()
	if e != nil {
		return nil, e
	}
	force, e := c.p.Bool("Force", false)
	if e != nil {
		return nil, e
	}
	// The vendor documents this code with status 404.
	if st := c.s.natStatus(n, c.now); st != "Available" {
		return nil, errf(404, "IncorrectStatus.NatGateway", "NAT gateway %s is %s; only an Available gateway can be deleted.", n.ID, st)
	}
	snat, eips := c.s.liveSnat(n, c.now), c.s.natEIPs(n)
	if !force {
		if len(snat) > 0 {
			return nil, errf(400, "DependencyViolation.SnatEntry", "The specified resource of NatGateway %s depends on SnatEntry %s, so the operation cannot be completed: delete the SNAT entries first or set Force=true.", n.ID, snat[0].ID)
		}
		if len(eips) > 0 {
			return nil, errf(400, "DependencyViolation.EIPS", "There are Eips on specified NatGateway %s (%s), please unbind it first or set Force=true.", n.ID, eips[0].ID)
		}
	}
	// Force: the SNAT entries go with the gateway and its EIPs are unbound.
	n.Snat = nil
	for _, eip := range eips {
		eip.Instance, eip.InstanceType, eip.AssocAt, eip.UnassocAt = "", "", 0, c.now.UnixNano()
	}
	n.DeletedAt = c.now.UnixNano()
	return &vpc.DeleteNatGatewayResponse{RequestId: c.reqID}, nil
}

// modifyNatGatewayAttribute changes Name, Description and EipBindMode of an
// Available gateway.
func modifyNatGatewayAttribute(c *call) (any, *apiError) {
	n, e := c.findNat()
	if e != nil {
		return nil, e
	}
	if st := c.s.natStatus(n, c.now); st != "Available" {
		return nil, errf(400, "IncorrectStatus.NatGateway", "NAT gateway %s is %s; only an Available gateway can be modified.", n.ID, st)
	}
	if name, ok := c.p["Name"]; ok && (len(name) < 2 || len(name) > 128) {
		return nil, errf(400, "InvalidParameter.Name.Malformed", "The specified Name is not valid: %q must be 2-128 characters.", name)
	}
	if v := c.p["EipBindMode"]; v != "" {
		if e := oneOf("EipBindMode", v, "MULTI_BINDED", "NAT"); e != nil {
			return nil, e
		}
		n.EipBindMode = v
	}
	if _, ok := c.p["Name"]; ok {
		n.Name = c.p["Name"]
	}
	if _, ok := c.p["Description"]; ok {
		n.Desc = c.p["Description"]
	}
	return &vpc.ModifyNatGatewayAttributeResponse{RequestId: c.reqID}, nil
}

func findNatTags(c *call, id string) *tagTarget {
	n := c.s.db.Nats[id]
	if n == nil || n.Region != c.region || c.s.natGone(n, c.now) {
		return nil
	}
	return &tagTarget{ID: n.ID, Tags: n.Tags, Set: func(t []tag) { n.Tags = t }}
}

func allNatTags(c *call, filters []tag) []tagTarget {
	return taggedTargets(c, sortedKeys(c.s.db.Nats), filters, findNatTags)
}
