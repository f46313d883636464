package provider

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/network"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/preflight"
)

type preflightModel struct {
	Pools                  []preflightPoolModel `tfsdk:"pools"`
	LoadBalancers          types.Int64          `tfsdk:"load_balancers"`
	LoadBalancerBackends   types.Int64          `tfsdk:"load_balancer_backends"`
	EIPs                   types.Int64          `tfsdk:"eips"`
	NATGateways            types.Int64          `tfsdk:"nat_gateways"`
	Enforce                types.Bool           `tfsdk:"enforce"`
	Region                 types.String         `tfsdk:"region"`
	Fits                   types.Bool           `tfsdk:"fits"`
	Summary                types.String         `tfsdk:"summary"`
	Shortfalls             []string             `tfsdk:"shortfalls"`
	APICalls               types.Int64          `tfsdk:"api_calls"`
	Calls                  map[string]int64     `tfsdk:"calls"`
	EstimatedCreateSeconds types.Int64          `tfsdk:"estimated_create_seconds"`
}

type preflightPoolModel struct {
	Name             types.String `tfsdk:"name"`
	InstanceType     types.String `tfsdk:"instance_type"`
	FallbackTypes    []string     `tfsdk:"fallback_instance_types"`
	Size             types.Int64  `tfsdk:"size"`
	MaxSize          types.Int64  `tfsdk:"max_size"`
	Spot             types.Bool   `tfsdk:"spot"`
	ZoneIDs          []string     `tfsdk:"zone_ids"`
	NetworkID        types.String `tfsdk:"network_id"`
	VSwitchIDs       []string     `tfsdk:"vswitch_ids"`
	AddressesPerNode types.Int64  `tfsdk:"addresses_per_node"`
}

// preflightStack maps the configuration onto a preflight.Stack; a pool's zones and vSwitches are
// filled in by readPreflightAccount. An instance type the catalog does not know, or a max_size
// under size, is a planerr.Error on the pool's attribute.
func preflightStack(m preflightModel) (preflight.Stack, error) {
	s := preflight.Stack{
		LoadBalancers: int(m.LoadBalancers.ValueInt64()),
		EIPs:          int(m.EIPs.ValueInt64()),
		NATGateways:   int(m.NATGateways.ValueInt64()),
		Backends:      int(m.LoadBalancerBackends.ValueInt64()),
	}
	for i, p := range m.Pools {
		at := planerr.Index("pools", i)
		t, err := poolInstanceType(planerr.Join(at, "instance_type"), p.InstanceType.ValueString())
		if err != nil {
			return s, err
		}
		fallbacks, err := preflightFallbacks(at, p.FallbackTypes)
		if err != nil {
			return s, err
		}
		size, maxSize := int(p.Size.ValueInt64()), int(p.MaxSize.ValueInt64())
		if !p.MaxSize.IsNull() && maxSize < size {
			return s, planerr.Input(planerr.Join(at, "max_size"), fmt.Sprint(maxSize),
				fmt.Sprintf("is below size (%d): the pool cannot start larger than it may grow", size),
				"set max_size to at least size, or leave it out for a pool of fixed size")
		}
		pool := preflight.Pool{Path: at, InstanceType: t.Name, VCPUs: t.VCPU, GPUs: t.GPUs, Count: size,
			Spot: p.Spot.ValueBool(), Zones: slices.Clone(p.ZoneIDs), VSwitches: map[string]preflight.VSwitch{},
			AddressesPerNode: int(p.AddressesPerNode.ValueInt64()), Fallbacks: fallbacks}
		s.Pools = append(s.Pools, pool)
		// What the autoscaler may add beyond size is held to the quotas like a scaling group.
		if maxSize > size {
			s.ScalingGroups = append(s.ScalingGroups, preflight.ScalingGroup{Path: at, InstanceType: t.Name,
				VCPUs: t.VCPU, GPUs: t.GPUs, MaxSize: maxSize - size, Spot: pool.Spot, Limit: maxSize})
		}
	}
	return s, nil
}

// preflightFallbacks are a pool's fallback_instance_types by the catalog's names; a type the
// catalog does not know is a planerr.Error on its element.
func preflightFallbacks(at string, names []string) ([]string, error) {
	out := make([]string, 0, len(names))
	for j, name := range names {
		t, err := poolInstanceType(planerr.Index(planerr.Join(at, "fallback_instance_types"), j), name)
		if err != nil {
			return nil, err
		}
		out = append(out, t.Name)
	}
	return out, nil
}

// poolInstanceType is the catalog's type of name; one it does not know is a planerr.Error on
// path, the attribute of the pool that names it (the catalog's message names no pool).
func poolInstanceType(path, name string) (catalog.InstanceType, error) {
	t, err := catalog.ParseInstanceType(name)
	if pe, ok := planerr.As(err); ok {
		return t, planerr.Input(path, pe.Value, pe.Why, pe.Fix)
	}
	return t, err
}

