package emulator

// TCP listeners of a Classic Load Balancer (SLB API 2014-05-15). Semantics,
// ranges and codes follow
//   https://www.alibabacloud.com/help/en/slb/classic-load-balancer/developer-reference/api-slb-2014-05-15-createloadbalancertcplistener
//   https://www.alibabacloud.com/help/en/slb/classic-load-balancer/developer-reference/api-slb-2014-05-15-startloadbalancerlistener
//   https://api.alibabacloud.com/document/Slb/2014-05-15/errorCode (ListenerAlreadyExists, ListenerNotFound,
//   ListenerNumberOverLimit, "The specified bandwidth is not valid")
// A new listener is stopped until StartLoadBalancerListener.

import (
	"github.com/aliyun/alibaba-cloud-sdk-go/services/slb"
)

func init() {
	register(versionSLB, "CreateLoadBalancerTCPListener", route{fn: createLoadBalancerTCPListener, write: true, regionOptional: true})
	register(versionSLB, "SetLoadBalancerTCPListenerAttribute", route{fn: setLoadBalancerTCPListenerAttribute, write: true, regionOptional: true})
	register(versionSLB, "DescribeLoadBalancerTCPListenerAttribute", route{fn: describeLoadBalancerTCPListenerAttribute, regionOptional: true})
	register(versionSLB, "StartLoadBalancerListener", route{fn: startLoadBalancerListener, write: true, regionOptional: true})
	register(versionSLB, "StopLoadBalancerListener", route{fn: stopLoadBalancerListener, write: true, regionOptional: true})
	register(versionSLB, "DeleteLoadBalancerListener", route{fn: deleteLoadBalancerListener, write: true, regionOptional: true})
}

// intRange reads an optional integer parameter into *dst when it lies in [lo, hi].
func intRange(c *call, name string, lo, hi int, dst *int) *apiError {
	if c.p[name] == "" {
		return nil
	}
	n, e := c.p.Int(name, 0)
	if e != nil || n < lo || n > hi {
		return errf(400, "InvalidParameter", "The specified parameter %s is not valid: %q must be %d-%d.", name, c.p[name], lo, hi)
	}
	*dst = n
	return nil
}

// listenerParams applies the TCP listener parameters present in the request
// to l (whose fields hold the defaults or the current values).
func listenerParams(c *call, l *slbListener) *apiError {
	if c.p["Bandwidth"] != "" {
		bw, e := c.p.Int("Bandwidth", 0)
		if e != nil || bw != -1 && (bw < 1 || bw > 5120) {
			return errf(400, "InvalidParameter", "The specified bandwidth is not valid: %q must be -1 (unlimited) or 1-5120 Mbit/s.", c.p["Bandwidth"])
		}
		l.Bandwidth = bw
	}
	// The vendor spells the interval in lower camel case on CreateLoadBalancerTCPListener and in
	// upper camel case on SetLoadBalancerTCPListenerAttribute (the SDK's request structs agree).
	interval := "HealthCheckInterval"
	if c.action == "CreateLoadBalancerTCPListener" {
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
		if v := c.p[s.name]; v != "" {
			if e := oneOf(s.name, v, s.allowed...); e != nil {
				return e
			}
			*s.dst = v
		}
	}
	if _, ok := c.p["Description"]; ok {
		l.Desc = c.p["Description"]
	}
	if c.p["VServerGroupId"] != "" {
		return errf(404, "InvalidParameter", "The specified VServerGroupId %q does not exist: the emulator models backend servers on the instance only.", c.p["VServerGroupId"])
	}
	return nil
}

func listenerPortParam(c *call) (int, *apiError) {
	if c.p["ListenerPort"] == "" {
		return 0, errMissing("ListenerPort")
	}
	port, e := c.p.Int("ListenerPort", 0)
	if e != nil || port < 1 || port > 65535 {
		return 0, errf(400, "InvalidParameter", "The specified port is not valid: ListenerPort %q must be 1-65535.", c.p["ListenerPort"])
	}
	return port, nil
}

