package emulator

// Elastic IP addresses (VPC API 2016-04-28). Semantics, limits and codes follow
//   https://alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-allocateeipaddress
//   https://alibabacloud.com/help/tc/eip/developer-reference/api-120192 (Bandwidth ranges per billing)
//   https://alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-associateeipaddress
//   https://alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-unassociateeipaddress
//   https://alibabacloud.com/help/en/eip/developer-reference/api-vpc-2016-04-28-releaseeipaddress-eips
//   https://alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-describeeipaddresses
// Bandwidth (Mbit/s) is bounded by the billing: pay-as-you-go by bandwidth
// 1-500, pay-as-you-go by traffic 1-200, subscription (by bandwidth only) 1-1000.
// Anything above needs an Internet Shared Bandwidth plan, which the emulator
// does not model. Association is asynchronous (Associating -> InUse,
// Unassociating -> Available) and so is release (Releasing -> gone).

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

// The vendor's models require RegionId only where an EIP is allocated or listed; the actions on
// one EIP find it by AllocationId (regionOptional).
func init() {
	register(versionVPC, "AllocateEipAddress", route{fn: netWrite(allocateEipAddress), write: true, idem: true})
	register(versionVPC, "AssociateEipAddress", route{fn: netWrite(associateEipAddress), write: true, idem: true, regionOptional: true})
	register(versionVPC, "UnassociateEipAddress", route{fn: netWrite(unassociateEipAddress), write: true, idem: true, regionOptional: true})
	register(versionVPC, "ReleaseEipAddress", route{fn: netWrite(releaseEipAddress), write: true, regionOptional: true})
	register(versionVPC, "ModifyEipAddressAttribute", route{fn: netWrite(modifyEipAddressAttribute), write: true, regionOptional: true})
	register(versionVPC, "DescribeEipAddresses", route{fn: describeEipAddresses})
}

// eipQuota is the vendor's default number of EIPs per account and region.
const eipQuota = 20

// eipBandwidthRange is the vendor's Bandwidth range for a billing combination.
func eipBandwidthRange(instCharge, netCharge string) (int, int) {
	switch {
	case instCharge == "PrePaid":
		return 1, 1000
	case netCharge == "PayByTraffic":
		return 1, 200
	}
	return 1, 500
}

func eipBandwidthParam(c *call, instCharge, netCharge string, def int) (int, *apiError) {
	bw, e := c.p.Int("Bandwidth", def)
	lo, hi := eipBandwidthRange(instCharge, netCharge)
	if e != nil || bw < lo || bw > hi {
		return 0, errf(400, "InvalidParameter", "Specified value of \"Bandwidth\" is not valid: %q; with InstanceChargeType %s and InternetChargeType %s it must be %d-%d Mbit/s (more needs an Internet Shared Bandwidth plan).",
			c.p["Bandwidth"], instCharge, netCharge, lo, hi)
	}
	return bw, nil
}

func allocateEipAddress(c *call) (any, *apiError) {
	inst := orDefault(c.p["InstanceChargeType"], "PostPaid")
	if e := oneOf("InstanceChargeType", inst, "PostPaid", "PrePaid"); e != nil {
		return nil, e
	}
	netCharge := orDefault(c.p["InternetChargeType"], "PayByBandwidth")
	if netCharge != "PayByBandwidth" && netCharge != "PayByTraffic" || inst == "PrePaid" && netCharge != "PayByBandwidth" {
		return nil, errf(400, "InvalidParameter", "Specified value of \"InternetChargeType\" is not valid: %q (PayByBandwidth or PayByTraffic; subscription EIPs are PayByBandwidth only).", netCharge)
	}
	if inst == "PrePaid" {
		if c.p["AutoPay"] == "" {
			return nil, errMissing("AutoPay")
		}
		if p, e := c.p.Int("Period", 1); e != nil || p < 1 || p > 9 {
			return nil, errInvalid("Period", "must be 1-9 months")
		}
	}
	bw, e := eipBandwidthParam(c, inst, netCharge, 5)
	if e != nil {
		return nil, e
	}
	isp := orDefault(c.p["ISP"], "BGP")
	if e := oneOf("ISP", isp, "BGP", "BGP_PRO"); e != nil {
		return nil, e
	}
	d := c.s.db
	n := 0
	for _, x := range d.EIPs {
		if x.Region == c.region {
			n++
		}
	}
	if n >= eipQuota {
		return nil, errf(400, "QuotaExceeded.Eip", "Elastic IP address quota exceeded: region %s already has %d EIPs.", c.region, n)
	}
	eip := &eipRec{ID: d.newID("eip"), Region: c.region, Name: c.p["Name"], Desc: c.p["Description"], Bandwidth: bw,
		NetCharge: netCharge, InstCharge: inst, ISP: isp, Created: c.now.UnixNano()}
	eip.IP = eipAddress(d.Seq)
	d.EIPs[eip.ID] = eip
	return &vpc.AllocateEipAddressResponse{RequestId: c.reqID, AllocationId: eip.ID, EipAddress: eip.IP,
		ResourceGroupId: defaultResourceGroup}, nil
}

