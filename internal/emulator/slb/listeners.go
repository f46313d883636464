package slb

// TCP listeners of a Classic Load Balancer (SLB API 2014-05-15). Semantics,
// ranges and codes follow
//   https://www.alibabacloud.com/help/en/slb/classic-load-balancer/developer-reference/api-slb-2014-05-15-createloadbalancertcplistener
//   https://www.alibabacloud.com/help/en/slb/classic-load-balancer/developer-reference/api-slb-2014-05-15-startloadbalancerlistener
//   https://api.alibabacloud.com/document/Slb/2014-05-15/errorCode (ListenerAlreadyExists, ListenerNotFound,
//   ListenerNumberOverLimit, "The specified bandwidth is not valid")
// A new listener is stopped until StartLoadBalancerListener.

import (
	slbsdk "github.com/aliyun/alibaba-cloud-sdk-go/services/slb"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "CreateLoadBalancerTCPListener", core.Route{Fn: createLoadBalancerTCPListener, Write: true, RegionOptional: true})
	core.Register(Version, "SetLoadBalancerTCPListenerAttribute", core.Route{Fn: setLoadBalancerTCPListenerAttribute, Write: true, RegionOptional: true})
	core.Register(Version, "DescribeLoadBalancerTCPListenerAttribute", core.Route{Fn: describeLoadBalancerTCPListenerAttribute, RegionOptional: true})
	core.Register(Version, "StartLoadBalancerListener", core.Route{Fn: startLoadBalancerListener, Write: true, RegionOptional: true})
	core.Register(Version, "StopLoadBalancerListener", core.Route{Fn: stopLoadBalancerListener, Write: true, RegionOptional: true})
	core.Register(Version, "DeleteLoadBalancerListener", core.Route{Fn: deleteLoadBalancerListener, Write: true, RegionOptional: true})
}

// intRange reads an optional integer parameter into *dst when it lies in [lo, hi].
func intRange(c *core.Call, name string, lo, hi int, dst *int) *core.Error {
	if c.P[name] == "" {
		return nil
	}
	n, e := c.P.Int(name, 0)
	if e != nil || n < lo || n > hi {
		return core.Errf(400, "InvalidParameter", "The specified parameter %s is not valid: %q must be %d-%d.", name, c.P[name], lo, hi)
	}
	*dst = n
	return nil
}

// listenerParams applies the TCP listener parameters present in the request
// to l (whose fields hold the defaults or the current values).
func listenerParams(c *core.Call, l *Listener) *core.Error {
	if c.P["Bandwidth"] != "" {
		bw, e := c.P.Int("Bandwidth", 0)
		if e != nil || bw != -1 && (bw < 1 || bw > 5120) {
			return core.Errf(400, "InvalidParameter", "The specified bandwidth is not valid: %q must be -1 (unlimited) or 1-5120 Mbit/s.", c.P["Bandwidth"])
		}
		l.Bandwidth = bw
	}
	// The vendor spells the interval in lower camel case on CreateLoadBalancerTCPListener and in
	// upper camel case on SetLoadBalancerTCPListenerAttribute (the SDK's request structs agree).
	interval := "HealthCheckInterval"
	if c.Action == "CreateLoadBalancerTCPListener" {
		interval = "healthCheckInterval"
	}
	for _, r := range []struct {
		name   string
		lo, hi int
		dst    *int
	}{
		{"BackendServerPort", 1, 65535, &l.BackendPort},
		{"HealthCheckConnectPort", 1, 65535, &l.HealthCheckPort},
		{"HealthyThreshold", 2, 10, &l.HealthyThreshold},
		{"UnhealthyThreshold", 2, 10, &l.UnhealthyThreshold},
		{"HealthCheckConnectTimeout", 1, 300, &l.HealthCheckTimeout},
		{interval, 1, 50, &l.HealthCheckEvery},
		{"PersistenceTimeout", 0, 3600, &l.Persistence},
		{"EstablishedTimeout", 10, 900, &l.Established},
	} {
		if e := intRange(c, r.name, r.lo, r.hi, r.dst); e != nil {
			return e
		}
	}
	for _, s := range []struct {
		name    string
		dst     *string
		allowed []string
	}{
		{"Scheduler", &l.Scheduler, []string{"wrr", "rr", "wlc", "sch", "tch", "qch"}},
		{"HealthCheckSwitch", &l.HealthCheck, []string{"on", "off"}},
		{"HealthCheckType", &l.HealthCheckType, []string{"tcp", "http"}},
	} {
		if v := c.P[s.name]; v != "" {
			if e := core.OneOf(s.name, v, s.allowed...); e != nil {
				return e
			}
			*s.dst = v
		}
	}
	if _, ok := c.P["Description"]; ok {
		l.Desc = c.P["Description"]
	}
	if c.P["VServerGroupId"] != "" {
		return core.Errf(404, "InvalidParameter", "The specified VServerGroupId %q does not exist: the emulator models backend servers on the instance only.", c.P["VServerGroupId"])
	}
	return nil
}

func listenerPortParam(c *core.Call) (int, *core.Error) {
	if c.P["ListenerPort"] == "" {
		return 0, core.ErrMissing("ListenerPort")
	}
	port, e := c.P.Int("ListenerPort", 0)
	if e != nil || port < 1 || port > 65535 {
		return 0, core.Errf(400, "InvalidParameter", "The specified port is not valid: ListenerPort %q must be 1-65535.", c.P["ListenerPort"])
	}
	return port, nil
}

