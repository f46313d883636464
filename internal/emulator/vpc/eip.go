package vpc

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
	"cmp"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	vpcsdk "github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// The vendor's models require RegionId only where an EIP is allocated or listed; the actions on
// one EIP find it by AllocationId (RegionOptional).
func init() {
	core.Register(Version, "AllocateEipAddress", core.Route{Fn: write(allocateEipAddress), Write: true, Idem: true})
	core.Register(Version, "AssociateEipAddress", core.Route{Fn: write(associateEipAddress), Write: true, Idem: true, RegionOptional: true})
	core.Register(Version, "UnassociateEipAddress", core.Route{Fn: write(unassociateEipAddress), Write: true, Idem: true, RegionOptional: true})
	core.Register(Version, "ReleaseEipAddress", core.Route{Fn: write(releaseEipAddress), Write: true, RegionOptional: true})
	core.Register(Version, "ModifyEipAddressAttribute", core.Route{Fn: write(modifyEipAddressAttribute), Write: true, RegionOptional: true})
	core.Register(Version, "DescribeEipAddresses", core.Route{Fn: describeEipAddresses})
}

// EipQuota is the vendor's default number of EIPs per account and region.
const EipQuota = 20

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

func eipBandwidthParam(c *core.Call, instCharge, netCharge string, def int) (int, *core.Error) {
	bw, e := c.P.Int("Bandwidth", def)
	lo, hi := eipBandwidthRange(instCharge, netCharge)
	if e != nil || bw < lo || bw > hi {
		return 0, core.Errf(400, "InvalidParameter", "Specified value of \"Bandwidth\" is not valid: %q; with InstanceChargeType %s and InternetChargeType %s it must be %d-%d Mbit/s (more needs an Internet Shared Bandwidth plan).",
			c.P["Bandwidth"], instCharge, netCharge, lo, hi)
	}
	return bw, nil
}

func allocateEipAddress(c *core.Call) (any, *core.Error) {
	inst := cmp.Or(c.P["InstanceChargeType"], "PostPaid")
	if e := core.OneOf("InstanceChargeType", inst, "PostPaid", "PrePaid"); e != nil {
		return nil, e
	}
	netCharge := cmp.Or(c.P["InternetChargeType"], "PayByBandwidth")
	if netCharge != "PayByBandwidth" && netCharge != "PayByTraffic" || inst == "PrePaid" && netCharge != "PayByBandwidth" {
		return nil, core.Errf(400, "InvalidParameter", "Specified value of \"InternetChargeType\" is not valid: %q (PayByBandwidth or PayByTraffic; subscription EIPs are PayByBandwidth only).", netCharge)
	}
	if inst == "PrePaid" {
		if c.P["AutoPay"] == "" {
			return nil, core.ErrMissing("AutoPay")
		}
		if p, e := c.P.Int("Period", 1); e != nil || p < 1 || p > 9 {
			return nil, core.ErrInvalid("Period", "must be 1-9 months")
		}
	}
	bw, e := eipBandwidthParam(c, inst, netCharge, 5)
	if e != nil {
		return nil, e
	}
	isp := cmp.Or(c.P["ISP"], "BGP")
	if e := core.OneOf("ISP", isp, "BGP", "BGP_PRO"); e != nil {
		return nil, e
	}
	n := 0
	for _, x := range StoreIn(c.Stores).EIPs {
		if x.Region == c.Region {
			n++
		}
	}
	if n >= EipQuota {
		return nil, core.Errf(400, "QuotaExceeded.Eip", "Elastic IP address quota exceeded: region %s already has %d EIPs.", c.Region, n)
	}
	eip := &EIP{ID: c.Env.NewID("eip"), Region: c.Region, Name: c.P["Name"], Desc: c.P["Description"], Bandwidth: bw,
		NetCharge: netCharge, InstCharge: inst, ISP: isp, Created: c.Now.UnixNano()}
	eip.IP = PublicAddress(c.Env.Seq()) // from the sequence value the id took
	StoreIn(c.Stores).EIPs[eip.ID] = eip
	return &vpcsdk.AllocateEipAddressResponse{RequestId: c.ReqID, AllocationId: eip.ID, EipAddress: eip.IP,
		ResourceGroupId: core.DefaultResourceGroup}, nil
}

func findEip(c *core.Call) (*EIP, *core.Error) {
	id, e := c.P.Required("AllocationId")
	if e != nil {
		return nil, e
	}
	eip := StoreIn(c.Stores).EIPs[id]
	if eip == nil || eip.Region != c.Region || eip.Gone(c.Env, c.Now) {
		return nil, core.Errf(404, "InvalidAllocationId.NotFound", "Specified allocation ID %q is not found.", id)
	}
	return eip, nil
}

func errEipStatus(eip *EIP, st, want string) *core.Error {
	return core.Errf(400, "IncorrectEipStatus", "Current elastic IP status does not support this operation: EIP %s is %s, this operation needs %s.", eip.ID, st, want)
}