func (c *call) findEip() (*eipRec, *apiError) {
	id, e := c.p.Required("AllocationId")
	if e != nil {
		return nil, e
	}
	eip := c.s.db.EIPs[id]
	if eip == nil || eip.Region != c.region || c.s.eipGone(eip, c.now) {
		return nil, errf(404, "InvalidAllocationId.NotFound", "Specified allocation ID %q is not found.", id)
	}
	return eip, nil
}

func errEipStatus(eip *eipRec, st, want string) *apiError {
	return errf(400, "IncorrectEipStatus", "Current elastic IP status does not support this operation: EIP %s is %s, this operation needs %s.", eip.ID, st, want)
}

func associateEipAddress(c *call) (any, *apiError) {
	eip, e := c.findEip()
	if e != nil {
		return nil, e
	}
	target, e := c.p.Required("InstanceId")
	if e != nil {
		return nil, e
	}
	typ := orDefault(c.p["InstanceType"], eipTargetECS)
	if typ != eipTargetNat && typ != eipTargetECS {
		return nil, errf(400, "InvalidInstanceType.ValueNotSupported", "The specified value of InstanceType %q is not supported: the emulator binds EIPs to Nat and EcsInstance.", typ)
	}
	if st := c.s.eipStatus(eip, c.now); st != "Available" {
		return nil, errEipStatus(eip, st, "Available")
	}
	switch typ {
	case eipTargetNat:
		n := c.s.db.Nats[target]
		if n == nil || n.Region != c.region || c.s.natGone(n, c.now) {
			return nil, errf(404, "InvalidInstanceId.NotFound", "Specified instance %q does not exist.", target)
		}
		if st := c.s.natStatus(n, c.now); st != "Available" {
			return nil, errf(400, "IncorrectInstanceStatus", "Current instance status does not support this operation: NAT gateway %s is %s.", n.ID, st)
		}
		if n.NetworkType != "internet" {
			return nil, errf(400, "OperationDenied", "NAT gateway %s is a VPC (intranet) NAT gateway and takes no EIP.", n.ID)
		}
	case eipTargetECS:
		in := c.s.db.Instances[target]
		if in == nil || in.Region != c.region {
			return nil, errf(404, "InvalidInstanceId.NotFound", "Specified instance %q does not exist.", target)
		}
		if st := c.s.instanceStatus(in, c.now); st != "Running" && st != "Stopped" {
			return nil, errf(400, "IncorrectInstanceStatus", "Current instance status does not support this operation: instance %s is %s.", in.ID, st)
		}
		for _, x := range c.s.db.EIPs {
			if x.Instance == in.ID && !c.s.eipGone(x, c.now) {
				return nil, errf(400, "InvalidAssociation.Duplicated", "Specified instance already is associated: %s holds EIP %s.", in.ID, x.ID)
			}
		}
	}
	eip.Instance, eip.InstanceType, eip.AssocAt, eip.UnassocAt = target, typ, c.now.UnixNano(), 0
	return &vpc.AssociateEipAddressResponse{RequestId: c.reqID}, nil
}

// snatUsing lists the live SNAT entries of a gateway that translate to ip.
func (s *Server) snatUsing(n *natGateway, ip string, c *call) []*snatEntry {
	var out []*snatEntry
	for _, e := range s.liveSnat(n, c.now) {
		if e.DeletedAt == 0 && contains(strings.Split(e.SnatIP, ","), ip) {
			out = append(out, e)
		}
	}
	return out
}

func unassociateEipAddress(c *call) (any, *apiError) {
	eip, e := c.findEip()
	if e != nil {
		return nil, e
	}
	force, e := c.p.Bool("Force", false)
	if e != nil {
		return nil, e
	}
	if st := c.s.eipStatus(eip, c.now); st != "InUse" {
		return nil, errEipStatus(eip, st, "InUse")
	}
	if target := c.p["InstanceId"]; target != "" && eip.Instance != target {
		return nil, errf(400, "IncorrectEipStatus", "Current elastic IP status does not support this operation: EIP %s is bound to %s, not %s.", eip.ID, eip.Instance, target)
	}
	if eip.InstanceType == eipTargetNat {
		if n := c.s.db.Nats[eip.Instance]; n != nil {
			using := c.s.snatUsing(n, eip.IP, c)
			// The NAT API's code for "an SNAT entry depends on this": with Force
			// the vendor unbinds anyway and the entries go with the address.
			if len(using) > 0 && !force {
				return nil, errf(400, "DependencyViolation.SnatEntry", "The specified resource of EIP %s depends on SnatEntry %s, so the operation cannot be completed: delete the SNAT entry first or set Force=true.", eip.ID, using[0].ID)
			}
			for _, s := range using {
				s.DeletedAt = c.now.UnixNano()
			}
		}
	}
	eip.Instance, eip.InstanceType, eip.AssocAt, eip.UnassocAt = "", "", 0, c.now.UnixNano()
	return &vpc.UnassociateEipAddressResponse{RequestId: c.reqID}, nil
}

