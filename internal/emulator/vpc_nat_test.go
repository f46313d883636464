package emulator

import (
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"

	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

// netBoot is the boot time of the network tests: every asynchronous
// transition takes half of it, and the tests move the emulator's clock past
// it (advance) instead of sleeping.
const netBoot = 10 * time.Second

// netFixture is a VPC with two Available vSwitches in zone a: one for the
// NAT gateway and load balancer, one that only SNAT entries point at.
type netFixture struct{ vpcID, vswID, vsw2ID string }

func (e *env) netNetwork() netFixture {
	e.t.Helper()
	cv := vpc.CreateCreateVpcRequest()
	cv.RegionId, cv.CidrBlock = testRegion, "10.0.0.0/8"
	r, err := e.vpc.CreateVpc(cv)
	must(e.t, err)
	e.advance(netBoot)
	f := netFixture{vpcID: r.VpcId}
	for i, cidr := range []string{"10.1.0.0/16", "10.2.0.0/16"} {
		cs := vpc.CreateCreateVSwitchRequest()
		cs.RegionId, cs.VpcId, cs.ZoneId, cs.CidrBlock = testRegion, r.VpcId, testRegion+"-a", cidr
		sw, err := e.vpc.CreateVSwitch(cs)
		must(e.t, err)
		if i == 0 {
			f.vswID = sw.VSwitchId
		} else {
			f.vsw2ID = sw.VSwitchId
		}
	}
	e.advance(netBoot)
	return f
}

func (e *env) createNat(f netFixture, token string) *vpc.CreateNatGatewayResponse {
	e.t.Helper()
	r := vpc.CreateCreateNatGatewayRequest()
	r.RegionId, r.VpcId, r.VSwitchId, r.NatType, r.Name, r.ClientToken = testRegion, f.vpcID, f.vswID, "Enhanced", "egress", token
	resp, err := e.vpc.CreateNatGateway(r)
	must(e.t, err)
	return resp
}

func (e *env) nat(id string) vpc.NatGateway {
	e.t.Helper()
	r := vpc.CreateDescribeNatGatewaysRequest()
	r.RegionId, r.NatGatewayId = testRegion, id
	resp, err := e.vpc.DescribeNatGateways(r)
	must(e.t, err)
	if len(resp.NatGateways.NatGateway) != 1 {
		e.t.Fatalf("NAT gateway %s: %d found", id, len(resp.NatGateways.NatGateway))
	}
	return resp.NatGateways.NatGateway[0]
}

func (e *env) eips(ids ...string) []vpc.EipAddress {
	e.t.Helper()
	r := vpc.CreateDescribeEipAddressesRequest()
	r.RegionId, r.PageSize = testRegion, requests.NewInteger(100)
	if len(ids) > 0 {
		r.AllocationId = ids[0]
	}
	resp, err := e.vpc.DescribeEipAddresses(r)
	must(e.t, err)
	return resp.EipAddresses.EipAddress
}

func (e *env) eipStatus(id string) string {
	e.t.Helper()
	got := e.eips(id)
	if len(got) != 1 {
		e.t.Fatalf("EIP %s: %d found", id, len(got))
	}
	return got[0].Status
}

func (e *env) allocateEip(bandwidth, charge string) (*vpc.AllocateEipAddressResponse, error) {
	r := vpc.CreateAllocateEipAddressRequest()
	r.RegionId, r.Bandwidth, r.InternetChargeType = testRegion, bandwidth, charge
	return e.vpc.AllocateEipAddress(r)
}

func (e *env) associateEip(id, instance, typ string) error {
	r := vpc.CreateAssociateEipAddressRequest()
	r.RegionId, r.AllocationId, r.InstanceId, r.InstanceType = testRegion, id, instance, typ
	_, err := e.vpc.AssociateEipAddress(r)
	return err
}

func (e *env) unassociateEip(id, instance, typ string) error {
	r := vpc.CreateUnassociateEipAddressRequest()
	r.RegionId, r.AllocationId, r.InstanceId, r.InstanceType = testRegion, id, instance, typ
	_, err := e.vpc.UnassociateEipAddress(r)
	return err
}

func (e *env) releaseEip(id string) error {
	r := vpc.CreateReleaseEipAddressRequest()
	r.RegionId, r.AllocationId = testRegion, id
	_, err := e.vpc.ReleaseEipAddress(r)
	return err
}

func (e *env) createSnat(table, vswID, cidr, ip string) (string, error) {
	r := vpc.CreateCreateSnatEntryRequest()
	r.RegionId, r.SnatTableId, r.SourceVSwitchId, r.SourceCIDR, r.SnatIp = testRegion, table, vswID, cidr, ip
	resp, err := e.vpc.CreateSnatEntry(r)
	if err != nil {
		return "", err
	}
	return resp.SnatEntryId, nil
}

func (e *env) snatEntries(table string) []vpc.SnatTableEntry {
	e.t.Helper()
	r := vpc.CreateDescribeSnatTableEntriesRequest()
	r.RegionId, r.SnatTableId = testRegion, table
	resp, err := e.vpc.DescribeSnatTableEntries(r)
	must(e.t, err)
	return resp.SnatTableEntries.SnatTableEntry
}

func (e *env) deleteSnat(table, id string) error {
	r := vpc.CreateDeleteSnatEntryRequest()
	r.RegionId, r.SnatTableId, r.SnatEntryId = testRegion, table, id
	_, err := e.vpc.DeleteSnatEntry(r)
	return err
}

func (e *env) deleteNat(id string, force bool) error {
	r := vpc.CreateDeleteNatGatewayRequest()
	r.RegionId, r.NatGatewayId = testRegion, id
	if force {
		r.Force = requests.NewBoolean(true)
	}
	_, err := e.vpc.DeleteNatGateway(r)
	return err
}

func (e *env) deleteVSwitch(id string) error {
	r := vpc.CreateDeleteVSwitchRequest()
	r.RegionId, r.VSwitchId = testRegion, id
	_, err := e.vpc.DeleteVSwitch(r)
	return err
}

func (e *env) deleteVpc(id string) error {
	r := vpc.CreateDeleteVpcRequest()
	r.RegionId, r.VpcId = testRegion, id
	_, err := e.vpc.DeleteVpc(r)
	return err
}

// TestNatEipSnatLifecycle walks one egress set-up through every state and
// every refusal a wrong order meets, then tears it down to nothing.
func TestNatEipSnatLifecycle(t *testing.T) {
	e := newEnv(t, Config{BootTime: netBoot})
	f := e.netNetwork()

	// Enhanced gateways need a vSwitch: a VPC without one cannot hold a gateway.
	empty := vpc.CreateCreateVpcRequest()
	empty.RegionId, empty.CidrBlock = testRegion, "192.168.0.0/16"
	ev, err := e.vpc.CreateVpc(empty)
	must(t, err)
	e.advance(netBoot)
	bad := vpc.CreateCreateNatGatewayRequest()
	bad.RegionId, bad.VpcId, bad.NatType = testRegion, ev.VpcId, "Enhanced"
	_, err = e.vpc.CreateNatGateway(bad)
	wantCode(t, err, "MissingParameter")
	must(t, e.deleteVpc(ev.VpcId))

	created := e.createNat(f, "nat-token")
	if len(created.SnatTableIds.SnatTableId) != 1 || created.NatGatewayId == "" {
		t.Fatalf("CreateNatGateway answered %+v", created)
	}
	if again := e.createNat(f, "nat-token"); again.NatGatewayId != created.NatGatewayId {
		t.Fatalf("retry with the same ClientToken made a second gateway: %s vs %s", again.NatGatewayId, created.NatGatewayId)
	}
	other := vpc.CreateCreateNatGatewayRequest()
	other.RegionId, other.VpcId, other.VSwitchId, other.Name, other.ClientToken = testRegion, f.vpcID, f.vswID, "other", "nat-token"
	_, err = e.vpc.CreateNatGateway(other)
	wantCode(t, err, "IdempotentParameterMismatch")
	natID, table := created.NatGatewayId, created.SnatTableIds.SnatTableId[0]

	n := e.nat(natID)
	if n.Status != "Creating" || n.NatType != "Enhanced" || n.VpcId != f.vpcID || n.NatGatewayPrivateInfo.VswitchId != f.vswID ||
		n.NatGatewayPrivateInfo.PrivateIpAddress == "" || n.SnatTableIds.SnatTableId[0] != table {
		t.Fatalf("new gateway: %+v", n)
	}
	eip, err := e.allocateEip("200", "PayByTraffic")
	must(t, err)
	wantCode(t, e.associateEip(eip.AllocationId, natID, "Nat"), "IncorrectInstanceStatus")
	err = e.deleteNat(natID, false)
	wantCode(t, err, "IncorrectStatus.NatGateway")
	e.advance(netBoot)
	if st := e.nat(natID).Status; st != "Available" {
		t.Fatalf("gateway %s after its creation time", st)
	}

	// Associating, then InUse; an address still associating cannot be used for SNAT.
	must(t, e.associateEip(eip.AllocationId, natID, "Nat"))
	if st := e.eipStatus(eip.AllocationId); st != "Associating" {
		t.Fatalf("EIP right after AssociateEipAddress: %s", st)
	}
	_, err = e.createSnat(table, f.vsw2ID, "", eip.EipAddress)
	wantCode(t, err, "IncorrectEipStatus")
	e.advance(netBoot)
	got := e.eips(eip.AllocationId)[0]
	if got.Status != "InUse" || got.InstanceId != natID || got.InstanceType != "Nat" || got.Bandwidth != "200" || got.InternetChargeType != "PayByTraffic" {
		t.Fatalf("bound EIP: %+v", got)
	}
	wantCode(t, e.releaseEip(eip.AllocationId), "IncorrectEipStatus")

	// SNAT: the address must be on this gateway, one entry per source.
	stray, err := e.allocateEip("5", "")
	must(t, err)
	_, err = e.createSnat(table, f.vsw2ID, "", stray.EipAddress)
	wantCode(t, err, "InvalidSnatIp.NotFound")
	_, err = e.createSnat("stb-missing", f.vsw2ID, "", eip.EipAddress)
	wantCode(t, err, "InvalidSnatTableId.NotFound")
	snatID, err := e.createSnat(table, f.vsw2ID, "", eip.EipAddress)
	must(t, err)
	_, err = e.createSnat(table, f.vsw2ID, "", eip.EipAddress)
	wantCode(t, err, "Forbidden.SourceVSwitchId.Duplicated")
	_, err = e.createSnat(table, "", "10.2.0.0/16", eip.EipAddress)
	wantCode(t, err, "Forbidden.SourceVSwitchId.Duplicated")
	entries := e.snatEntries(table)
	if len(entries) != 1 || entries[0].Status != "Pending" || entries[0].SourceVSwitchId != f.vsw2ID ||
		entries[0].SourceCIDR != "10.2.0.0/16" || entries[0].SnatIp != eip.EipAddress || entries[0].NatGatewayId != natID {
		t.Fatalf("SNAT entries: %+v", entries)
	}
	wantCode(t, e.deleteSnat(table, snatID), "IncorretSnatEntryStatus")
	e.advance(netBoot)
	if st := e.snatEntries(table)[0].Status; st != "Available" {
		t.Fatalf("SNAT entry %s after its creation time", st)
	}
	if ip := e.nat(natID).IpLists.IpList; len(ip) != 1 || ip[0].AllocationId != eip.AllocationId || ip[0].UsingStatus != "UsedBySnatTable" {
		t.Fatalf("gateway IpLists: %+v", ip)
	}

	// Deleting in the wrong order is refused with the vendor's codes.
	wantCode(t, e.deleteVSwitch(f.vswID), "DependencyViolation.EnhancedNatgw")
	wantCode(t, e.deleteVSwitch(f.vsw2ID), "DependencyViolation.SnatEntry")
	wantCode(t, e.deleteVpc(f.vpcID), "DependencyViolation.NatGateway")
	wantCode(t, e.deleteNat(natID, false), "DependencyViolation.SnatEntry")
	wantCode(t, e.unassociateEip(eip.AllocationId, natID, "Nat"), "DependencyViolation.SnatEntry")

	// Right order: SNAT entry, EIP, gateway.
	must(t, e.deleteSnat(table, snatID))
	if entries := e.snatEntries(table); len(entries) != 1 || entries[0].Status != "Deleting" {
		t.Fatalf("SNAT entry right after DeleteSnatEntry: %+v", entries)
	}
	e.advance(netBoot)
	if entries := e.snatEntries(table); len(entries) != 0 {
		t.Fatalf("SNAT entry still there after its deletion time: %+v", entries)
	}
	wantCode(t, e.deleteSnat(table, snatID), "InvalidSnatEntryId.NotFound")
	wantCode(t, e.deleteNat(natID, false), "DependencyViolation.EIPS")
	wantCode(t, e.unassociateEip(eip.AllocationId, "ngw-other", "Nat"), "IncorrectEipStatus")
	must(t, e.unassociateEip(eip.AllocationId, "", "")) // InstanceId is optional
	if st := e.eipStatus(eip.AllocationId); st != "Unassociating" {
		t.Fatalf("EIP right after UnassociateEipAddress: %s", st)
	}
	e.advance(netBoot)
	if st := e.eipStatus(eip.AllocationId); st != "Available" {
		t.Fatalf("EIP after unassociation: %s", st)
	}
	for _, id := range []string{eip.AllocationId, stray.AllocationId} {
		must(t, e.releaseEip(id))
	}
	if st := e.eipStatus(eip.AllocationId); st != "Releasing" {
		t.Fatalf("EIP right after ReleaseEipAddress: %s", st)
	}
	must(t, e.deleteNat(natID, false))
	if st := e.nat(natID).Status; st != "Deleting" {
		t.Fatalf("gateway right after DeleteNatGateway: %s", st)
	}
	wantCode(t, e.deleteVpc(f.vpcID), "DependencyViolation.NatGateway")
	e.advance(netBoot)
	if n := len(e.eips()); n != 0 {
		t.Fatalf("%d EIPs left after release", n)
	}
	r := vpc.CreateDescribeNatGatewaysRequest()
	r.RegionId, r.VpcId = testRegion, f.vpcID
	resp, err := e.vpc.DescribeNatGateways(r)
	must(t, err)
	if resp.TotalCount != 0 {
		t.Fatalf("gateway still listed after its deletion time: %+v", resp.NatGateways)
	}
	wantCode(t, e.deleteNat(natID, false), "InvalidNatGatewayId.NotFound")
	for _, id := range []string{f.vswID, f.vsw2ID} {
		must(t, e.deleteVSwitch(id))
	}
	must(t, e.deleteVpc(f.vpcID))
	res := e.s.Resources()
	if len(res.NatGateways)+len(res.SnatEntries)+len(res.EIPs)+len(res.Vpcs)+len(res.VSwitches) != 0 {
		t.Fatalf("resources left: %+v", res)
	}
}

func TestEipBandwidthLimits(t *testing.T) {
	e := newEnv(t, Config{})
	for _, c := range []struct {
		bw, charge, inst, code string
	}{
		{"200", "PayByTraffic", "", ""},
		{"201", "PayByTraffic", "", "InvalidParameter"},
		{"500", "PayByBandwidth", "", ""},
		{"501", "", "", "InvalidParameter"}, // PayByBandwidth is the default
		{"0", "PayByBandwidth", "", "InvalidParameter"},
		{"ten", "PayByBandwidth", "", "InvalidParameter"},
		{"10000", "PayByBandwidth", "", "InvalidParameter"}, // 10 Gbit/s needs a shared bandwidth plan
		{"1000", "PayByBandwidth", "PrePaid", ""},
		{"1001", "PayByBandwidth", "PrePaid", "InvalidParameter"},
		{"100", "PayByTraffic", "PrePaid", "InvalidParameter"}, // subscription is by bandwidth only
		{"100", "PayByHour", "", "InvalidParameter"},
	} {
		r := vpc.CreateAllocateEipAddressRequest()
		r.RegionId, r.Bandwidth, r.InternetChargeType, r.InstanceChargeType = testRegion, c.bw, c.charge, c.inst
		if c.inst == "PrePaid" {
			r.AutoPay = requests.NewBoolean(true)
		}
		_, err := e.vpc.AllocateEipAddress(r)
		if got := apiCode(err); got != c.code {
			t.Errorf("Bandwidth %s %s %s: got %q (%v), want %q", c.bw, c.charge, c.inst, got, err, c.code)
		}
	}
	// A subscription needs AutoPay.
	pre := vpc.CreateAllocateEipAddressRequest()
	pre.RegionId, pre.InstanceChargeType = testRegion, "PrePaid"
	_, err := e.vpc.AllocateEipAddress(pre)
	wantCode(t, err, "MissingParameter")
	// Defaults: 5 Mbit/s, pay-as-you-go by bandwidth.
	def, err := e.allocateEip("", "")
	must(t, err)
	got := e.eips(def.AllocationId)[0]
	if got.Bandwidth != "5" || got.InternetChargeType != "PayByBandwidth" || got.ChargeType != "PostPaid" || got.Status != "Available" || got.IpAddress != def.EipAddress {
		t.Fatalf("default EIP: %+v", got)
	}
	// ModifyEipAddressAttribute holds the same limits.
	m := vpc.CreateModifyEipAddressAttributeRequest()
	m.RegionId, m.AllocationId, m.Bandwidth = testRegion, def.AllocationId, "501"
	_, err = e.vpc.ModifyEipAddressAttribute(m)
	wantCode(t, err, "InvalidParameter")
	m.Bandwidth, m.Name = "500", "egress"
	_, err = e.vpc.ModifyEipAddressAttribute(m)
	must(t, err)
	if got := e.eips(def.AllocationId)[0]; got.Bandwidth != "500" || got.Name != "egress" {
		t.Fatalf("after ModifyEipAddressAttribute: %+v", got)
	}
	// ClientToken: a retry gets the first address.
	r := vpc.CreateAllocateEipAddressRequest()
	r.RegionId, r.Bandwidth, r.ClientToken = testRegion, "50", "eip-token"
	a, err := e.vpc.AllocateEipAddress(r)
	must(t, err)
	r2 := vpc.CreateAllocateEipAddressRequest()
	r2.RegionId, r2.Bandwidth, r2.ClientToken = testRegion, "50", "eip-token"
	b, err := e.vpc.AllocateEipAddress(r2)
	must(t, err)
	if a.AllocationId != b.AllocationId || a.EipAddress != b.EipAddress {
		t.Fatalf("retry allocated a second EIP: %+v vs %+v", a, b)
	}
	// The region quota.
	for n := len(e.eips()); n < emuvpc.EipQuota; n++ {
		_, err := e.allocateEip("1", "")
		must(t, err)
	}
	_, err = e.allocateEip("1", "")
	wantCode(t, err, "QuotaExceeded.Eip")
	// Paging.
	d := vpc.CreateDescribeEipAddressesRequest()
	d.RegionId, d.PageSize, d.PageNumber = testRegion, requests.NewInteger(7), requests.NewInteger(3)
	page, err := e.vpc.DescribeEipAddresses(d)
	must(t, err)
	if page.TotalCount != emuvpc.EipQuota || len(page.EipAddresses.EipAddress) != emuvpc.EipQuota-14 {
		t.Fatalf("page 3 of 7: total %d, %d on the page", page.TotalCount, len(page.EipAddresses.EipAddress))
	}
}

func TestNatForceDeleteAndTags(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.netNetwork()
	// Without VSwitchId the gateway goes into the VPC's first Available vSwitch.
	cn := vpc.CreateCreateNatGatewayRequest()
	cn.RegionId, cn.VpcId = testRegion, f.vpcID
	created, err := e.vpc.CreateNatGateway(cn)
	must(t, err)
	natID, table := created.NatGatewayId, created.SnatTableIds.SnatTableId[0]
	if sw := e.nat(natID).NatGatewayPrivateInfo.VswitchId; sw != f.vswID {
		t.Fatalf("gateway placed in %s, want %s", sw, f.vswID)
	}
	eip, err := e.allocateEip("100", "PayByTraffic")
	must(t, err)
	must(t, e.associateEip(eip.AllocationId, natID, "Nat"))
	_, err = e.createSnat(table, "", "10.1.0.0/24", eip.EipAddress)
	must(t, err)
	_, err = e.createSnat(table, "", "10.1.0.0/16", eip.EipAddress)
	wantCode(t, err, "OperationUnsupported.CidrConflict")
	all := vpc.CreateDescribeSnatTableEntriesRequest() // neither table nor gateway: the region's entries
	all.RegionId = testRegion
	everywhere, err := e.vpc.DescribeSnatTableEntries(all)
	must(t, err)
	if everywhere.TotalCount != 1 || everywhere.SnatTableEntries.SnatTableEntry[0].SourceCIDR != "10.1.0.0/24" {
		t.Fatalf("DescribeSnatTableEntries of the region: %+v", everywhere.SnatTableEntries)
	}

	must(t, vpcTag(e, "NATGATEWAY", []string{natID}, "cluster", "c1"))
	must(t, vpcTag(e, "eip", []string{eip.AllocationId}, "cluster", "c1"))
	wantCode(t, vpcTag(e, "EIP", []string{"eip-missing"}, "cluster", "c1"), "InvalidResourceId.NotFound")
	// The vendor's DescribeNatGateways model names a gateway's tags TagKey/TagValue.
	if tags := natTagMap(e.nat(natID).Tags.Tag); tags["cluster"] != "c1" || len(tags) != 1 {
		t.Fatalf("gateway tags: %v", tags)
	}
	if tags := vpcTagMap(e.eips(eip.AllocationId)[0].Tags.Tag); tags["cluster"] != "c1" {
		t.Fatalf("EIP tags: %v", tags)
	}
	for _, typ := range []string{"NATGATEWAY", "EIP"} {
		l := vpc.CreateListTagResourcesRequest()
		l.RegionId, l.ResourceType = testRegion, typ
		l.Tag = &[]vpc.ListTagResourcesTag{{Key: "cluster", Value: "c1"}}
		resp, err := e.vpc.ListTagResources(l)
		must(t, err)
		if len(resp.TagResources.TagResource) != 1 {
			t.Fatalf("ListTagResources %s by tag: %+v", typ, resp.TagResources)
		}
	}
	m := vpc.CreateModifyNatGatewayAttributeRequest()
	m.RegionId, m.NatGatewayId, m.Name, m.Description = testRegion, natID, "x", "too short a name"
	_, err = e.vpc.ModifyNatGatewayAttribute(m)
	wantCode(t, err, "InvalidParameter.Name.Malformed")
	m.Name = "egress-2"
	_, err = e.vpc.ModifyNatGatewayAttribute(m)
	must(t, err)
	if n := e.nat(natID); n.Name != "egress-2" || n.Description != "too short a name" {
		t.Fatalf("after ModifyNatGatewayAttribute: %q %q", n.Name, n.Description)
	}
	d := vpc.CreateDescribeNatGatewaysRequest()
	d.RegionId, d.Tag = testRegion, &[]vpc.DescribeNatGatewaysTag{{Key: "cluster", Value: "c1"}}
	byTag, err := e.vpc.DescribeNatGateways(d)
	must(t, err)
	if byTag.TotalCount != 1 {
		t.Fatalf("DescribeNatGateways by tag: %d", byTag.TotalCount)
	}

	// Force deletes the SNAT entries and unbinds the EIP.
	must(t, e.deleteNat(natID, true))
	if st := e.eipStatus(eip.AllocationId); st != "Available" {
		t.Fatalf("EIP after a forced gateway delete: %s", st)
	}
	res := e.s.Resources()
	if len(res.NatGateways)+len(res.SnatEntries) != 0 || len(res.EIPs) != 1 {
		t.Fatalf("after forced delete: nat %v snat %v eip %v", res.NatGateways, res.SnatEntries, res.EIPs)
	}
}

func TestEipOnInstanceFollowsItsRelease(t *testing.T) {
	e := newEnv(t, Config{})
	fx := e.network("10.0.0.0/16", "10.0.1.0/24")
	run, err := e.ecs.RunInstances(e.runReq(fx, "ecs.gn6i-c4g1.xlarge", 1))
	must(t, err)
	id := run.InstanceIdSets.InstanceIdSet[0]
	a, err := e.allocateEip("10", "")
	must(t, err)
	b, err := e.allocateEip("10", "")
	must(t, err)
	wantCode(t, e.associateEip(a.AllocationId, "i-missing", ""), "InvalidInstanceId.NotFound")
	wantCode(t, e.associateEip(a.AllocationId, id, "SlbInstance"), "InvalidInstanceType.ValueNotSupported")
	must(t, e.associateEip(a.AllocationId, id, "")) // EcsInstance is the default
	wantCode(t, e.associateEip(b.AllocationId, id, "EcsInstance"), "InvalidAssociation.Duplicated")
	wantCode(t, e.associateEip(a.AllocationId, id, "EcsInstance"), "IncorrectEipStatus")
	got := e.eips(a.AllocationId)[0]
	if got.InstanceId != id || got.InstanceType != "EcsInstance" || got.PrivateIpAddress == "" || got.VpcId != fx.vpcID {
		t.Fatalf("EIP on an instance: %+v", got)
	}
	del := e.ecsDeleteReq(id)
	_, err = e.ecs.DeleteInstances(del)
	must(t, err)
	if st := e.eipStatus(a.AllocationId); st != "Available" {
		t.Fatalf("EIP of a released instance: %s", st)
	}
}

func (e *env) ecsDeleteReq(ids ...string) *ecs.DeleteInstancesRequest {
	r := ecs.CreateDeleteInstancesRequest()
	r.RegionId, r.InstanceId, r.Force = testRegion, &ids, requests.NewBoolean(true)
	return r
}
