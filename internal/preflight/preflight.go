// Package preflight answers, before anything is created, whether a stack fits what the account
// and the region give: the vCPU and GPU quotas, the stock of each instance type in each zone,
// the free addresses of each vSwitch and the quotas of EIPs, NAT gateways, load balancers and
// scaling groups. Each shortfall is a planerr.Error naming the attribute, what it needs, what is
// available and the fix; when nothing falls short, Report.Summary says by how much it fits.
// Report.Estimate is the API calls the create makes and their time at the provider's rate limit.
//
// Pure Go, no I/O and no provider types: the caller reads the account (DescribeAccountAttributes,
// DescribeAvailableResource, DescribeVSwitches and the other products' quotas) and the stack's
// plan, and hands both over as plain values.
package preflight

import (
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// Stack is what a plan would create.
type Stack struct {
	Pools         []Pool
	ScalingGroups []ScalingGroup
	// LoadBalancers, EIPs and NATGateways are how many of each the stack creates.
	LoadBalancers, EIPs, NATGateways int
	// Backends is how many servers the load balancers put behind them in all (the control
	// plane's nodes), for the call estimate.
	Backends int
}

// Pool is a node pool: Count nodes of one instance type, placed in Zones in order.
type Pool struct {
	// Path is the pool's attribute path, the prefix of its diagnostics' paths
	// ("pools[0]" or `node_pools["train"]`); the attributes under it are named as
	// gpucluster_node_pool names them: size, zone_ids, vswitch_ids (and max_size for a
	// ScalingGroup).
	Path         string
	InstanceType string
	// VCPUs and GPUs are one node's (the instance type's, from the catalog).
	VCPUs, GPUs int
	Count       int
	Spot        bool
	// SpotFallback is a spot pool whose scaling group makes up spot it cannot have with
	// pay-as-you-go nodes (ESS CompensateWithOnDemand): its nodes are placed by the pay-as-you-go
	// stock, as spot sold out does not stop it.
	SpotFallback bool
	// Fallbacks are the instance types the pool launches, in order, where InstanceType has no
	// stock: with instance_type_fallback, the catalog's next candidates (gpucluster_node_pool's
	// create tries every zone with one type before the next: poolplan.Tries). A zone where
	// InstanceType is out but a fallback is in stock still places nodes; the summary names
	// them. The quotas count the nodes at InstanceType's vCPUs and GPUs.
	Fallbacks []string
	// Zones are the zones the pool may use, in the order it fills them.
	Zones []string
	// VSwitches are the pool's vSwitch per zone.
	VSwitches map[string]VSwitch
	// AddressesPerNode is how many private addresses of its vSwitch one node takes: 1 (0 means
	// 1), or 1 plus the pods per node where the CNI gives pods VPC addresses.
	AddressesPerNode int
	// Attrs names the pool's attributes where they differ from the data source's: a
	// gpucluster_node_pool holds its vSwitches under network_id, an autoscaling pool's count is
	// autoscaling.max_size. Empty fields keep size, zone_ids and vswitch_ids.
	Attrs Attrs
}

// Attrs are the attribute names under Pool.Path a shortfall is pinned to.
type Attrs struct {
	Size, Zones, VSwitches string
}

func (p Pool) attr(name, def string) string {
	if name == "" {
		name = def
	}
	return planerr.Join(p.Path, name)
}

func (p Pool) sizeAttr() string    { return p.attr(p.Attrs.Size, "size") }
func (p Pool) zonesAttr() string   { return p.attr(p.Attrs.Zones, "zone_ids") }
func (p Pool) vswitchAttr() string { return p.attr(p.Attrs.VSwitches, "vswitch_ids") }

// types are the instance types p may launch, in the order it tries them.
func (p Pool) types() []string { return append([]string{p.InstanceType}, p.Fallbacks...) }

// typesWord names p's type and, with fallbacks, them too: "ecs.a or its fallbacks ecs.b, ecs.c".
func (p Pool) typesWord() string {
	if len(p.Fallbacks) == 0 {
		return p.InstanceType
	}
	return p.InstanceType + " or its fallbacks " + strings.Join(p.Fallbacks, ", ")
}

func (p Pool) addressesPerNode() int { return max(p.AddressesPerNode, 1) }

// perNodeNote says, when a node takes more than one address, how the need is made up.
func (p Pool) perNodeNote(nodes int) string {
	if p.addressesPerNode() == 1 {
		return ""
	}
	return fmt.Sprintf(" (%d nodes at %d addresses each)", nodes, p.addressesPerNode())
}

// ScalingGroup is an Auto Scaling group: it may grow to MaxSize instances of InstanceType,
// which the quotas must hold although none are created with it.
type ScalingGroup struct {
	Path         string
	InstanceType string
	VCPUs, GPUs  int
	MaxSize      int
	Spot         bool
	// Limit is the group's max_size as CreateScalingGroup is asked for it, held to
	// Account.ScalingGroupMaxSize; 0 means MaxSize. (MaxSize may be only what the quotas must
	// hold beyond the nodes a pool starts with.)
	Limit int
}

func (g ScalingGroup) limit() int {
	if g.Limit > 0 {
		return g.Limit
	}
	return g.MaxSize
}

// VSwitch is a vSwitch a pool places nodes in.
type VSwitch struct {
	ID, CIDR string
}

// Quota is a limit and how much of it is in use. Max <= 0 means unknown: not checked.
type Quota struct {
	Max, Used int
	// Why, for a quota not read, says why: the summary gives it beside "not checked".
	Why string
}

// Known is whether the quota was read: an unknown one is not checked.
func (q Quota) Known() bool { return q.Max > 0 }
func (q Quota) left() int   { return max(q.Max-q.Used, 0) }

// VPCInstanceCapacity is the instances one VPC holds (see Account.VPCInstances).
const VPCInstanceCapacity = 15000

// Stock statuses, as DescribeAvailableResource answers a type in a zone.
const (
	Available = "Available"
	SoldOut   = "SoldOut"
)

// Account is what the account and the region give.
type Account struct {
	// PostpaidVCPUs and SpotVCPUs are DescribeAccountAttributes' max-/used-postpaid- and
	// max-/used-spot-instance-vcpu-count; GPUs the account's GPU quota.
	PostpaidVCPUs, SpotVCPUs, GPUs Quota
	// Stock is zone -> instance type -> status (Available, SoldOut); a type a zone does not list
	// is not sold there. A nil Stock is unknown: not checked.
	Stock map[string]map[string]string
	// SpotStock is Stock as DescribeAvailableResource answers it asked with a SpotStrategy: a
	// spot pool's nodes are placed by it, as the vendor leaves out of that answer the types it
	// sells pay-as-you-go only
	// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeavailableresource,
	// SpotStrategy). Nil while no pool is spot: unknown, spot pools are then placed by Stock.
	SpotStock map[string]map[string]string
	// SpecGPUs is zone -> instance type -> the Quota Center's pay-as-you-go ecs-spec quota of the
	// type there, in GPUs (QuotaSpec). A pay-as-you-go pool's planned type places no more nodes in
	// a zone than its quota leaves; a zone or type not listed is unknown: not checked.
	SpecGPUs map[string]map[string]Quota
	// FreeAddresses is vSwitch id -> its free private addresses (DescribeVSwitches
	// AvailableIpAddressCount). A vSwitch not listed is unknown: not checked.
	FreeAddresses map[string]int
	// EIPs, NATGateways, LoadBalancers and ScalingGroups are the region's quotas of each.
	EIPs, NATGateways, LoadBalancers, ScalingGroups Quota
	// NATVPC is the existing VPC the stack's NAT gateways go in, whose gateways are
	// NATGateways.Used ("" for a VPC the stack creates: none in use). The NAT gateway quota
	// counts per VPC (QuotaNATGateways).
	NATVPC string
	// VPCInstances is how many instances the stack's VPC holds: "The number of instances in a
	// vSwitch cannot exceed the remaining capacity of the VPC. The remaining capacity is the
	// difference between 15,000 and the current number of instances" (CreateVSwitch,
	// https://www.alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-createvswitch).
	// Max is VPCInstanceCapacity and Used the instances in the VPC already, for an existing one.
	VPCInstances Quota
	// ScalingGroupMaxSize is the largest MaxSize one scaling group may have; 0 is unknown.
	ScalingGroupMaxSize int
}

// Report is the preflight's answer.
type Report struct {
	// Shortfalls are what does not fit, each naming its attribute and the fix; none when the
	// stack fits.
	Shortfalls []*planerr.Error
	// Summary says, when the stack fits, what it takes of each quota; when it does not, how
	// many shortfalls there are. Unknown figures are named as not checked.
	Summary  string
	Estimate Estimate
}

// Fits is whether nothing falls short.
func (r Report) Fits() bool { return len(r.Shortfalls) == 0 }

// Check compares the stack with the account. rateLimit is the provider's client-side ceiling on
// requests per second (cloud.Config.RateLimit, cloud.DefaultRateLimit when the provider block
// leaves it out).
func Check(s Stack, a Account, rateLimit float64) Report {
	var r Report
	var notes []string
	r.Shortfalls = append(r.Shortfalls, checkQuotas(s, a, &notes)...)
	r.Shortfalls = append(r.Shortfalls, checkPlacement(s, a, &notes)...)
	r.Shortfalls = append(r.Shortfalls, checkNetworkQuotas(s, a, &notes)...)
	r.Estimate = EstimateCalls(s, rateLimit)
	if len(r.Shortfalls) > 0 {
		r.Summary = fmt.Sprintf("%d shortfall(s): the create would fail part-way", len(r.Shortfalls))
	} else {
		r.Summary = "fits: " + strings.Join(notes, "; ")
	}
	r.Summary += fmt.Sprintf("; about %d API calls, %s at %g requests/s", r.Estimate.Total, r.Estimate.Duration, rateLimit)
	return r
}