func associateEipAddress(c *core.Call) (any, *core.Error) {
	eip, e := findEip(c)
	if e != nil {
		return nil, e
	}
	target, e := c.P.Required("InstanceId")
	if e != nil {
		return nil, e
	}
	typ := cmp.Or(c.P["InstanceType"], EipTargetECS)
	if typ != EipTargetNat && typ != EipTargetECS {
		return nil, core.Errf(400, "InvalidInstanceType.ValueNotSupported", "The specified value of InstanceType %q is not supported: the emulator binds EIPs to Nat and EcsInstance.", typ)
	}
	if st := eip.Status(c.Env, c.Now); st != "Available" {
		return nil, errEipStatus(eip, st, "Available")
	}
	switch typ {
	case EipTargetNat:
		n := StoreIn(c.Stores).Nats[target]
		if n == nil || n.Region != c.Region || n.Gone(c.Env, c.Now) {
			return nil, core.Errf(404, "InvalidInstanceId.NotFound", "Specified instance %q does not exist.", target)
		}
		if st := n.Status(c.Env, c.Now); st != "Available" {
			return nil, core.Errf(400, "IncorrectInstanceStatus", "Current instance status does not support this operation: NAT gateway %s is %s.", n.ID, st)
		}
		if n.NetworkType != "internet" {
			return nil, core.Errf(400, "OperationDenied", "NAT gateway %s is a VPC (intranet) NAT gateway and takes no EIP.", n.ID)
		}
	case EipTargetECS:
		in, ok := instances.Find(c, target)
		if !ok || in.Region != c.Region {
			return nil, core.Errf(404, "InvalidInstanceId.NotFound", "Specified instance %q does not exist.", target)
		}
		if st := in.Status; st != "Running" && st != "Stopped" {
			return nil, core.Errf(400, "IncorrectInstanceStatus", "Current instance status does not support this operation: instance %s is %s.", target, st)
		}
		for _, x := range StoreIn(c.Stores).EIPs {
			if x.Instance == target && !x.Gone(c.Env, c.Now) {
				return nil, core.Errf(400, "InvalidAssociation.Duplicated", "Specified instance already is associated: %s holds EIP %s.", target, x.ID)
			}
		}
	}
	eip.Instance, eip.InstanceType, eip.AssocAt, eip.UnassocAt = target, typ, c.Now.UnixNano(), 0
	return &vpcsdk.AssociateEipAddressResponse{RequestId: c.ReqID}, nil
}

// snatUsing lists the live SNAT entries of a gateway that translate to ip.
func snatUsing(c *core.Call, n *NatGateway, ip string) []*SnatEntry {
	var out []*SnatEntry
	for _, e := range n.LiveSnat(c.Env, c.Now) {
		if e.DeletedAt == 0 && slices.Contains(strings.Split(e.SnatIP, ","), ip) {
			out = append(out, e)
		}
	}
	return out
}

func unassociateEipAddress(c *core.Call) (any, *core.Error) {
	eip, e := findEip(c)
	if e != nil {
		return nil, e
	}
	force, e := c.P.Bool("Force", false)
	if e != nil {
		return nil, e
	}
	if st := eip.Status(c.Env, c.Now); st != "InUse" {
		return nil, errEipStatus(eip, st, "InUse")
	}
	if target := c.P["InstanceId"]; target != "" && eip.Instance != target {
		return nil, core.Errf(400, "IncorrectEipStatus", "Current elastic IP status does not support this operation: EIP %s is bound to %s, not %s.", eip.ID, eip.Instance, target)
	}
	if eip.InstanceType == EipTargetNat {
		if n := StoreIn(c.Stores).Nats[eip.Instance]; n != nil {
			using := snatUsing(c, n, eip.IP)
			// The NAT API's code for "an SNAT entry depends on this": with Force
			// the vendor unbinds anyway and the entries go with the address.
			if len(using) > 0 && !force {
				return nil, core.Errf(400, "DependencyViolation.SnatEntry", "The specified resource of EIP %s depends on SnatEntry %s, so the operation cannot be completed: delete the SNAT entry first or set Force=true.", eip.ID, using[0].ID)
			}
			for _, s := range using {
				s.DeletedAt = c.Now.UnixNano()
			}
		}
	}
	eip.Instance, eip.InstanceType, eip.AssocAt, eip.UnassocAt = "", "", 0, c.Now.UnixNano()
	return &vpcsdk.UnassociateEipAddressResponse{RequestId: c.ReqID}, nil
}

func releaseEipAddress(c *core.Call) (any, *core.Error) {
	eip, e := findEip(c)
	if e != nil {
		return nil, e
	}
	if st := eip.Status(c.Env, c.Now); st != "Available" {
		return nil, errEipStatus(eip, st, "Available")
	}
	if eip.InstCharge == "PrePaid" {
		return nil, core.Errf(400, "Forbidden.ChargeTypeIsPrepaid", "It's forbidden to release a prepaid EIP (%s).", eip.ID)
	}
	eip.ReleasedAt = c.Now.UnixNano()
	return &vpcsdk.ReleaseEipAddressResponse{RequestId: c.ReqID}, nil
}