func createLoadBalancerTCPListener(c *call) (any, *apiError) {
	lb, e := c.findSLB()
	if e != nil {
		return nil, e
	}
	port, e := listenerPortParam(c)
	if e != nil {
		return nil, e
	}
	if c.p["Bandwidth"] == "" {
		return nil, errMissing("Bandwidth")
	}
	if c.p["BackendServerPort"] == "" && c.p["VServerGroupId"] == "" {
		return nil, errMissing("BackendServerPort")
	}
	l := &slbListener{Port: port, Scheduler: "wrr", HealthCheck: "on", HealthCheckType: "tcp", HealthyThreshold: 3,
		UnhealthyThreshold: 3, HealthCheckTimeout: 5, HealthCheckEvery: 2, Established: 900}
	if e := listenerParams(c, l); e != nil {
		return nil, e
	}
	for _, x := range lb.Listeners {
		if x.Port == port {
			return nil, errf(400, "ListenerAlreadyExists", "A listener with the specified port %d already exists on %s.", port, lb.ID)
		}
	}
	if len(lb.Listeners) >= slbMaxListeners {
		return nil, errf(400, "ListenerNumberOverLimit", "The maximum number of listeners (%d) is exceeded on %s.", slbMaxListeners, lb.ID)
	}
	lb.Listeners = append(lb.Listeners, l)
	return &slb.CreateLoadBalancerTCPListenerResponse{RequestId: c.reqID}, nil
}

// findListener reads ListenerPort and finds that listener of lb.
func (c *call) findListener(lb *loadBalancer) (*slbListener, *apiError) {
	port, e := listenerPortParam(c)
	if e != nil {
		return nil, e
	}
	for _, l := range lb.Listeners {
		if l.Port == port {
			return l, nil
		}
	}
	return nil, errf(404, "ListenerNotFound", "You have not created a listener for the specified port %d of the load balancer %s.", port, lb.ID)
}

func (c *call) lbListener() (*loadBalancer, *slbListener, *apiError) {
	lb, e := c.findSLB()
	if e != nil {
		return nil, nil, e
	}
	l, e := c.findListener(lb)
	return lb, l, e
}

func setLoadBalancerTCPListenerAttribute(c *call) (any, *apiError) {
	_, l, e := c.lbListener()
	if e != nil {
		return nil, e
	}
	next := *l
	if e := listenerParams(c, &next); e != nil {
		return nil, e
	}
	*l = next
	return &slb.SetLoadBalancerTCPListenerAttributeResponse{RequestId: c.reqID}, nil
}

func describeLoadBalancerTCPListenerAttribute(c *call) (any, *apiError) {
	lb, l, e := c.lbListener()
	if e != nil {
		return nil, e
	}
	status := "stopped"
	if l.Running {
		status = "running"
	}
	resp := &slb.DescribeLoadBalancerTCPListenerAttributeResponse{RequestId: c.reqID, LoadBalancerId: lb.ID,
		ListenerPort: l.Port, BackendServerPort: l.BackendPort, Bandwidth: l.Bandwidth, Status: status,
		Scheduler: l.Scheduler, Description: l.Desc, HealthCheck: l.HealthCheck, HealthCheckType: l.HealthCheckType,
		HealthCheckConnectPort: l.HealthCheckPort, HealthyThreshold: l.HealthyThreshold,
		UnhealthyThreshold: l.UnhealthyThreshold, HealthCheckConnectTimeout: l.HealthCheckTimeout,
		HealthCheckInterval: l.HealthCheckEvery, PersistenceTimeout: l.Persistence, EstablishedTimeout: l.Established,
		AclStatus: "off", SynProxy: "disable", ConnectionDrain: "off"}
	resp.AclIds.AclId = []string{}
	resp.PortRanges.PortRange = []slb.PortRange{}
	resp.Tags.Tag = []slb.Tag{}
	return resp, nil
}

func startLoadBalancerListener(c *call) (any, *apiError) {
	_, l, e := c.lbListener()
	if e != nil {
		return nil, e
	}
	l.Running = true
	return &slb.StartLoadBalancerListenerResponse{RequestId: c.reqID}, nil
}

func stopLoadBalancerListener(c *call) (any, *apiError) {
	_, l, e := c.lbListener()
	if e != nil {
		return nil, e
	}
	l.Running = false
	return &slb.StopLoadBalancerListenerResponse{RequestId: c.reqID}, nil
}

func deleteLoadBalancerListener(c *call) (any, *apiError) {
	lb, l, e := c.lbListener()
	if e != nil {
		return nil, e
	}
	for i, x := range lb.Listeners {
		if x == l {
			lb.Listeners = append(lb.Listeners[:i:i], lb.Listeners[i+1:]...)
			break
		}
	}
	return &slb.DeleteLoadBalancerListenerResponse{RequestId: c.reqID}, nil
}