// readPreflightAccount reads what the account gives, batched: DescribeAccountAttributes once,
// DescribeAvailableResource once for the whole region, each network's vSwitches once
// (DescribeSecurityGroups and a paged DescribeVSwitches) and each vswitch_ids entry once. It
// fills each pool's vSwitches and zones in s.
func readPreflightAccount(ctx context.Context, c *cloud.Client, m preflightModel, s *preflight.Stack) (preflight.Account, error) {
	var spotStocks func(context.Context) ([]cloud.InstanceTypeStock, error)
	for _, p := range s.Pools {
		if p.Spot {
			spotStocks = c.SpotInstanceTypeStocks
		}
	}
	a, err := readQuotasAndStock(ctx, c, spotStocks)
	if err != nil {
		return a, err
	}
	if len(s.ScalingGroups) > 0 {
		if err := readScalingQuota(ctx, c, &a); err != nil {
			return a, err
		}
	}
	if err := readCenterQuotas(ctx, c, *s, &a); err != nil {
		return a, err
	}
	var vpcs []string // the VPCs of the pools' vSwitches, in order met
	byNetwork, byID := map[string][]cloud.VSwitch{}, map[string]cloud.VSwitch{}
	for i, p := range m.Pools {
		var mine []cloud.VSwitch
		if id := p.NetworkID.ValueString(); id != "" {
			if _, seen := byNetwork[id]; !seen {
				rec, err := network.Lookup(ctx, c, id, "")
				if err != nil {
					return a, err
				}
				byNetwork[id] = rec.VSwitches
			}
			mine = append(mine, byNetwork[id]...)
		}
		for _, id := range p.VSwitchIDs {
			if _, seen := byID[id]; !seen {
				sw, err := c.FindVSwitch(ctx, id)
				if err != nil {
					return a, fmt.Errorf("pools[%d].vswitch_ids: vSwitch %s: %w", i, id, err)
				}
				byID[id] = *sw
			}
			mine = append(mine, byID[id])
		}
		for _, sw := range mine {
			if !slices.Contains(vpcs, sw.VPCID) {
				vpcs = append(vpcs, sw.VPCID)
			}
		}
		placePool(&s.Pools[i], mine, a)
	}
	return a, countNATGateways(ctx, c, s.NATGateways, vpcs, &a)
}

// countNATGateways is the usage of the per-VPC NAT gateway quota: the gateways already in the
// VPC the stack's NAT gateways go in, one DescribeNatGateways (paged) per VPC of the pools'
// vSwitches, only for a stack with nat_gateways whose quota was read. The stack's NAT gateways
// go in its pools' VPC; pools in several VPCs are held to the fullest one, so the check errs on
// the side of a shortfall. Pools without existing vSwitches go in a VPC the stack creates: none
// in use.
func countNATGateways(ctx context.Context, c *cloud.Client, want int, vpcs []string, a *preflight.Account) error {
	if want <= 0 || !a.NATGateways.Known() {
		return nil
	}
	for _, id := range vpcs {
		nats, err := c.FindNATGateways(ctx, id, nil)
		if err != nil {
			return fmt.Errorf("DescribeNatGateways in %s: %w", id, err)
		}
		if a.NATVPC == "" || len(nats) > a.NATGateways.Used {
			a.NATVPC, a.NATGateways.Used = id, len(nats)
		}
	}
	return nil
}

// readQuotasAndStock reads the vCPU quotas (DescribeAccountAttributes) and the region's stock
// (DescribeAvailableResource), once each; with spotStocks (nil when no pool is spot), the spot
// stock too (one more DescribeAvailableResource, with SpotStrategy, or an answer already read).
func readQuotasAndStock(ctx context.Context, c *cloud.Client, spotStocks func(context.Context) ([]cloud.InstanceTypeStock, error)) (preflight.Account, error) {
	var a preflight.Account
	q, err := c.AccountAttributes(ctx, "")
	if err != nil {
		return a, fmt.Errorf("DescribeAccountAttributes: %w", err)
	}
	a.PostpaidVCPUs = preflight.Quota{Max: q.PostpaidVCPUs, Used: q.PostpaidVCPUsUsed}
	a.SpotVCPUs = preflight.Quota{Max: q.SpotVCPUs, Used: q.SpotVCPUsUsed}
	if a.Stock, err = readStock(ctx, c.InstanceTypeStocks); err != nil {
		return a, fmt.Errorf("DescribeAvailableResource: %w", err)
	}
	if spotStocks != nil {
		if a.SpotStock, err = readStock(ctx, spotStocks); err != nil {
			return a, fmt.Errorf("DescribeAvailableResource (spot): %w", err)
		}
	}
	a.FreeAddresses = map[string]int{}
	return a, nil
}

// readScalingQuota reads the Auto Scaling quota (two calls, for a stack with scaling groups only).
func readScalingQuota(ctx context.Context, c *cloud.Client, a *preflight.Account) error {
	q, err := c.ScalingGroupQuota(ctx)
	if err != nil {
		return err
	}
	a.ScalingGroups = preflight.Quota{Max: q.MaxGroups, Used: q.Groups}
	a.ScalingGroupMaxSize = q.MaxSize
	return nil
}

