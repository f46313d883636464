package vpc

// NAT gateways (VPC API 2016-04-28), enhanced type only: the vendor sells no
// other kind any more. Semantics and error codes follow
//   https://help.aliyun.com/en/nat-gateway/api-createnatgateway
//   https://alibabacloud.com/help/en/nat-gateway/developer-reference/api-vpc-2016-04-28-deletenatgateway-natgws
//   https://alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-deletevpc (DependencyViolation.NatGateway)
// CreateNatGateway is asynchronous (Creating -> Available), as is
// DeleteNatGateway (Deleting -> gone); while either runs only queries work.

import (
	"cmp"
	"strings"

	vpcsdk "github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "CreateNatGateway", core.Route{Fn: write(createNatGateway), Write: true, Idem: true})
	core.Register(Version, "DescribeNatGateways", core.Route{Fn: describeNatGateways})
	core.Register(Version, "DeleteNatGateway", core.Route{Fn: write(deleteNatGateway), Write: true})
	core.Register(Version, "ModifyNatGatewayAttribute", core.Route{Fn: write(modifyNatGatewayAttribute), Write: true})
}

// natMaxBandwidth is what DescribeNatGateways reports for an enhanced gateway (Mbit/s).
const natMaxBandwidth = 5120

func createNatGateway(c *core.Call) (any, *core.Error) {
	v, e := findVpc(c)
	if e != nil {
		return nil, e
	}
	if c.Env.AsyncStatus(v.Created, c.Now, "Pending", "Available") != "Available" {
		return nil, core.Errf(400, "VpcStatusError", "The Vpc is creating: VPC %s is still Pending.", v.ID)
	}
	natType := cmp.Or(c.P["NatType"], "Enhanced")
	if e := core.OneOf("NatType", natType, "Enhanced"); e != nil {
		return nil, e
	}
	sw, e := natVSwitch(c, v)
	if e != nil {
		return nil, e
	}
	if sw.VpcID != v.ID {
		return nil, core.ErrInvalid("VSwitchId", "vSwitch %s belongs to VPC %s, not %s", sw.ID, sw.VpcID, v.ID)
	}
	if c.Env.AsyncStatus(sw.Created, c.Now, "Pending", "Available") != "Available" {
		return nil, core.Errf(400, "VswitchStatusError", "The VSwitch is creating: vSwitch %s is still Pending.", sw.ID)
	}
	netType := cmp.Or(c.P["NetworkType"], "internet")
	if e := core.OneOf("NetworkType", netType, "internet", "intranet"); e != nil {
		return nil, e
	}
	charge := cmp.Or(c.P["InternetChargeType"], "PayByLcu")
	if e := core.OneOf("InternetChargeType", charge, "PayByLcu", "PayBySpec"); e != nil {
		return nil, e
	}
	// Subscription NAT gateways are no longer sold.
	if e := core.OneOf("InstanceChargeType", cmp.Or(c.P["InstanceChargeType"], "PostPaid"), "PostPaid"); e != nil {
		return nil, e
	}
	bind := cmp.Or(c.P["EipBindMode"], "MULTI_BINDED")
	if e := core.OneOf("EipBindMode", bind, "MULTI_BINDED", "NAT"); e != nil {
		return nil, e
	}
	if name := c.P["Name"]; name != "" && (len(name) < 2 || len(name) > 128) {
		return nil, core.Errf(400, "InvalidParameter.Name.Malformed", "The specified Name is not valid: %q must be 2-128 characters.", name)
	}
	tags, e := c.P.Tags("Tag")
	if e != nil {
		return nil, e
	}
	n := &NatGateway{ID: c.Env.NewID("ngw"), Region: c.Region, VpcID: v.ID, VSwitchID: sw.ID, Zone: sw.Zone,
		Name: c.P["Name"], Desc: c.P["Description"], NetworkType: netType, ChargeType: charge, EipBindMode: bind,
		PrivateIP: sw.NextAddress(), Created: c.Now.UnixNano(), Tags: tags}
	n.SnatTable, n.ForwardTable, n.FullNatTable = c.Env.NewID("stb"), c.Env.NewID("ftb"), c.Env.NewID("fulltb")
	StoreIn(c.Stores).Nats[n.ID] = n
	resp := &vpcsdk.CreateNatGatewayResponse{RequestId: c.ReqID, NatGatewayId: n.ID}
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
func natVSwitch(c *core.Call, v *VPC) (*VSwitch, *core.Error) {
	if c.P["VSwitchId"] != "" {
		return findVSwitch(c)
	}
	for _, id := range core.SortedKeys(StoreIn(c.Stores).VSwitches) {
		sw := StoreIn(c.Stores).VSwitches[id]
		if sw.VpcID == v.ID && c.Env.AsyncStatus(sw.Created, c.Now, "Pending", "Available") == "Available" {
			return sw, nil
		}
	}
	return nil, core.Errf(400, "MissingParameter", "The input parameter \"VSwitchId\" that is mandatory for processing this request is not supplied: VPC %s has no Available vSwitch to choose.", v.ID)
}

// findNat reads NatGatewayId; a gateway whose deletion has settled is gone.
func findNat(c *core.Call) (*NatGateway, *core.Error) {
	id, e := c.P.Required("NatGatewayId")
	if e != nil {
		return nil, e
	}
	n := StoreIn(c.Stores).Nats[id]
	if n == nil || n.Region != c.Region || n.Gone(c.Env, c.Now) {
		return nil, core.Errf(404, "InvalidNatGatewayId.NotFound", "The specified NatGatewayId %q does not exist in our records.", id)
	}
	return n, nil
}

func describeNatGateways(c *core.Call) (any, *core.Error) {
	q, e := core.ReadListQuery(c.P, "", 50)
	if e != nil {
		return nil, e
	}
	// Ids come as NatGatewayIds.N and as one NatGatewayId.
	ids := c.P.List("NatGatewayIds")
	if v := c.P["NatGatewayId"]; v != "" {
		ids = append(ids, v)
	}
	if len(ids) > 0 {
		q.IDs = ids
	}
	var list []*NatGateway
	for _, n := range StoreIn(c.Stores).Nats {
		if n.Region != c.Region || n.Gone(c.Env, c.Now) ||
			!core.MatchParam(c.P, "VpcId", n.VpcID) || !core.MatchParam(c.P, "VSwitchId", n.VSwitchID) ||
			!core.MatchParam(c.P, "ZoneId", n.Zone) || !core.MatchParam(c.P, "Name", n.Name) ||
			!core.MatchParam(c.P, "NatType", "Enhanced") || !core.MatchParam(c.P, "NetworkType", n.NetworkType) ||
			!core.MatchParam(c.P, "Status", n.Status(c.Env, c.Now)) || !q.Match(n.ID, n.Tags) {
			continue
		}
		list = append(list, n)
	}
	page := core.PageOf(q, list, func(n *NatGateway) string { return n.ID })
	resp := &vpcsdk.DescribeNatGatewaysResponse{RequestId: c.ReqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(list)}
	resp.NatGateways.NatGateway = []vpcsdk.NatGateway{}
	for _, n := range page {
		resp.NatGateways.NatGateway = append(resp.NatGateways.NatGateway, natOut(c, n))
	}
	return resp, nil
}

// matchParam reports whether an optional filter parameter is absent or equal to have.

func natOut(c *core.Call, n *NatGateway) vpcsdk.NatGateway {
	out := vpcsdk.NatGateway{NatGatewayId: n.ID, Name: n.Name, Description: n.Desc, VpcId: n.VpcID, NatType: "Enhanced",
		NetworkType: n.NetworkType, InstanceChargeType: "PostPaid", InternetChargeType: n.ChargeType,
		Status: n.Status(c.Env, c.Now), BusinessStatus: "Normal", CreationTime: core.FormatTime(n.Created), RegionId: n.Region,
		ResourceGroupId: core.DefaultResourceGroup, EipBindMode: n.EipBindMode, IcmpReplyEnabled: true, PrivateLinkMode: "FullNat",
		NatGatewayPrivateInfo: vpcsdk.NatGatewayPrivateInfo{VswitchId: n.VSwitchID, PrivateIpAddress: n.PrivateIP,
			IzNo: n.Zone, EniInstanceId: "eni-" + strings.TrimPrefix(n.ID, "ngw-"), EniType: "indirect",
			MaxBandwidth: natMaxBandwidth}}
	out.SnatTableIds.SnatTableId = []string{n.SnatTable}
	out.ForwardTableIds.ForwardTableId = []string{n.ForwardTable}
	out.FullNatTableIds.FullNatTableId = []string{n.FullNatTable}
	out.BandwidthPackageIds.BandwidthPackageId = []string{}
	snatIPs := map[string]bool{}
	for _, e := range n.LiveSnat(c.Env, c.Now) {
		for _, ip := range strings.Split(e.SnatIP, ",") {
			snatIPs[ip] = true
		}
	}
	out.IpLists.IpList = []vpcsdk.IpList{}
	for _, eip := range natEIPs(c, n) {
		use := "Idle"
		if snatIPs[eip.IP] {
			use = "UsedBySnatTable"
		}
		out.IpLists.IpList = append(out.IpLists.IpList, vpcsdk.IpList{AllocationId: eip.ID, IpAddress: eip.IP,
			UsingStatus: use, SnatEntryEnabled: snatIPs[eip.IP]})
	}
	out.Tags.Tag = natTagList(n.Tags)
	return out
}

// natTagList writes a gateway's tags as the vendor's DescribeNatGateways model names them,
// TagKey/TagValue (its VPC, vSwitch and EIP models say Key/Value): the answer is pruned to the
// model, so tags under the other names would reach clients as empty objects.
func natTagList(ts []core.Tag) []vpcsdk.Tag {
	out := make([]vpcsdk.Tag, 0, len(ts))
	for _, t := range ts {
		out = append(out, vpcsdk.Tag{TagKey: t.K, TagValue: t.V})
	}
	return out
}

func vpcTagList(ts []core.Tag) []vpcsdk.Tag {
	out := make([]vpcsdk.Tag, 0, len(ts))
	for _, t := range ts {
		out = append(out, vpcsdk.Tag{Key: t.K, Value: t.V})
	}
	return out
}

// natEIPs lists the EIPs bound to a gateway, by id.
func natEIPs(c *core.Call, n *NatGateway) []*EIP {
	st := StoreIn(c.Stores)
	var out []*EIP
	for _, id := range core.SortedKeys(st.EIPs) {
		if e := st.EIPs[id]; e.Instance == n.ID && e.InstanceType == EipTargetNat {
			out = append(out, e)
		}
	}
	return out
}

func deleteNatGateway(c *core.Call) (any, *core.Error) {
	n, e := findNat(c)
	if e != nil {
		return nil, e
	}
	force, e := c.P.Bool("Force", false)
	if e != nil {
		return nil, e
	}
	// The vendor documents this code with status 404.
	if st := n.Status(c.Env, c.Now); st != "Available" {
		return nil, core.Errf(404, "IncorrectStatus.NatGateway", "NAT gateway %s is %s; only an Available gateway can be deleted.", n.ID, st)
	}
	snat, eips := n.LiveSnat(c.Env, c.Now), natEIPs(c, n)
	if !force {
		if len(snat) > 0 {
			return nil, core.Errf(400, "DependencyViolation.SnatEntry", "The specified resource of NatGateway %s depends on SnatEntry %s, so the operation cannot be completed: delete the SNAT entries first or set Force=true.", n.ID, snat[0].ID)
		}
		if len(eips) > 0 {
			return nil, core.Errf(400, "DependencyViolation.EIPS", "There are Eips on specified NatGateway %s (%s), please unbind it first or set Force=true.", n.ID, eips[0].ID)
		}
	}
	// Force: the SNAT entries go with the gateway and its EIPs are unbound.
	n.Snat = nil
	for _, eip := range eips {
		eip.Instance, eip.InstanceType, eip.AssocAt, eip.UnassocAt = "", "", 0, c.Now.UnixNano()
	}
	n.DeletedAt = c.Now.UnixNano()
	return &vpcsdk.DeleteNatGatewayResponse{RequestId: c.ReqID}, nil
}

// modifyNatGatewayAttribute changes Name, Description and EipBindMode of an
// Available gateway.
func modifyNatGatewayAttribute(c *core.Call) (any, *core.Error) {
	n, e := findNat(c)
	if e != nil {
		return nil, e
	}
	if st := n.Status(c.Env, c.Now); st != "Available" {
		return nil, core.Errf(400, "IncorrectStatus.NatGateway", "NAT gateway %s is %s; only an Available gateway can be modified.", n.ID, st)
	}
	if name, ok := c.P["Name"]; ok && (len(name) < 2 || len(name) > 128) {
		return nil, core.Errf(400, "InvalidParameter.Name.Malformed", "The specified Name is not valid: %q must be 2-128 characters.", name)
	}
	if v := c.P["EipBindMode"]; v != "" {
		if e := core.OneOf("EipBindMode", v, "MULTI_BINDED", "NAT"); e != nil {
			return nil, e
		}
		n.EipBindMode = v
	}
	if _, ok := c.P["Name"]; ok {
		n.Name = c.P["Name"]
	}
	if _, ok := c.P["Description"]; ok {
		n.Desc = c.P["Description"]
	}
	return &vpcsdk.ModifyNatGatewayAttributeResponse{RequestId: c.ReqID}, nil
}

func findNatTags(c *core.Call, id string) *core.TagTarget {
	n := StoreIn(c.Stores).Nats[id]
	if n == nil || n.Region != c.Region || n.Gone(c.Env, c.Now) {
		return nil
	}
	return &core.TagTarget{ID: n.ID, Tags: n.Tags, Set: func(t []core.Tag) { n.Tags = t }}
}

func allNatTags(c *core.Call, filters []core.Tag) []core.TagTarget {
	return core.TaggedTargets(c, core.SortedKeys(StoreIn(c.Stores).Nats), filters, findNatTags)
}
