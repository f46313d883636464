package cloud

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/slb"
)

// The Classic Load Balancer (SLB API 2014-05-15): the internal, VPC load balancer in front of a
// Kubernetes control plane, its TCP listeners and its backend servers.

// MaxBackendServersPerCall is how many servers one AddBackendServers or RemoveBackendServers
// call takes (the vendor's limit).
const MaxBackendServersPerCall = 20

// DefaultLoadBalancerSpec is the smallest performance-guaranteed specification, ample for the
// API server traffic of a cluster.
const DefaultLoadBalancerSpec = "slb.s1.small"

// Listener statuses.
const (
	ListenerStatusRunning = "running"
	ListenerStatusStopped = "stopped"
)

// LoadBalancer is what the provider keeps of a load balancer instance.
type LoadBalancer struct {
	ID, Name, Address, AddressType string
	VPCID, VSwitchID               string
	Spec, Status                   string
	DeleteProtection               bool
	// ListenerPorts and Backends are filled by FindLoadBalancer (the attribute call has them),
	// not by FindLoadBalancersByTags.
	ListenerPorts []int
	Backends      []BackendServer
	Tags          map[string]string
}

// BackendServer is one ECS instance behind a load balancer.
type BackendServer struct {
	ServerID string
	// Weight is 0-100; 0 takes the server out of rotation. SetBackendServers treats 0 as 100.
	Weight int
}

// LoadBalancerInput is what CreateInternalLoadBalancer needs.
type LoadBalancerInput struct {
	VSwitchID, Name string
	// Spec is a performance-guaranteed specification ("" for DefaultLoadBalancerSpec).
	Spec string
	Tags map[string]string
	// ClientToken makes the create idempotent (see CreateOrAdopt).
	ClientToken string
}

// CreateInternalLoadBalancer creates a pay-as-you-go, intranet (VPC) load balancer in a vSwitch,
// tagged at creation, and returns its id and private address. It is active when the call answers.
func (c *Client) CreateInternalLoadBalancer(ctx context.Context, in LoadBalancerInput) (id, address string, err error) {
	req := slb.CreateCreateLoadBalancerRequest()
	req.RegionId = c.region
	req.ClientToken = in.ClientToken
	req.AddressType = "intranet"
	req.VSwitchId = in.VSwitchID
	req.LoadBalancerName = in.Name
	req.PayType = "PayOnDemand"
	req.InstanceChargeType = "PayBySpec"
	req.LoadBalancerSpec = in.Spec
	if req.LoadBalancerSpec == "" {
		req.LoadBalancerSpec = DefaultLoadBalancerSpec
	}
	ts := make([]slb.CreateLoadBalancerTag, 0, len(in.Tags))
	for _, k := range sortedKeys(in.Tags) {
		ts = append(ts, slb.CreateLoadBalancerTag{Key: k, Value: in.Tags[k]})
	}
	req.Tag = &ts
	resp := slb.CreateCreateLoadBalancerResponse()
	if err := c.Call(ctx, req, resp, RetryOn("VpcStatusError")); err != nil {
		return "", "", fmt.Errorf("creating an internal load balancer in vSwitch %s: %w", in.VSwitchID, err)
	}
	return resp.LoadBalancerId, resp.Address, nil
}

// FindLoadBalancer returns the load balancer with this id, with its listener ports and backend
// servers, or an error matching ErrNotFound.
func (c *Client) FindLoadBalancer(ctx context.Context, id string) (*LoadBalancer, error) {
	req := slb.CreateDescribeLoadBalancerAttributeRequest()
	req.RegionId = c.region
	req.LoadBalancerId = id
	resp := slb.CreateDescribeLoadBalancerAttributeResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	if resp.LoadBalancerId != id {
		return nil, notFound(ProductSLB, "DescribeLoadBalancerAttribute", "InvalidLoadBalancerId.NotFound", "load balancer "+id)
	}
	lb := &LoadBalancer{ID: resp.LoadBalancerId, Name: resp.LoadBalancerName, Address: resp.Address,
		AddressType: resp.AddressType, VPCID: resp.VpcId, VSwitchID: resp.VSwitchId, Spec: resp.LoadBalancerSpec,
		Status: resp.LoadBalancerStatus, DeleteProtection: resp.DeleteProtection == "on",
		ListenerPorts: slices.Sorted(slices.Values(resp.ListenerPorts.ListenerPort)),
		Tags:          tagsOf(resp.Tags.Tag, func(t slb.Tag) (string, string) { return t.TagKey, t.TagValue })}
	for _, b := range resp.BackendServers.BackendServer {
		lb.Backends = append(lb.Backends, BackendServer{ServerID: b.ServerId, Weight: b.Weight})
	}
	sort.Slice(lb.Backends, func(i, j int) bool { return lb.Backends[i].ServerID < lb.Backends[j].ServerID })
	return lb, nil
}

