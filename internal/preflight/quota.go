package preflight

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// QuotaCenter is where the vendor raises a quota: "You can apply for a quota increase in the
// Quota Center console" (DescribeAccountAttributes,
// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeaccountattributes).
const QuotaCenter = "https://quotas.console.aliyun.com"

// The Quota Center's codes (QuotaActionCode) of the quotas the preflight reads there, each as a
// vendor page names it.
const (
	// QuotaEIPs: "eip_quota_instances_num: Maximum number of EIPs that each Alibaba Cloud
	// account can have" (https://www.alibabacloud.com/help/en/eip/quota-management).
	QuotaEIPs = "eip_quota_instances_num"
	// QuotaCLBs: "slb_quota_instances_num: The maximum number of CLB instances that can be
	// created within an Alibaba Cloud account"
	// (https://www.alibabacloud.com/help/en/slb/classic-load-balancer/user-guide/quotas).
	QuotaCLBs = "slb_quota_instances_num"
	// QuotaNATGateways: "natgw_quota_nat_num_per_vpc: Maximum number of NAT gateways that can
	// be created in each VPC" (https://www.alibabacloud.com/help/en/nat-gateway/user-guide/quotas).
	// It counts per VPC: the stack's NAT gateways are held to it in the VPC they go in
	// (Account.NATVPC), with the gateways already there as its usage.
	QuotaNATGateways = "natgw_quota_nat_num_per_vpc"
	// QuotaSpec is the Quota Center's product of "ECS Quotas by Instance Type": one quota per
	// instance type, GPUs for a GPU type, by zone and billing method (the sources are above
	// WhyGPUPerType and in internal/emulator/quotas).
	QuotaSpec = "ecs-spec"
)

// The vendor has no account-wide GPU quota: its GPU quotas are the Quota Center's "ECS Quotas by
// Instance Type", product ecs-spec, one quota per instance type
// (https://www.alibabacloud.com/help/en/quota-center/developer-reference/api-quotas-2020-05-10-listproductquotas),
// "the maximum number of GPUs ... per account per region, broken down by billing method"
// (https://www.alibabacloud.com/help/doc-detail/25412.htm, "GPU and vGPU quotas"), "allocated
// based on zones, instance types, billing methods, and network types"
// (https://www.alibabacloud.com/help/doc-detail/163120.htm). Account.SpecGPUs holds them, and the
// placement holds each pay-as-you-go pool to its type's quota zone by zone; Account.GPUs stays
// unknown, its Why one of these.
const (
	WhyGPUNotChecked = "the Quota Center's GPU quotas (product ecs-spec, per instance type, zone and billing method) were not read"
	WhyGPUPerType    = "no account-wide GPU quota: the pay-as-you-go pools are held to the Quota Center's ecs-spec quota of their type, zone by zone"
)

// use is one attribute's share of a quota: n units of per each.
type use struct {
	path   string
	n, per int
}

func (u use) total() int { return u.n * u.per }

// demand is what the stack asks of one quota.
type demand struct {
	quota string // the quota's name, as DescribeAccountAttributes or the Quota Center names it
	unit  string
	uses  []use
	// fixed is the fix of a limit the Quota Center does not raise; "" for a quota it does.
	fixed string
}

func (d demand) total() int {
	n := 0
	for _, u := range d.uses {
		n += u.total()
	}
	return n
}

// largest is the use that takes most: the attribute a shortfall is pinned to.
func (d demand) largest() use {
	best := d.uses[0]
	for _, u := range d.uses[1:] {
		if u.total() > best.total() {
			best = u
		}
	}
	return best
}

// checkQuotas holds the instances (pools at count, scaling groups at max size, as the autoscaler
// may take them there) to the pay-as-you-go and spot vCPU quotas, the GPU quota and the VPC's
// capacity.
func checkQuotas(s Stack, a Account, notes *[]string) []*planerr.Error {
	postpaid := demand{quota: "max-postpaid-instance-vcpu-count", unit: "vCPUs"}
	spot := demand{quota: "max-spot-instance-vcpu-count", unit: "vCPUs"}
	gpus := demand{quota: "the GPU quota", unit: "GPUs"}
	add := func(path string, n, vcpus, g int, isSpot bool) {
		if n <= 0 {
			return
		}
		if isSpot {
			spot.uses = append(spot.uses, use{path, n, vcpus})
		} else {
			postpaid.uses = append(postpaid.uses, use{path, n, vcpus})
		}
		if g > 0 {
			gpus.uses = append(gpus.uses, use{path, n, g})
		}
	}
	vpc := demand{quota: "the VPC's instance capacity", unit: "instances", fixed: "put part of the stack in another VPC"}
	for _, p := range s.Pools {
		add(p.sizeAttr(), p.Count, p.VCPUs, p.GPUs, p.Spot)
		vpc.uses = append(vpc.uses, use{p.sizeAttr(), p.Count, 1})
	}
	for _, g := range s.ScalingGroups {
		add(planerr.Join(g.Path, "max_size"), g.MaxSize, g.VCPUs, g.GPUs, g.Spot)
		vpc.uses = append(vpc.uses, use{planerr.Join(g.Path, "max_size"), g.MaxSize, 1})
	}
	var out []*planerr.Error
	for _, c := range []struct {
		d demand
		q Quota
	}{{postpaid, a.PostpaidVCPUs}, {spot, a.SpotVCPUs}, {gpus, a.GPUs}, {vpc, a.VPCInstances}} {
		if e := c.d.against(c.q, notes); e != nil {
			out = append(out, e)
		}
	}
	return out
}