func createLoadBalancerTCPListener(c *core.Call) (any, *core.Error) {
	lb, e := findSLB(c)
	if e != nil {
		return nil, e
	}
	port, e := listenerPortParam(c)
	if e != nil {
		return nil, e
	}
	if c.P["Bandwidth"] == "" {
		return nil, core.ErrMissing("Bandwidth")
	}
	if c.P["BackendServerPort"] == "" && c.P["VServerGroupId"] == "" {
		return nil, core.ErrMissing("BackendServerPort")
	}
	l := &Listener{Port: port, Scheduler: "wrr", HealthCheck: "on", HealthCheckType: "tcp", HealthyThreshold: 3,
		UnhealthyThreshold: 3, HealthCheckTimeout: 5, HealthCheckEvery: 2, Established: 900}
	if e := listenerParams(c, l); e != nil {
		return nil, e
	}
	for _, x := range lb.Listeners {
		if x.Port == port {
			return nil, core.Errf(400, "ListenerAlreadyExists", "A listener with the specified port %d already exists on %s.", port, lb.ID)
		}
	}
	if len(lb.Listeners) >= slbMaxListeners {
		return nil, core.Errf(400, "ListenerNumberOverLimit", "The maximum number of listeners (%d) is exceeded on %s.", slbMaxListeners, lb.ID)
	}
	lb.Listeners = append(lb.Listeners, l)
	return &slbsdk.CreateLoadBalancerTCPListenerResponse{RequestId: c.ReqID}, nil
}

// findListener reads ListenerPort and finds that listener of lb.
func findListener(c *core.Call, lb *LoadBalancer) (*Listener, *core.Error) {
	port, e := listenerPortParam(c)
	if e != nil {
		return nil, e
	}
	for _, l := range lb.Listeners {
		if l.Port == port {
			return l, nil
		}
	}
	return nil, core.Errf(404, "ListenerNotFound", "You have not created a listener for the specified port %d of the load balancer %s.", port, lb.ID)
}

func lbListener(c *core.Call) (*LoadBalancer, *Listener, *core.Error) {
	lb, e := findSLB(c)
	if e != nil {
		return nil, nil, e
	}
	l, e := findListener(c, lb)
	return lb, l, e
}

func setLoadBalancerTCPListenerAttribute(c *core.Call) (any, *core.Error) {
	_, l, e := lbListener(c)
	if e != nil {
		return nil, e
	}
	next := *l
	if e := listenerParams(c, &next); e != nil {
		return nil, e
	}
	*l = next
	return &slbsdk.SetLoadBalancerTCPListenerAttributeResponse{RequestId: c.ReqID}, nil
}

func describeLoadBalancerTCPListenerAttribute(c *core.Call) (any, *core.Error) {
	lb, l, e := lbListener(c)
	if e != nil {
		return nil, e
	}
	status := "stopped"
	if l.Running {
		status = "running"
	}
	resp := &slbsdk.DescribeLoadBalancerTCPListenerAttributeResponse{RequestId: c.ReqID, LoadBalancerId: lb.ID,
		ListenerPort: l.Port, BackendServerPort: l.BackendPort, Bandwidth: l.Bandwidth, Status: status,
		Scheduler: l.Scheduler, Description: l.Desc, HealthCheck: l.HealthCheck, HealthCheckType: l.HealthCheckType,
		HealthCheckConnectPort: l.HealthCheckPort, HealthyThreshold: l.HealthyThreshold,
		UnhealthyThreshold: l.UnhealthyThreshold, HealthCheckConnectTimeout: l.HealthCheckTimeout,
		HealthCheckInterval: l.HealthCheckEvery, PersistenceTimeout: l.Persistence, EstablishedTimeout: l.Established,
		AclStatus: "off", SynProxy: "disable", ConnectionDrain: "off"}
	resp.AclIds.AclId = []string{}
	resp.PortRanges.PortRange = []slbsdk.PortRange{}
	resp.Tags.Tag = []slbsdk.Tag{}
	return resp, nil
}

func startLoadBalancerListener(c *core.Call) (any, *core.Error) {
	_, l, e := lbListener(c)
	if e != nil {
		return nil, e
	}
	l.Running = true
	return &slbsdk.StartLoadBalancerListenerResponse{RequestId: c.ReqID}, nil
}

func stopLoadBalancerListener(c *core.Call) (any, *core.Error) {
	_, l, e := lbListener(c)
	if e != nil {
		return nil, e
	}
	l.Running = false
	return &slbsdk.StopLoadBalancerListenerResponse{RequestId: c.ReqID}, nil
}

func deleteLoadBalancerListener(c *core.Call) (any, *core.Error) {
	lb, l, e := lbListener(c)
	if e != nil {
		return nil, e
	}
	for i, x := range lb.Listeners {
		if x == l {
			lb.Listeners = append(lb.Listeners[:i:i], lb.Listeners[i+1:]...)
			break
		}
	}
	return &slbsdk.DeleteLoadBalancerListenerResponse{RequestId: c.ReqID}, nil
}