// readCenterQuotas reads the Quota Center's EIP, CLB instance and per-VPC NAT gateway quotas,
// one ListProductQuotas each and only for a stack that creates EIPs, load balancers or NAT
// gateways; it names why the GPU quota is not read. The NAT gateway quota's usage is the
// stack's VPC's (countNATGateways), not the answer's.
func readCenterQuotas(ctx context.Context, c *cloud.Client, s preflight.Stack, a *preflight.Account) error {
	a.GPUs.Why = preflight.WhyGPUNotChecked
	for _, q := range []struct {
		n             int
		product, code string
		into          *preflight.Quota
	}{
		// Product codes as the Quota Center console's address names them
		// (https://quotas.console.alibabacloud.com/products/slb/quotas?query=slb_quota_instances_num).
		{s.EIPs, "eip", preflight.QuotaEIPs, &a.EIPs},
		{s.LoadBalancers, "slb", preflight.QuotaCLBs, &a.LoadBalancers},
		// NAT Gateway's product in the Quota Center (see internal/emulator/quotas).
		{s.NATGateways, "nat", preflight.QuotaNATGateways, &a.NATGateways},
	} {
		if q.n <= 0 {
			continue
		}
		got, found, err := c.QuotaCenterQuota(ctx, q.product, q.code)
		if err != nil {
			return err
		}
		if !found {
			q.into.Why = "the Quota Center lists no " + q.code + " for the account"
			continue
		}
		*q.into = preflight.Quota{Max: got.Max, Used: got.Used}
	}
	a.NATGateways.Used = 0 // counted in the stack's VPC
	return readSpecQuotas(ctx, c, s, a)
}

// readSpecQuotas reads the region's pay-as-you-go ecs-spec GPU quotas (one ListProductQuotas,
// paged), only for a stack with a pay-as-you-go GPU pool: each such pool's type is held to them
// zone by zone as it is placed.
func readSpecQuotas(ctx context.Context, c *cloud.Client, s preflight.Stack, a *preflight.Account) error {
	if !slices.ContainsFunc(s.Pools, func(p preflight.Pool) bool { return !p.Spot && p.GPUs > 0 }) {
		return nil
	}
	qs, err := c.PayAsYouGoSpecQuotas(ctx)
	if err != nil {
		return err
	}
	a.SpecGPUs = map[string]map[string]preflight.Quota{}
	for _, q := range qs {
		if a.SpecGPUs[q.ZoneID] == nil {
			a.SpecGPUs[q.ZoneID] = map[string]preflight.Quota{}
		}
		a.SpecGPUs[q.ZoneID][normalizeTypeName(q.InstanceType)] = preflight.Quota{Max: q.Max, Used: q.Used}
	}
	a.GPUs.Why = preflight.WhyGPUPerType
	return nil
}

// readStock is a stock answer as zone -> instance type (the catalog's name) -> status.
func readStock(ctx context.Context, read func(context.Context) ([]cloud.InstanceTypeStock, error)) (map[string]map[string]string, error) {
	stocks, err := read(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, st := range stocks {
		if out[st.ZoneID] == nil {
			out[st.ZoneID] = map[string]string{}
		}
		out[st.ZoneID][normalizeTypeName(st.InstanceType)] = st.Status
	}
	return out, nil
}

// placePool gives p its vSwitches (the first one named for each zone) and, when zone_ids leaves
// them out, its zones: those of its vSwitches in order, or without any, every zone of the region
// that lists a type (stock checked, addresses not: the vSwitches do not exist yet).
func placePool(p *preflight.Pool, vsws []cloud.VSwitch, a preflight.Account) {
	var zones []string
	for _, sw := range vsws {
		if _, ok := p.VSwitches[sw.ZoneID]; ok {
			continue
		}
		p.VSwitches[sw.ZoneID] = preflight.VSwitch{ID: sw.ID, CIDR: sw.CIDRBlock}
		a.FreeAddresses[sw.ID] = sw.FreeAddresses
		zones = append(zones, sw.ZoneID)
	}
	if len(vsws) == 0 {
		for z := range a.Stock {
			zones = append(zones, z)
		}
		sort.Strings(zones)
		for _, z := range zones {
			p.VSwitches[z] = preflight.VSwitch{} // no id: its free addresses are unknown
		}
	}
	if len(p.Zones) == 0 {
		p.Zones = zones
	}
}

// shortfallText is a shortfall's message, led by the name of the pool it is about when the pool
// has one: a module's shortfalls then name its own pools, not only the data source's indexes.
func shortfallText(e *planerr.Error, pools []preflightPoolModel) string {
	for i, p := range pools {
		at := planerr.Index("pools", i)
		if name := p.Name.ValueString(); name != "" && (e.Path == at || strings.HasPrefix(e.Path, at+".")) {
			return fmt.Sprintf("pool %q: %s", name, e.Error())
		}
	}
	return e.Error()
}
