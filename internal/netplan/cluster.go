package netplan

import "sort"

// Placement values, as users write them.
const (
	PlacementNone       = "none"
	PlacementLowLatency = "low_latency"
	PlacementSpread     = "spread"
)

// Placements lists the allowed placement values; it feeds both the validator and the docs.
var Placements = []string{PlacementNone, PlacementLowLatency, PlacementSpread}

// PlacementGroupSize is how many instances one deployment set holds. LowLatency sets hold at most
// 20 instances in one zone; an Availability set also holds at most 20 per zone (vendor page:
// https://www.alibabacloud.com/help/en/ecs/user-guide/overview-43, see internal/catalog/SOURCES.md).
// 0 means no deployment sets.
const PlacementGroupSize = 20

// MaxPlacementGroups bounds placement_groups: enough for the largest pool the provider takes
// (20 x 500 = 10,000 instances). The account's deployment-set quota, which the vendor sets per
// account and region, may be lower; CreateDeploymentSet then says so at apply.
const MaxPlacementGroups = 500

// Strategy is the CreateDeploymentSet Strategy for a placement value ("" for none).
func Strategy(placement string) string {
	switch placement {
	case PlacementLowLatency:
		return "LowLatency"
	case PlacementSpread:
		return "Availability"
	}
	return ""
}

// PlacementFromStrategy maps a deployment set's Strategy back to a placement value.
func PlacementFromStrategy(strategy string) string {
	switch strategy {
	case "LowLatency":
		return PlacementLowLatency
	case "Availability", "AvailabilityGroup":
		return PlacementSpread
	}
	return PlacementNone
}

// GroupSize is placement_group_size for a placement value.
func GroupSize(placement string) int {
	if placement == PlacementNone || placement == "" {
		return 0
	}
	return PlacementGroupSize
}

// GroupsFor is how many placement groups n instances need.
func GroupsFor(n int) int {
	if n <= 0 {
		return 0
	}
	return (n + PlacementGroupSize - 1) / PlacementGroupSize
}

// BandwidthPlan is the cluster's network target: 100 Gbit/s RDMA between compute nodes, 25 Gbit/s to
// storage, 10 Gbit/s public EIP and <= 1 us node-to-node latency (internal/catalog/SOURCES.md
// section 2).
type BandwidthPlan struct {
	ComputeGbps     int64 // node-to-node RDMA
	StorageGbps     int64 // storage access
	PublicGbps      int64 // public EIP
	LatencyTargetUs int64 // node-to-node latency target, at most
}

// Plan is the one bandwidth plan every network exposes.
var Plan = BandwidthPlan{ComputeGbps: 100, StorageGbps: 25, PublicGbps: 10, LatencyTargetUs: 1}

// NCCLVar is one NCCL environment variable with what it does, for the docs.
type NCCLVar struct {
	Name, Value, Why string
}

// NCCL interface and device names on Alibaba Cloud GPU instances with eRDMA.
const (
	SocketInterface = "eth0"
	ERDMADevice     = "erdma_0"
)

// NCCLVars is the NCCL environment for a network, with and without eRDMA. With eRDMA NCCL uses
// its IB verbs transport over the eRDMA device; without it NCCL must not look for one and uses
// TCP sockets.
func NCCLVars(erdma bool) []NCCLVar {
	if !erdma {
		return []NCCLVar{
			{"NCCL_IB_DISABLE", "1", "no eRDMA: NCCL skips the IB verbs transport and uses TCP sockets between nodes"},
		}
	}
	return []NCCLVar{
		{"NCCL_IB_DISABLE", "0", "use the IB verbs transport, which the eRDMA device provides"},
		{"NCCL_IB_HCA", ERDMADevice, "the eRDMA device of the primary ENI (NetworkInterfaceTrafficMode=HighPerformance)"},
		{"NCCL_IB_GID_INDEX", "1", "GID index 1 is the RoCE v2 IPv4 GID of the eRDMA device"},
		{"NCCL_SOCKET_IFNAME", SocketInterface, "bootstrap and out-of-band traffic over the primary interface, never docker0 or lo"},
		{"NCCL_NET_GDR_LEVEL", "PHB", "GPUDirect RDMA only when GPU and eRDMA device share a PCIe host bridge; NCCL still checks GDR support and stages through host memory otherwise"},
	}
}

// NCCLEnv is NCCLVars as a map.
func NCCLEnv(erdma bool) map[string]string {
	out := map[string]string{}
	for _, v := range NCCLVars(erdma) {
		out[v.Name] = v.Value
	}
	return out
}

// NCCLNames lists every variable NCCLEnv may set, sorted, for documentation.
func NCCLNames() []string {
	set := map[string]bool{}
	for _, on := range []bool{false, true} {
		for _, v := range NCCLVars(on) {
			set[v.Name] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
