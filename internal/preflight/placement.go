package preflight

import (
	"cmp"
	"fmt"
	"math/bits"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// Smallest and largest vSwitch blocks the vendor allows (CreateVSwitch CidrBlock: a mask of /16
// to /29), and "after you create a vSwitch, you cannot modify its CIDR block",
// so a wider block is a new vSwitch
// (https://www.alibabacloud.com/help/en/vpc/developer-reference/api-vpc-2016-04-28-createvswitch).
const (
	widestVSwitchPrefix    = 16
	narrowestVSwitchPrefix = 29
)

// placer fills pools into zones the way a create would: each pool's zones in order, each zone
// taking what its vSwitch's free addresses allow (shared by the pools on one vSwitch) where the
// type has stock.
type placer struct {
	a     Account
	taken map[string]int // vSwitch id -> addresses the pools before took
	// gpus is the GPUs of a zone's ecs-spec quota of a type that the pools before took.
	gpus map[zoneType]int
}

// zoneType keys a quota of one instance type in one zone.
type zoneType struct{ zone, typ string }

// checkPlacement places every pool, and names for each that does not fit the zones or the
// vSwitches that stop it, and for each that does only with fallback types, how many nodes those
// take.
func checkPlacement(s Stack, a Account, notes *[]string) []*planerr.Error {
	pl := placer{a: a, taken: make(map[string]int, len(s.Pools)), gpus: map[zoneType]int{}}
	var out []*planerr.Error
	var onFallbacks []string
	placed := 0
	for _, p := range s.Pools {
		pp := pl.place(p)
		placed += p.Count - pp.left
		onFallbacks = append(onFallbacks, pp.onFallback...)
		if pp.left == 0 {
			continue
		}
		if len(pp.specShort) > 0 {
			out = append(out, pl.specShortfall(p, pp))
		} else if e := pl.shortfall(p, pp.left, pp.stockless, pp.full); e != nil {
			out = append(out, e)
		}
	}
	if placed > 0 {
		*notes = append(*notes, fmt.Sprintf("%d nodes placed in zones with stock and vSwitches with free addresses", placed))
	}
	*notes = append(*notes, onFallbacks...)
	return out
}

// placement is where one pool's nodes went.
type placement struct {
	// left is how many nodes found no place.
	left int
	// stockless are the zones without stock of any of the pool's types (or without a vSwitch),
	// full the vSwitches that ran out of addresses.
	stockless []string
	full      []VSwitch
	// onFallback says, for each fallback type that took nodes, how many where.
	onFallback []string
	// specShort are the zones whose ecs-spec GPU quota of the pool's type stopped it.
	specShort []string
}

// place takes p's nodes as a create would: its instance type over its zones in order, then each
// fallback type over them (poolplan.Tries), each zone as far as its vSwitch's free addresses go.
func (pl *placer) place(p Pool) placement {
	pp := placement{left: p.Count}
	types := p.types()
	isFull := map[string]bool{}
	for ti, typ := range types {
		var taken []string // "<nodes> in <zone>" of a fallback type
		for _, z := range p.Zones {
			if pp.left == 0 {
				break
			}
			vsw, ok := p.VSwitches[z]
			if !ok || !pl.inStock(z, typ, p) {
				continue
			}
			want := pp.left
			if ti == 0 {
				want = pl.specLeft(p, z, want)
			}
			n := pl.take(vsw, want, p.addressesPerNode())
			if ti == 0 {
				pl.takeGPUs(p, z, n)
			}
			if want < pp.left && n == want {
				pp.specShort = append(pp.specShort, z)
			}
			pp.left -= n
			if ti > 0 && n > 0 {
				taken = append(taken, fmt.Sprintf("%d in %s", n, z))
			}
			if n < want && !isFull[vsw.ID] {
				isFull[vsw.ID] = true
				pp.full = append(pp.full, vsw)
			}
		}
		if len(taken) > 0 {
			pp.onFallback = append(pp.onFallback, fmt.Sprintf("%s: %s out of stock or quota, nodes on fallback %s (%s)",
				p.sizeAttr(), p.InstanceType, typ, strings.Join(taken, ", ")))
		}
		if pp.left == 0 {
			return pp
		}
	}
	for _, z := range p.Zones {
		if _, ok := p.VSwitches[z]; !ok || !slices.ContainsFunc(types, func(t string) bool { return pl.inStock(z, t, p) }) {
			pp.stockless = append(pp.stockless, z)
		}
	}
	return pp
}

// spec is the ecs-spec GPU quota of p's type in zone, when p is held to one: a pay-as-you-go
// GPU pool whose type's quota there was read.
func (pl *placer) spec(p Pool, zone string) (Quota, bool) {
	if p.Spot || p.GPUs <= 0 {
		return Quota{}, false
	}
	q, ok := pl.a.SpecGPUs[zone][p.InstanceType]
	return q, ok
}

// specLeft caps want nodes of p in zone by what its ecs-spec GPU quota there leaves.
func (pl *placer) specLeft(p Pool, zone string, want int) int {
	q, ok := pl.spec(p, zone)
	if !ok {
		return want
	}
	return min(want, max(q.left()-pl.gpus[zoneType{zone, p.InstanceType}], 0)/p.GPUs)
}

// takeGPUs records n nodes of p in zone against its ecs-spec GPU quota there.
func (pl *placer) takeGPUs(p Pool, zone string, n int) {
	if _, ok := pl.spec(p, zone); ok {
		pl.gpus[zoneType{zone, p.InstanceType}] += n * p.GPUs
	}
}

// specShortfall explains the nodes of p that the ecs-spec GPU quotas of its zones left without a
// place: each zone's quota, and the fix.
func (pl *placer) specShortfall(p Pool, pp placement) *planerr.Error {
	var zones []string
	need := pp.left * p.GPUs
	for _, z := range pp.specShort {
		q, _ := pl.spec(p, z)
		zones = append(zones, fmt.Sprintf("%s: %d with %d in use", z, q.Max, q.Used))
	}
	first := pp.specShort[0]
	q, _ := pl.spec(p, first)
	why := fmt.Sprintf("needs %d more GPUs of %s pay-as-you-go than the Quota Center's %s quotas of its zones leave (%s); %d of %d nodes have no place",
		need, p.InstanceType, QuotaSpec, strings.Join(zones, "; "), pp.left, p.Count)
	fix := fmt.Sprintf("raise the %s quota of %s (pay-as-you-go) in zone %s to at least %d in the Quota Center (%s), add a zone with quota to %s, or lower %s by %d",
		QuotaSpec, p.InstanceType, first, q.Max+need, QuotaCenter, cmp.Or(p.Attrs.Zones, "zone_ids"), p.sizeAttr(), pp.left)
	return planerr.Input(p.sizeAttr(), strconv.Itoa(p.Count), why, fix).WithSupported(fmt.Sprintf("at most %d nodes", p.Count-pp.left))
}

// take places up to want nodes of per addresses each in vsw and answers how many: all of them
// where its free addresses are unknown.
func (pl *placer) take(vsw VSwitch, want, per int) int {
	free, known := pl.a.FreeAddresses[vsw.ID]
	if !known {
		return want
	}
	n := min(want, max(free-pl.taken[vsw.ID], 0)/per)
	pl.taken[vsw.ID] += n * per
	return n
}

// stock is the table p's nodes are placed by: the spot one for a spot pool, when read.
func (pl *placer) stock(p Pool) map[string]map[string]string {
	if p.Spot && !p.SpotFallback && pl.a.SpotStock != nil {
		return pl.a.SpotStock
	}
	return pl.a.Stock
}

func (pl *placer) inStock(zone, typ string, p Pool) bool {
	st := pl.stock(p)
	if st == nil {
		return true
	}
	return st[zone][typ] == Available
}

// otherZones are the region's zones with stock of p's type (or a fallback) that p does not use,
// for the fix.
func (pl *placer) otherZones(p Pool) []string {
	var out []string
	for z := range pl.stock(p) {
		if !slices.Contains(p.Zones, z) && slices.ContainsFunc(p.types(), func(t string) bool { return pl.inStock(z, t, p) }) {
			out = append(out, z)
		}
	}
	slices.Sort(out)
	return out
}

// shortfall explains why left of p's nodes found no place: the vSwitches are full, or no zone
// of p has the type.
func (pl *placer) shortfall(p Pool, left int, stockless []string, full []VSwitch) *planerr.Error {
	addZone := ""
	if zs := pl.otherZones(p); len(zs) > 0 {
		addZone = fmt.Sprintf("add zone %s (it has %s%s in stock) to %s", strings.Join(zs, " or "), p.typesWord(), spotWord(p), cmp.Or(p.Attrs.Zones, "zone_ids"))
	}
	if len(full) == 0 {
		why := fmt.Sprintf("has no zone with %s%s in stock and a vSwitch: %s sold out, not sold%s or without a vSwitch; %d of %d nodes have no place",
			p.typesWord(), spotWord(p), strings.Join(stockless, ", "), spotWord(p), left, p.Count)
		fix := addZone
		if fix == "" {
			fix = "choose another instance_type: no zone of the region has " + p.typesWord() + spotWord(p) + " in stock"
			if spotWord(p) != "" {
				fix += ", or drop spot"
			}
		}
		return planerr.Input(p.zonesAttr(), strings.Join(p.Zones, ","), why, fix)
	}
	widest := full[0]
	for _, v := range full[1:] {
		if prefixOf(v.CIDR) < prefixOf(widest.CIDR) {
			widest = v
		}
	}
	freeLeft := pl.a.FreeAddresses[widest.ID] - pl.taken[widest.ID]
	need := left * p.addressesPerNode()
	why := fmt.Sprintf("needs %d more private addresses%s: vSwitch %s (%s) has %d free, %d left once nodes take them, and %s",
		need, p.perNodeNote(left), widest.ID, widest.CIDR, pl.a.FreeAddresses[widest.ID], freeLeft, describeOthers(full, widest, stockless))
	fixes := []string{widenFix(widest, freeLeft, need)}
	if addZone != "" {
		fixes = append(fixes, addZone)
	}
	return planerr.Input(p.vswitchAttr(), widest.ID, why, strings.Join(fixes, ", or "))
}

func describeOthers(full []VSwitch, widest VSwitch, stockless []string) string {
	var parts []string
	for _, v := range full {
		if v.ID != widest.ID {
			parts = append(parts, v.ID+" is full too")
		}
	}
	if len(stockless) > 0 {
		parts = append(parts, "no stock or vSwitch in "+strings.Join(stockless, ", "))
	}
	if len(parts) == 0 {
		return "the pool has no other zone"
	}
	return strings.Join(parts, "; ")
}

// widenFix names the block v would need to hold need more addresses. A vSwitch's block cannot
// change, so the fix is a new, wider vSwitch in its place.
func widenFix(v VSwitch, freeLeft, need int) string {
	p := prefixOf(v.CIDR)
	if p < 0 {
		return fmt.Sprintf("use a vSwitch with %d more free addresses than %s", need, v.ID)
	}
	used := (1 << (32 - p)) - freeLeft // addresses in use, the reserved ones included
	want := uint(used + need)
	newPrefix := 32 - bits.Len(want-1) // smallest block of at least want addresses
	if newPrefix < widestVSwitchPrefix {
		return fmt.Sprintf("no vSwitch holds that many (/%d is the widest): spread the pool over more zones", widestVSwitchPrefix)
	}
	return fmt.Sprintf("widen CIDR %s: replace vSwitch %s with a /%d (%d addresses)", v.CIDR, v.ID, min(newPrefix, narrowestVSwitchPrefix), 1<<(32-min(newPrefix, narrowestVSwitchPrefix)))
}

// prefixOf is an IPv4 CIDR's prefix length, -1 when it is not one.
func prefixOf(cidr string) int {
	pfx, err := netip.ParsePrefix(cidr)
	if err != nil || !pfx.Addr().Is4() {
		return -1
	}
	return pfx.Bits()
}

// spotWord marks a spot pool's stock as the spot offer's.
func spotWord(p Pool) string {
	if p.Spot && !p.SpotFallback {
		return " as spot"
	}
	return ""
}