// against is the shortfall of d under q, or nil; it notes how d fits otherwise.
func (d demand) against(q Quota, notes *[]string) *planerr.Error {
	if d.fits(q, notes) {
		return nil
	}
	need := d.total()
	big := d.largest()
	short := need - q.left()
	fewer := (short + big.per - 1) / big.per
	why := fmt.Sprintf("needs %d %s (%s) but %s is %d with %d in use: %d available, %d short",
		need, d.unit, d.shares(), d.quota, q.Max, q.Used, q.left(), short)
	fix := fmt.Sprintf("raise %s to at least %d in the Quota Center (%s), or lower %s by %d", d.quota, q.Used+need, QuotaCenter, big.path, fewer)
	if fewer > big.n {
		fix = fmt.Sprintf("raise %s to at least %d in the Quota Center (%s)", d.quota, q.Used+need, QuotaCenter)
	}
	if d.fixed != "" {
		fix = fmt.Sprintf("%s, or lower %s by %d", d.fixed, big.path, fewer)
	}
	return planerr.Input(big.path, strconv.Itoa(big.n), why, fix).WithSupported(fmt.Sprintf("at most %d %s in all", q.left(), d.unit))
}

// fits is whether d fits q, or q is unknown; it notes how, or that q was not checked.
func (d demand) fits(q Quota, notes *[]string) bool {
	need := d.total()
	switch {
	case need == 0:
		return true
	case !q.Known():
		why := q.Why
		if why == "" {
			why = "quota unknown"
		}
		*notes = append(*notes, fmt.Sprintf("%s not checked (%s)", d.quota, why))
		return true
	case need <= q.left():
		*notes = append(*notes, fmt.Sprintf("%d of %d %s left under %s", need, q.left(), d.unit, d.quota))
		return true
	}
	return false
}

// shares lists each attribute's share, largest first: "pools.a.count 800, pools.b.count 400".
func (d demand) shares() string {
	us := append([]use(nil), d.uses...)
	sort.SliceStable(us, func(i, j int) bool { return us[i].total() > us[j].total() })
	parts := make([]string, 0, len(us))
	for _, u := range us {
		parts = append(parts, fmt.Sprintf("%s %d", u.path, u.total()))
	}
	return strings.Join(parts, ", ")
}

// checkNetworkQuotas holds the stack's EIPs, NAT gateways, load balancers and scaling groups to
// the region's quotas, and each scaling group's max size to the largest one allowed.
func checkNetworkQuotas(s Stack, a Account, notes *[]string) []*planerr.Error {
	var out []*planerr.Error
	for _, c := range []struct {
		path, quota, unit string
		n                 int
		q                 Quota
	}{
		{"eips", "the EIP quota (" + QuotaEIPs + ")", "EIPs", s.EIPs, a.EIPs},
		{"nat_gateways", natQuotaName(a.NATVPC), "NAT gateways", s.NATGateways, a.NATGateways},
		{"load_balancers", "the CLB instance quota (" + QuotaCLBs + ")", "load balancers", s.LoadBalancers, a.LoadBalancers},
	} {
		d := demand{quota: c.quota, unit: c.unit, uses: []use{{c.path, c.n, 1}}}
		if e := d.against(c.q, notes); e != nil {
			out = append(out, e)
		}
	}
	if e := checkGroupCount(s.ScalingGroups, a.ScalingGroups, notes); e != nil {
		out = append(out, e)
	}
	if a.ScalingGroupMaxSize > 0 {
		for _, g := range s.ScalingGroups {
			if g.limit() > a.ScalingGroupMaxSize {
				out = append(out, planerr.Input(planerr.Join(g.Path, "max_size"), strconv.Itoa(g.limit()),
					fmt.Sprintf("is above the largest max size a scaling group may have here, %d", a.ScalingGroupMaxSize),
					fmt.Sprintf("lower it to %d or split the pool, or raise the scaling group size quota in the Quota Center (%s)", a.ScalingGroupMaxSize, QuotaCenter)).
					WithSupported(fmt.Sprintf("0..%d", a.ScalingGroupMaxSize)))
			}
		}
	}
	return out
}

// checkGroupCount holds the scaling groups the stack creates to the region's scaling group quota
// (DescribeLimitation MaxNumberOfScalingGroups against the groups DescribeScalingGroups counts).
// The shortfall is pinned to the last group's max_size: the pools past the quota are the ones
// that would fail.
func checkGroupCount(groups []ScalingGroup, q Quota, notes *[]string) *planerr.Error {
	need := len(groups)
	if (demand{quota: "the scaling group quota", unit: "scaling groups", uses: []use{{"", need, 1}}}).fits(q, notes) {
		return nil
	}
	last := groups[need-1]
	at := planerr.Join(last.Path, "max_size")
	return planerr.Input(at, strconv.Itoa(last.limit()),
		fmt.Sprintf("makes the pool autoscaling, and the stack's %d scaling group(s) exceed the scaling group quota: %d with %d in use, %d available",
			need, q.Max, q.Used, q.left()),
		fmt.Sprintf("raise the scaling group quota (Auto Scaling, MaxNumberOfScalingGroups) to at least %d in the Quota Center (%s), delete %d unused scaling group(s), or make %d pool(s) fixed-size (no max_size above size)",
			q.Used+need, QuotaCenter, need-q.left(), need-q.left())).
		WithSupported(fmt.Sprintf("at most %d new scaling groups", q.left()))
}

// natQuotaName names the per-VPC NAT gateway quota, with the VPC it is counted in when the stack
// goes in an existing one.
func natQuotaName(vpc string) string {
	if vpc == "" {
		return "the NAT gateway quota per VPC (" + QuotaNATGateways + ")"
	}
	return "the NAT gateway quota per VPC (" + QuotaNATGateways + ") in " + vpc
}