func modifyEipAddressAttribute(c *core.Call) (any, *core.Error) {
	eip, e := findEip(c)
	if e != nil {
		return nil, e
	}
	if st := eip.Status(c.Env, c.Now); st == "Releasing" {
		return nil, errEipStatus(eip, st, "any state but Releasing")
	}
	if c.P["Bandwidth"] != "" {
		bw, e := eipBandwidthParam(c, eip.InstCharge, eip.NetCharge, eip.Bandwidth)
		if e != nil {
			return nil, e
		}
		eip.Bandwidth = bw
	}
	if _, ok := c.P["Name"]; ok {
		eip.Name = c.P["Name"]
	}
	if _, ok := c.P["Description"]; ok {
		eip.Desc = c.P["Description"]
	}
	return &vpcsdk.ModifyEipAddressAttributeResponse{RequestId: c.ReqID}, nil
}

func describeEipAddresses(c *core.Call) (any, *core.Error) {
	q, e := core.ReadListQuery(c.P, "AllocationId", 100)
	if e != nil {
		return nil, e
	}
	if len(q.IDs) > 50 {
		return nil, core.ErrInvalid("AllocationId", "at most 50 ids, got %d", len(q.IDs))
	}
	var ips []string
	if v := c.P["EipAddress"]; v != "" {
		ips = strings.Split(v, ",")
		for _, ip := range ips {
			if _, err := netip.ParseAddr(ip); err != nil {
				return nil, core.ErrInvalid("EipAddress", "%q is not an IP address", ip)
			}
		}
	}
	var list []*EIP
	for _, x := range StoreIn(c.Stores).EIPs {
		st := x.Status(c.Env, c.Now)
		if x.Region != c.Region || x.Gone(c.Env, c.Now) ||
			(ips != nil && !slices.Contains(ips, x.IP)) || !core.MatchParam(c.P, "EipName", x.Name) || !core.MatchParam(c.P, "Status", st) ||
			!core.MatchParam(c.P, "AssociatedInstanceType", x.InstanceType) || !core.MatchParam(c.P, "AssociatedInstanceId", x.Instance) ||
			!core.MatchParam(c.P, "ChargeType", x.InstCharge) || !core.MatchParam(c.P, "ISP", x.ISP) || !q.Match(x.ID, x.Tags) {
			continue
		}
		list = append(list, x)
	}
	page := core.PageOf(q, list, func(x *EIP) string { return x.ID })
	resp := &vpcsdk.DescribeEipAddressesResponse{RequestId: c.ReqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(list)}
	resp.EipAddresses.EipAddress = []vpcsdk.EipAddress{}
	for _, x := range page {
		out := vpcsdk.EipAddress{AllocationId: x.ID, IpAddress: x.IP, RegionId: x.Region, Name: x.Name, Description: x.Desc,
			Bandwidth: strconv.Itoa(x.Bandwidth), EipBandwidth: strconv.Itoa(x.Bandwidth), InternetChargeType: x.NetCharge,
			ChargeType: x.InstCharge, ISP: x.ISP, Netmode: "public", Status: x.Status(c.Env, c.Now),
			AllocationTime: core.FormatTime(x.Created), InstanceId: x.Instance, InstanceType: x.InstanceType,
			InstanceRegionId: instanceRegion(x), ResourceGroupId: core.DefaultResourceGroup, BusinessStatus: "Normal",
			Mode: "NAT"}
		if x.InstanceType == EipTargetNat {
			if n := StoreIn(c.Stores).Nats[x.Instance]; n != nil {
				out.VpcId, out.PrivateIpAddress = n.VpcID, n.PrivateIP
			}
		} else if in, ok := instances.Find(c, x.Instance); ok {
			out.VpcId, out.PrivateIpAddress = in.VpcID, in.IP
		}
		out.Tags.Tag = vpcTagList(x.Tags)
		out.OperationLocks.LockReason = []vpcsdk.LockReason{}
		out.SecurityProtectionTypes.SecurityProtectionType = []string{}
		resp.EipAddresses.EipAddress = append(resp.EipAddresses.EipAddress, out)
	}
	return resp, nil
}

func instanceRegion(x *EIP) string {
	if x.Instance == "" {
		return ""
	}
	return x.Region
}

func findEipTags(c *core.Call, id string) *core.TagTarget {
	x := StoreIn(c.Stores).EIPs[id]
	if x == nil || x.Region != c.Region || x.Gone(c.Env, c.Now) {
		return nil
	}
	return &core.TagTarget{ID: x.ID, Tags: x.Tags, Set: func(t []core.Tag) { x.Tags = t }}
}

func allEipTags(c *core.Call, filters []core.Tag) []core.TagTarget {
	return core.TaggedTargets(c, core.SortedKeys(StoreIn(c.Stores).EIPs), filters, findEipTags)
}
