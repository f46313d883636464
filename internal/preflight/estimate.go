package preflight

import (
	"time"
)

// The batch limits the create works in (internal/cloud and internal/poolplan state them with
// their sources): RunInstances Amount and DescribeInstances InstanceIds stop at 100,
// AddBackendServers takes 20 servers a call.
const (
	instancesPerCall = 100
	backendsPerCall  = 20
)

// waitPolls is how many times a waiter reads each page of 100 before what it waits for is ready.
// Calibrated on the measured create of a 1,000-node pool (BENCHMARKS.md: RunInstances=10,
// DescribeInstances=14, DescribePrice=1 against the emulator): 1.4 looks a page there, rounded
// up to 2. A real boot takes minutes, not the emulator's moments, so the cloud may take more
// looks; the figure is a floor, not a measurement of the vendor.
const waitPolls = 2

// Estimate is the API calls a create makes, by action, and their time at the rate limit: the
// time the client-side limiter alone imposes, waits for boots and the vendor's own latency not
// counted.
type Estimate struct {
	Calls    map[string]int
	Total    int
	Duration time.Duration
}

// EstimateCalls counts the calls of creating s and their time at rateLimit requests per second
// (0 or less: no time).
func EstimateCalls(s Stack, rateLimit float64) Estimate {
	e := Estimate{Calls: map[string]int{}}
	add := func(action string, n int) {
		if n > 0 {
			e.Calls[action] += n
			e.Total += n
		}
	}
	for _, p := range s.Pools {
		// At least one batch per 100 nodes; a pool split over zones may take one more per zone.
		add("RunInstances", ceilDiv(p.Count, instancesPerCall))
		add("DescribePrice", min(p.Count, 1)) // the pool's price, read once
		add("DescribeInstances", ceilDiv(p.Count, instancesPerCall)*waitPolls)
	}
	for range s.ScalingGroups {
		add("CreateScalingGroup", 1)
		add("CreateScalingConfiguration", 1)
		add("EnableScalingGroup", 1)
		add("DescribeScalingGroups", waitPolls)
	}
	add("CreateLoadBalancer", s.LoadBalancers)
	add("CreateLoadBalancerTCPListener", s.LoadBalancers)
	add("StartLoadBalancerListener", s.LoadBalancers)
	add("AddBackendServers", ceilDiv(s.Backends, backendsPerCall))
	add("AllocateEipAddress", s.EIPs)
	add("AssociateEipAddress", s.EIPs)
	add("CreateNatGateway", s.NATGateways)
	add("DescribeNatGateways", s.NATGateways*waitPolls)
	add("CreateSnatEntry", s.NATGateways)
	if rateLimit > 0 {
		e.Duration = time.Duration(float64(e.Total) / rateLimit * float64(time.Second)).Round(time.Second)
	}
	return e
}

func ceilDiv(a, b int) int {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