func releaseEipAddress(c *call) (any, *apiError) {
	eip, e := c.findEip()
	if e != nil {
		return nil, e
	}
	if st := c.s.eipStatus(eip, c.now); st != "Available" {
		return nil, errEipStatus(eip, st, "Available")
	}
	if eip.InstCharge == "PrePaid" {
		return nil, errf(400, "Forbidden.ChargeTypeIsPrepaid", "It's forbidden to release a prepaid EIP (%s).", eip.ID)
	}
	eip.ReleasedAt = c.now.UnixNano()
	return &vpc.ReleaseEipAddressResponse{RequestId: c.reqID}, nil
}

func modifyEipAddressAttribute(c *call) (any, *apiError) {
	eip, e := c.findEip()
	if e != nil {
		return nil, e
	}
	if st := c.s.eipStatus(eip, c.now); st == "Releasing" {
		return nil, errEipStatus(eip, st, "any state but Releasing")
	}
	if c.p["Bandwidth"] != "" {
		bw, e := eipBandwidthParam(c, eip.InstCharge, eip.NetCharge, eip.Bandwidth)
		if e != nil {
			return nil, e
		}
		eip.Bandwidth = bw
	}
	if _, ok := c.p["Name"]; ok {
		eip.Name = c.p["Name"]
	}
	if _, ok := c.p["Description"]; ok {
		eip.Desc = c.p["Description"]
	}
	return &vpc.ModifyEipAddressAttributeResponse{RequestId: c.reqID}, nil
}

func describeEipAddresses(c *call) (any, *apiError) {
	q, e := c.listQuery("AllocationId", 100)
	if e != nil {
		return nil, e
	}
	if len(q.IDs) > 50 {
		return nil, errInvalid("AllocationId", "at most 50 ids, got %d", len(q.IDs))
	}
	var ips []string
	if v := c.p["EipAddress"]; v != "" {
		ips = strings.Split(v, ",")
		for _, ip := range ips {
			if _, err := netip.ParseAddr(ip); err != nil {
				return nil, errInvalid("EipAddress", "%q is not an IP address", ip)
			}
		}
	}
	var list []*eipRec
	for _, x := range c.s.db.EIPs {
		st := c.s.eipStatus(x, c.now)
		if x.Region != c.region || c.s.eipGone(x, c.now) ||
			(ips != nil && !contains(ips, x.IP)) || !matchParam(c.p, "EipName", x.Name) || !matchParam(c.p, "Status", st) ||
			!matchParam(c.p, "AssociatedInstanceType", x.InstanceType) || !matchParam(c.p, "AssociatedInstanceId", x.Instance) ||
			!matchParam(c.p, "ChargeType", x.InstCharge) || !matchParam(c.p, "ISP", x.ISP) || !q.Match(x.ID, x.Tags) {
			continue
		}
		list = append(list, x)
	}
	page := pageOf(q, list, func(x *eipRec) string { return x.ID })
	resp := &vpc.DescribeEipAddressesResponse{RequestId: c.reqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(list)}
	resp.EipAddresses.EipAddress = []vpc.EipAddress{}
	for _, x := range page {
		out := vpc.EipAddress{AllocationId: x.ID, IpAddress: x.IP, RegionId: x.Region, Name: x.Name, Description: x.Desc,
			Bandwidth: strconv.Itoa(x.Bandwidth), EipBandwidth: strconv.Itoa(x.Bandwidth), InternetChargeType: x.NetCharge,
			ChargeType: x.InstCharge, ISP: x.ISP, Netmode: "public", Status: c.s.eipStatus(x, c.now),
			AllocationTime: fmtTime(x.Created), InstanceId: x.Instance, InstanceType: x.InstanceType,
			InstanceRegionId: instanceRegion(x), ResourceGroupId: defaultResourceGroup, BusinessStatus: "Normal",
			Mode: "NAT"}
		if x.InstanceType == eipTargetNat {
			if n := c.s.db.Nats[x.Instance]; n != nil {
				out.VpcId, out.PrivateIpAddress = n.VpcID, n.PrivateIP
			}
		} else if in := c.s.db.Instances[x.Instance]; in != nil {
			out.VpcId, out.PrivateIpAddress = in.VpcID, in.IP
		}
		out.Tags.Tag = vpcTagList(x.Tags)
		out.OperationLocks.LockReason = []vpc.LockReason{}
		out.SecurityProtectionTypes.SecurityProtectionType = []string{}
		resp.EipAddresses.EipAddress = append(resp.EipAddresses.EipAddress, out)
	}
	return resp, nil
}

func instanceRegion(x *eipRec) string {
	if x.Instance == "" {
		return ""
	}
	return x.Region
}

func findEipTags(c *call, id string) *tagTarget {
	x := c.s.db.EIPs[id]
	if x == nil || x.Region != c.region || c.s.eipGone(x, c.now) {
		return nil
	}
	return &tagTarget{ID: x.ID, Tags: x.Tags, Set: func(t []tag) { x.Tags = t }}
}

func allEipTags(c *call, filters []tag) []tagTarget {
	return taggedTargets(c, sortedKeys(c.s.db.EIPs), filters, findEipTags)
}