// slbPageSize is the largest page DescribeLoadBalancers gives.
const slbPageSize = 100

// FindLoadBalancersByTags lists the load balancers in the region that carry every tag, all
// pages, sorted by id: the finder that adopts what an interrupted apply left behind.
func (c *Client) FindLoadBalancersByTags(ctx context.Context, tags map[string]string) ([]LoadBalancer, error) {
	filter := make([]slb.DescribeLoadBalancersTag, 0, len(tags))
	for _, k := range sortedKeys(tags) {
		filter = append(filter, slb.DescribeLoadBalancersTag{Key: k, Value: tags[k]})
	}
	out, err := pageNumbers(fmt.Sprintf("load balancers tagged %v", tags), slbPageSize, 0, func(page int) ([]LoadBalancer, int, int, error) {
		req := slb.CreateDescribeLoadBalancersRequest()
		req.RegionId = c.region
		req.Tag = &filter
		req.PageNumber = requests.NewInteger(page)
		req.PageSize = requests.NewInteger(slbPageSize)
		resp := slb.CreateDescribeLoadBalancersResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, 0, 0, fmt.Errorf("listing load balancers tagged %v: %w", tags, err)
		}
		var kept []LoadBalancer
		for _, x := range resp.LoadBalancers.LoadBalancer {
			lb := LoadBalancer{ID: x.LoadBalancerId, Name: x.LoadBalancerName, Address: x.Address, AddressType: x.AddressType,
				VPCID: x.VpcId, VSwitchID: x.VSwitchId, Spec: x.LoadBalancerSpec, Status: x.LoadBalancerStatus,
				DeleteProtection: x.DeleteProtection == "on",
				Tags:             tagsOf(x.Tags.Tag, func(t slb.Tag) (string, string) { return t.TagKey, t.TagValue })}
			if hasTags(lb.Tags, tags) {
				kept = append(kept, lb)
			}
		}
		return kept, len(resp.LoadBalancers.LoadBalancer), resp.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// RenameLoadBalancer changes a load balancer's name.
func (c *Client) RenameLoadBalancer(ctx context.Context, id, name string) error {
	req := slb.CreateSetLoadBalancerNameRequest()
	req.RegionId = c.region
	req.LoadBalancerId = id
	req.LoadBalancerName = name
	return c.Call(ctx, req, slb.CreateSetLoadBalancerNameResponse())
}

// DeleteLoadBalancer deletes a load balancer (its listeners go with it) and waits until it is
// gone; not found counts as done. Deletion protection is switched off first: the provider only
// deletes what its configuration no longer has.
func (c *Client) DeleteLoadBalancer(ctx context.Context, id string) error {
	err := DeleteUntilGone(ctx, func() error {
		req := slb.CreateDeleteLoadBalancerRequest()
		req.RegionId = c.region
		req.LoadBalancerId = id
		err := c.Call(ctx, req, slb.CreateDeleteLoadBalancerResponse())
		if !IsCode(err, "OperationDenied.DeleteProtectionIsOn") {
			return err
		}
		off := slb.CreateSetLoadBalancerDeleteProtectionRequest()
		off.RegionId = c.region
		off.LoadBalancerId = id
		off.DeleteProtection = "off"
		if err := c.Call(ctx, off, slb.CreateSetLoadBalancerDeleteProtectionResponse()); err != nil {
			return err
		}
		return c.Call(ctx, req, slb.CreateDeleteLoadBalancerResponse())
	})
	if err != nil {
		return fmt.Errorf("deleting load balancer %s: %w", id, err)
	}
	return waitGone(ctx, "load balancer "+id, func() error { _, err := c.FindLoadBalancer(ctx, id); return err })
}

// Listener is what the provider keeps of a TCP listener.
type Listener struct {
	Port, BackendPort int
	Status            string
	// BandwidthMbps is -1 for no cap (the only choice that makes sense inside a VPC).
	BandwidthMbps int
	HealthCheck   HealthCheck
}

// HealthCheck is a TCP listener's health check of its backends.
type HealthCheck struct {
	// Port is the port probed ("0" for the backend port).
	Port                                 int
	HealthyThreshold, UnhealthyThreshold int
	TimeoutSeconds, IntervalSeconds      int
}

// TCPListenerInput is what EnsureTCPListener needs. Zero health-check fields take the vendor's
// defaults (3 and 3 probes, 5 s timeout, 2 s interval, the backend port).
type TCPListenerInput struct {
	Port, BackendPort int
	HealthCheck       HealthCheck
	Description       string
}

// FindTCPListener returns a load balancer's TCP listener on port, or an error matching
// ErrNotFound (ListenerNotFound, or the load balancer's own not-found).
func (c *Client) FindTCPListener(ctx context.Context, lbID string, port int) (*Listener, error) {
	req := slb.CreateDescribeLoadBalancerTCPListenerAttributeRequest()
	req.RegionId = c.region
	req.LoadBalancerId = lbID
	req.ListenerPort = requests.NewInteger(port)
	resp := slb.CreateDescribeLoadBalancerTCPListenerAttributeResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	return &Listener{Port: resp.ListenerPort, BackendPort: resp.BackendServerPort, Status: resp.Status,
		BandwidthMbps: resp.Bandwidth, HealthCheck: HealthCheck{Port: resp.HealthCheckConnectPort,
			HealthyThreshold: resp.HealthyThreshold, UnhealthyThreshold: resp.UnhealthyThreshold,
			TimeoutSeconds: resp.HealthCheckConnectTimeout, IntervalSeconds: resp.HealthCheckInterval}}, nil
}

// healthCheckDiffers reports whether have lacks a health-check setting want asks for.
func healthCheckDiffers(have, want HealthCheck) bool {
	differs := func(h, w int) bool { return w != 0 && h != w }
	return differs(have.Port, want.Port) || differs(have.HealthyThreshold, want.HealthyThreshold) ||
		differs(have.UnhealthyThreshold, want.UnhealthyThreshold) || differs(have.TimeoutSeconds, want.TimeoutSeconds) ||
		differs(have.IntervalSeconds, want.IntervalSeconds)
}

// into writes the health check's non-zero settings into a request's parameters (the create and
// the set request have the same ones under different struct types); zero ones are left out, so
// the service keeps its default or current value.
func (hc HealthCheck) into(port, healthy, unhealthy, timeout, interval *requests.Integer) {
	for _, f := range []struct {
		dst *requests.Integer
		v   int
	}{{port, hc.Port}, {healthy, hc.HealthyThreshold}, {unhealthy, hc.UnhealthyThreshold}, {timeout, hc.TimeoutSeconds}, {interval, hc.IntervalSeconds}} {
		if f.v != 0 {
			*f.dst = requests.NewInteger(f.v)
		}
	}
}

// EnsureTCPListener makes the load balancer listen on in.Port with the given backend port and
// health check, and run: it creates the listener when missing, sets its attributes when they
// differ, and starts it when stopped. It returns the listener as the service then reports it.
func (c *Client) EnsureTCPListener(ctx context.Context, lbID string, in TCPListenerInput) (*Listener, error) {
	hc := in.HealthCheck
	have, err := c.FindTCPListener(ctx, lbID, in.Port)
	switch {
	case IsNotFound(err) && !IsCode(err, "InvalidLoadBalancerId.NotFound"):
		req := slb.CreateCreateLoadBalancerTCPListenerRequest()
		req.RegionId = c.region
		req.LoadBalancerId = lbID
		req.ListenerPort = requests.NewInteger(in.Port)
		req.BackendServerPort = requests.NewInteger(in.BackendPort)
		req.Bandwidth = requests.NewInteger(-1)
		req.Description = in.Description
		req.HealthCheckSwitch = "on"
		req.HealthCheckType = "tcp"
		hc.into(&req.HealthCheckConnectPort, &req.HealthyThreshold, &req.UnhealthyThreshold, &req.HealthCheckConnectTimeout, &req.HealthCheckInterval)
		err := c.Call(ctx, req, slb.CreateCreateLoadBalancerTCPListenerResponse())
		// ListenerAlreadyExists: a retry of a create the service had already done.
		if err != nil && !IsCode(err, "ListenerAlreadyExists") {
			return nil, fmt.Errorf("creating TCP listener %d of load balancer %s: %w", in.Port, lbID, err)
		}
	case err != nil:
		return nil, err
	case have.BackendPort != in.BackendPort:
		// The backend port of a listener without a server group is fixed at creation.
		return nil, fmt.Errorf("TCP listener %d of load balancer %s forwards to port %d, not %d: delete the listener (DeleteTCPListener) and ensure it again",
			in.Port, lbID, have.BackendPort, in.BackendPort)
	case healthCheckDiffers(have.HealthCheck, hc):
		req := slb.CreateSetLoadBalancerTCPListenerAttributeRequest()
		req.RegionId = c.region
		req.LoadBalancerId = lbID
		req.ListenerPort = requests.NewInteger(in.Port)
		req.HealthCheckSwitch = "on"
		hc.into(&req.HealthCheckConnectPort, &req.HealthyThreshold, &req.UnhealthyThreshold, &req.HealthCheckConnectTimeout, &req.HealthCheckInterval)
		if err := c.Call(ctx, req, slb.CreateSetLoadBalancerTCPListenerAttributeResponse()); err != nil {
			return nil, fmt.Errorf("updating TCP listener %d of load balancer %s: %w", in.Port, lbID, err)
		}
	}
	l, err := c.FindTCPListener(ctx, lbID, in.Port)
	if err != nil {
		return nil, err
	}
	if l.Status != ListenerStatusRunning {
		req := slb.CreateStartLoadBalancerListenerRequest()
		req.RegionId = c.region
		req.LoadBalancerId = lbID
		req.ListenerPort = requests.NewInteger(in.Port)
		if err := c.Call(ctx, req, slb.CreateStartLoadBalancerListenerResponse()); err != nil {
			return nil, fmt.Errorf("starting TCP listener %d of load balancer %s: %w", in.Port, lbID, err)
		}
		if l, err = c.FindTCPListener(ctx, lbID, in.Port); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// DeleteTCPListener deletes a load balancer's listener on port; not found counts as done.
func (c *Client) DeleteTCPListener(ctx context.Context, lbID string, port int) error {
	req := slb.CreateDeleteLoadBalancerListenerRequest()
	req.RegionId = c.region
	req.LoadBalancerId = lbID
	req.ListenerPort = requests.NewInteger(port)
	req.ListenerProtocol = "tcp"
	if err := c.Call(ctx, req, slb.CreateDeleteLoadBalancerListenerResponse()); err != nil && !IsNotFound(err) {
		return fmt.Errorf("deleting listener %d of load balancer %s: %w", port, lbID, err)
	}
	return nil
}

// backendServerJSON is one element of the BackendServers parameter. The vendor's own examples
// send Weight as a string.
type backendServerJSON struct {
	ServerId string `json:"ServerId"`
	Weight   string `json:"Weight"`
	Type     string `json:"Type"`
}

// SetBackendServers makes the load balancer's backend servers exactly want: servers that are
// new (or whose weight changes) are added first, so the load balancer never has fewer healthy
// servers than needed, then the ones no longer wanted are removed, MaxBackendServersPerCall per
// call. A weight of 0 means 100. Servers must be Running to be added.
func (c *Client) SetBackendServers(ctx context.Context, lbID string, want []BackendServer) error {
	lb, err := c.FindLoadBalancer(ctx, lbID)
	if err != nil {
		return err
	}
	have := map[string]int{}
	for _, b := range lb.Backends {
		have[b.ServerID] = b.Weight
	}
	wanted := map[string]int{}
	for _, b := range want {
		if b.Weight == 0 {
			b.Weight = 100
		}
		wanted[b.ServerID] = b.Weight
	}
	var add, remove, reweigh []BackendServer
	for _, id := range slices.Sorted(maps.Keys(wanted)) {
		w, ok := have[id]
		switch {
		case !ok:
			add = append(add, BackendServer{id, wanted[id]})
		case w != wanted[id]:
			reweigh = append(reweigh, BackendServer{id, wanted[id]})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(have)) {
		if _, ok := wanted[id]; !ok {
			remove = append(remove, BackendServer{id, have[id]})
		}
	}
	if err := c.changeBackends(ctx, lbID, "AddBackendServers", add); err != nil {
		return err
	}
	if err := c.changeBackends(ctx, lbID, "RemoveBackendServers", remove); err != nil {
		return err
	}
	// The emulated API has no SetBackendServers, so a new weight is a remove and an add.
	if err := c.changeBackends(ctx, lbID, "RemoveBackendServers", reweigh); err != nil {
		return err
	}
	return c.changeBackends(ctx, lbID, "AddBackendServers", reweigh)
}

// ChangeBackendServers adds and removes the given backend servers and touches no other: pools
// that share a load balancer change their own servers without undoing another pool's change
// made since they read it.
func (c *Client) ChangeBackendServers(ctx context.Context, lbID string, add, remove []BackendServer) error {
	if err := c.changeBackends(ctx, lbID, "AddBackendServers", add); err != nil {
		return err
	}
	return c.changeBackends(ctx, lbID, "RemoveBackendServers", remove)
}

// DetachBackendServers removes the servers among ids that are backends of the load balancer and
// leaves every other one as it is, whatever changed since the caller last looked: pools that
// share a load balancer detach their own nodes while another pool changes its.
func (c *Client) DetachBackendServers(ctx context.Context, lbID string, ids []string) error {
	lb, err := c.FindLoadBalancer(ctx, lbID)
	if err != nil {
		return err
	}
	var remove []BackendServer
	for _, b := range lb.Backends {
		if slices.Contains(ids, b.ServerID) {
			remove = append(remove, b)
		}
	}
	return c.changeBackends(ctx, lbID, "RemoveBackendServers", remove)
}

// changeBackends sends AddBackendServers or RemoveBackendServers for servers, in chunks.
func (c *Client) changeBackends(ctx context.Context, lbID, action string, servers []BackendServer) error {
	for chunk := range slices.Chunk(servers, MaxBackendServersPerCall) {
		list := make([]backendServerJSON, 0, len(chunk))
		for _, b := range chunk {
			list = append(list, backendServerJSON{ServerId: b.ServerID, Weight: strconv.Itoa(b.Weight), Type: "ecs"})
		}
		body, err := json.Marshal(list)
		if err != nil {
			return err
		}
		if action == "AddBackendServers" {
			req := slb.CreateAddBackendServersRequest()
			req.RegionId, req.LoadBalancerId, req.BackendServers = c.region, lbID, string(body)
			err = c.Call(ctx, req, slb.CreateAddBackendServersResponse())
		} else {
			req := slb.CreateRemoveBackendServersRequest()
			req.RegionId, req.LoadBalancerId, req.BackendServers = c.region, lbID, string(body)
			err = c.Call(ctx, req, slb.CreateRemoveBackendServersResponse())
		}
		if err != nil {
			return fmt.Errorf("%s %s of load balancer %s: %w", action, string(body), lbID, err)
		}
	}
	return nil
}

// Health of a backend server as a listener sees it (DescribeHealthStatus).
const (
	BackendHealthNormal   = "normal"
	BackendHealthAbnormal = "abnormal"
	// BackendHealthUnavailable: the listener is stopped or does not check health.
	BackendHealthUnavailable = "unavailable"
)

// BackendHealth reports how the listener on port sees each backend server: server id ->
// BackendHealthNormal, BackendHealthAbnormal or BackendHealthUnavailable.
func (c *Client) BackendHealth(ctx context.Context, lbID string, port int) (map[string]string, error) {
	req := slb.CreateDescribeHealthStatusRequest()
	req.RegionId = c.region
	req.LoadBalancerId = lbID
	req.ListenerPort = requests.NewInteger(port)
	resp := slb.CreateDescribeHealthStatusResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, fmt.Errorf("reading the health of load balancer %s's backends on port %d: %w", lbID, port, err)
	}
	out := map[string]string{}
	for _, b := range resp.BackendServers.BackendServer {
		if b.ListenerPort == port || b.ListenerPort == 0 {
			out[b.ServerId] = b.ServerHealthStatus
		}
	}
	return out, nil
}
