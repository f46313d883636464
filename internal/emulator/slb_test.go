package emulator

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/slb"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

// slbClient is a real SLB SDK client pointed at the emulator.
func (e *env) slbClient() *slb.Client {
	e.t.Helper()
	c, err := slb.NewClientWithAccessKey(testRegion, "emulator", "emulator-secret")
	must(e.t, err)
	c.Domain = e.host
	c.GetConfig().Scheme = "HTTP"
	c.GetConfig().AutoRetry = false
	return c
}

func (e *env) createLB(c *slb.Client, vswID, token string) *slb.CreateLoadBalancerResponse {
	e.t.Helper()
	r := slb.CreateCreateLoadBalancerRequest()
	r.RegionId, r.AddressType, r.VSwitchId, r.LoadBalancerSpec = testRegion, "intranet", vswID, "slb.s2.small"
	r.LoadBalancerName, r.ClientToken, r.DeleteProtection = "control-plane", token, "on"
	resp, err := c.CreateLoadBalancer(r)
	must(e.t, err)
	return resp
}

func (e *env) createListener(c *slb.Client, lbID string, mutate func(*slb.CreateLoadBalancerTCPListenerRequest)) error {
	r := slb.CreateCreateLoadBalancerTCPListenerRequest()
	r.RegionId, r.LoadBalancerId = testRegion, lbID
	r.ListenerPort, r.BackendServerPort, r.Bandwidth = requests.NewInteger(6443), requests.NewInteger(6443), requests.NewInteger(-1)
	r.HealthCheckConnectPort, r.HealthyThreshold, r.UnhealthyThreshold = requests.NewInteger(6443), requests.NewInteger(3), requests.NewInteger(3)
	r.HealthCheckInterval, r.HealthCheckConnectTimeout = requests.NewInteger(2), requests.NewInteger(5)
	if mutate != nil {
		mutate(r)
	}
	_, err := c.CreateLoadBalancerTCPListener(r)
	return err
}

func backendsJSON(ids ...string) string {
	var parts []string
	for i, id := range ids {
		// The vendor's own examples send Weight as a string; others send numbers.
		if i%2 == 0 {
			parts = append(parts, fmt.Sprintf(`{"ServerId":%q,"Weight":"100","Type":"ecs"}`, id))
		} else {
			parts = append(parts, fmt.Sprintf(`{"ServerId":%q,"Weight":100}`, id))
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func (e *env) addBackends(c *slb.Client, lbID, servers string) (*slb.AddBackendServersResponse, error) {
	r := slb.CreateAddBackendServersRequest()
	r.RegionId, r.LoadBalancerId, r.BackendServers = testRegion, lbID, servers
	return c.AddBackendServers(r)
}

func (e *env) lbAttr(c *slb.Client, lbID string) (*slb.DescribeLoadBalancerAttributeResponse, error) {
	r := slb.CreateDescribeLoadBalancerAttributeRequest()
	r.RegionId, r.LoadBalancerId = testRegion, lbID
	return c.DescribeLoadBalancerAttribute(r)
}

func (e *env) backendIDs(c *slb.Client, lbID string) []string {
	e.t.Helper()
	a, err := e.lbAttr(c, lbID)
	must(e.t, err)
	var ids []string
	for _, b := range a.BackendServers.BackendServer {
		ids = append(ids, b.ServerId)
	}
	return ids
}

func (e *env) health(c *slb.Client, lbID string) map[string]string {
	e.t.Helper()
	r := slb.CreateDescribeHealthStatusRequest()
	r.RegionId, r.LoadBalancerId = testRegion, lbID
	resp, err := c.DescribeHealthStatus(r)
	must(e.t, err)
	out := map[string]string{}
	for _, b := range resp.BackendServers.BackendServer {
		if b.ListenerPort != 6443 || b.Port != 6443 {
			e.t.Fatalf("health row of another port: %+v", b)
		}
		out[b.ServerId] = b.ServerHealthStatus
	}
	return out
}

func (e *env) listenerCall(c *slb.Client, action, lbID string, port int) error {
	var err error
	switch action {
	case "start":
		r := slb.CreateStartLoadBalancerListenerRequest()
		r.RegionId, r.LoadBalancerId, r.ListenerPort = testRegion, lbID, requests.NewInteger(port)
		_, err = c.StartLoadBalancerListener(r)
	case "stop":
		r := slb.CreateStopLoadBalancerListenerRequest()
		r.RegionId, r.LoadBalancerId, r.ListenerPort = testRegion, lbID, requests.NewInteger(port)
		_, err = c.StopLoadBalancerListener(r)
	case "delete":
		r := slb.CreateDeleteLoadBalancerListenerRequest()
		r.RegionId, r.LoadBalancerId, r.ListenerPort = testRegion, lbID, requests.NewInteger(port)
		_, err = c.DeleteLoadBalancerListener(r)
	}
	return err
}

func (e *env) tcpListener(c *slb.Client, lbID string, port int) (*slb.DescribeLoadBalancerTCPListenerAttributeResponse, error) {
	r := slb.CreateDescribeLoadBalancerTCPListenerAttributeRequest()
	r.RegionId, r.LoadBalancerId, r.ListenerPort = testRegion, lbID, requests.NewInteger(port)
	return c.DescribeLoadBalancerTCPListenerAttribute(r)
}

func (e *env) deleteLB(c *slb.Client, lbID string) error {
	r := slb.CreateDeleteLoadBalancerRequest()
	r.RegionId, r.LoadBalancerId = testRegion, lbID
	_, err := c.DeleteLoadBalancer(r)
	return err
}

// TestLoadBalancerLifecycle builds the control plane's internal load
// balancer (TCP 6443 with health checks, three backends) and takes it apart.
func TestLoadBalancerLifecycle(t *testing.T) {
	e := newEnv(t, Config{})
	c := e.slbClient()
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	other := e.network("10.0.0.0/16", "10.0.1.0/24")

	bad := slb.CreateCreateLoadBalancerRequest()
	bad.RegionId, bad.AddressType = testRegion, "intranet"
	_, err := c.CreateLoadBalancer(bad)
	wantCode(t, err, "MissingParameter")
	bad.VSwitchId, bad.VpcId = f.vswID, other.vpcID
	_, err = c.CreateLoadBalancer(bad)
	wantCode(t, err, "NetworkConflict")
	bad.VpcId, bad.LoadBalancerSpec = f.vpcID, "slb.s9.huge"
	_, err = c.CreateLoadBalancer(bad)
	wantCode(t, err, "InvalidParameter")

	created := e.createLB(c, f.vswID, "lb-token")
	if again := e.createLB(c, f.vswID, "lb-token"); again.LoadBalancerId != created.LoadBalancerId || again.Address != created.Address {
		t.Fatalf("retry with the same ClientToken made a second load balancer: %+v vs %+v", again, created)
	}
	if created.VpcId != f.vpcID || created.VSwitchId != f.vswID || created.NetworkType != "vpc" ||
		!strings.HasPrefix(created.Address, "10.0.1.") {
		t.Fatalf("CreateLoadBalancer answered %+v", created)
	}
	lbID := created.LoadBalancerId
	d := slb.CreateDescribeLoadBalancersRequest()
	d.RegionId, d.VpcId = testRegion, f.vpcID
	list, err := c.DescribeLoadBalancers(d)
	must(t, err)
	if list.TotalCount != 1 || list.LoadBalancers.LoadBalancer[0].Address != created.Address ||
		list.LoadBalancers.LoadBalancer[0].LoadBalancerSpec != "slb.s2.small" || list.LoadBalancers.LoadBalancer[0].DeleteProtection != "on" {
		t.Fatalf("DescribeLoadBalancers: %+v", list.LoadBalancers)
	}

	// Listener: required parameters and ranges, then stopped until started.
	wantCode(t, e.createListener(c, lbID, func(r *slb.CreateLoadBalancerTCPListenerRequest) { r.Bandwidth = "" }), "MissingParameter")
	wantCode(t, e.createListener(c, lbID, func(r *slb.CreateLoadBalancerTCPListenerRequest) { r.HealthyThreshold = "11" }), "InvalidParameter")
	wantCode(t, e.createListener(c, lbID, func(r *slb.CreateLoadBalancerTCPListenerRequest) { r.Bandwidth = "0" }), "InvalidParameter")
	wantCode(t, e.createListener(c, "lb-missing", nil), "InvalidLoadBalancerId.NotFound")
	must(t, e.createListener(c, lbID, nil))
	wantCode(t, e.createListener(c, lbID, nil), "ListenerAlreadyExists")
	l, err := e.tcpListener(c, lbID, 6443)
	must(t, err)
	if l.Status != "stopped" || l.BackendServerPort != 6443 || l.Bandwidth != -1 || l.HealthCheck != "on" ||
		l.HealthCheckConnectPort != 6443 || l.HealthyThreshold != 3 || l.HealthCheckInterval != 2 || l.Scheduler != "wrr" {
		t.Fatalf("new listener: %+v", l)
	}
	_, err = e.tcpListener(c, lbID, 80)
	wantCode(t, err, "ListenerNotFound")
	must(t, e.listenerCall(c, "start", lbID, 6443))
	if l, err = e.tcpListener(c, lbID, 6443); err != nil || l.Status != "running" {
		t.Fatalf("started listener: %+v %v", l, err)
	}

	// Backends: instances of the same VPC, running.
	run, err := e.ecs.RunInstances(e.runReq(f, "ecs.g7.xlarge", 3))
	must(t, err)
	nodes := run.InstanceIdSets.InstanceIdSet
	stranger, err := e.ecs.RunInstances(e.runReq(other, "ecs.g7.xlarge", 1))
	must(t, err)
	_, err = e.addBackends(c, lbID, backendsJSON(stranger.InstanceIdSets.InstanceIdSet[0]))
	wantCode(t, err, "NetworkConflict")
	_, err = e.addBackends(c, lbID, backendsJSON("i-missing"))
	wantCode(t, err, "InvalidServerId.NotFound")
	_, err = e.addBackends(c, lbID, `[{"ServerId":"`+nodes[0]+`","Weight":101}]`)
	wantCode(t, err, "InvalidWeight.Malformed")
	_, err = e.addBackends(c, lbID, `not json`)
	wantCode(t, err, "BackendServersMalformed")
	many := make([]string, 21)
	for i := range many {
		many[i] = nodes[0]
	}
	_, err = e.addBackends(c, lbID, backendsJSON(many...))
	wantCode(t, err, "TooManyBackendServers")
	added, err := e.addBackends(c, lbID, backendsJSON(nodes...))
	must(t, err)
	if len(added.BackendServers.BackendServer) != 3 || added.BackendServers.BackendServer[1].Weight != "100" {
		t.Fatalf("AddBackendServers answered %+v", added.BackendServers)
	}
	_, err = e.addBackends(c, lbID, backendsJSON(nodes[0]))
	wantCode(t, err, "InvalidParameter")
	attr, err := e.lbAttr(c, lbID)
	must(t, err)
	if !reflect.DeepEqual(attr.ListenerPorts.ListenerPort, []int{6443}) || len(attr.BackendServers.BackendServer) != 3 ||
		attr.BackendServers.BackendServer[0].ServerIp == "" || attr.BackendServers.BackendServer[0].Weight != 100 {
		t.Fatalf("DescribeLoadBalancerAttribute: ports %v backends %+v", attr.ListenerPorts, attr.BackendServers)
	}
	if h := e.health(c, lbID); len(h) != 3 || h[nodes[0]] != "normal" {
		t.Fatalf("health: %v", h)
	}
	must(t, e.listenerCall(c, "stop", lbID, 6443))
	if h := e.health(c, lbID); h[nodes[0]] != "unavailable" {
		t.Fatalf("health behind a stopped listener: %v", h)
	}
	d.VpcId, d.ServerId = "", nodes[2]
	byServer, err := c.DescribeLoadBalancers(d)
	must(t, err)
	if byServer.TotalCount != 1 {
		t.Fatalf("DescribeLoadBalancers by ServerId: %d", byServer.TotalCount)
	}

	// A released instance leaves the backend list; RemoveBackendServers takes the rest.
	_, err = e.ecs.DeleteInstances(e.ecsDeleteReq(nodes[2]))
	must(t, err)
	if got := e.backendIDs(c, lbID); !reflect.DeepEqual(got, nodes[:2]) {
		t.Fatalf("backends after releasing %s: %v", nodes[2], got)
	}
	rm := slb.CreateRemoveBackendServersRequest()
	rm.RegionId, rm.LoadBalancerId, rm.BackendServers = testRegion, lbID, backendsJSON(nodes[1], nodes[2])
	left, err := c.RemoveBackendServers(rm)
	must(t, err)
	if len(left.BackendServers.BackendServer) != 1 || left.BackendServers.BackendServer[0].ServerId != nodes[0] {
		t.Fatalf("RemoveBackendServers answered %+v", left.BackendServers)
	}

	sn := slb.CreateSetLoadBalancerNameRequest()
	sn.RegionId, sn.LoadBalancerId, sn.LoadBalancerName = testRegion, lbID, "control-plane-2"
	_, err = c.SetLoadBalancerName(sn)
	must(t, err)
	if a, err := e.lbAttr(c, lbID); err != nil || a.LoadBalancerName != "control-plane-2" {
		t.Fatalf("after SetLoadBalancerName: %v %v", a, err)
	}

	// Tags.
	tr := slb.CreateTagResourcesRequest()
	tr.RegionId, tr.ResourceType, tr.ResourceId = testRegion, "instance", &[]string{lbID}
	tr.Tag = &[]slb.TagResourcesTag{{Key: "cluster", Value: "c1"}}
	_, err = c.TagResources(tr)
	must(t, err)
	lt := slb.CreateListTagResourcesRequest()
	lt.RegionId, lt.ResourceType = testRegion, "instance"
	lt.Tag = &[]slb.ListTagResourcesTag{{Key: "cluster", Value: "c1"}}
	tags, err := c.ListTagResources(lt)
	must(t, err)
	if len(tags.TagResources.TagResource) != 1 || tags.TagResources.TagResource[0].ResourceId != lbID {
		t.Fatalf("ListTagResources: %+v", tags.TagResources)
	}

	// Wrong order, then the right one.
	wantCode(t, e.deleteVSwitch(f.vswID), "DependencyViolation")
	wantCode(t, e.deleteVpc(f.vpcID), "DependencyViolation")
	wantCode(t, e.deleteLB(c, lbID), "OperationDenied.DeleteProtectionIsOn")
	p := slb.CreateSetLoadBalancerDeleteProtectionRequest()
	p.RegionId, p.LoadBalancerId, p.DeleteProtection = testRegion, lbID, "off"
	_, err = c.SetLoadBalancerDeleteProtection(p)
	must(t, err)
	must(t, e.listenerCall(c, "delete", lbID, 6443))
	wantCode(t, e.listenerCall(c, "delete", lbID, 6443), "ListenerNotFound")
	must(t, e.deleteLB(c, lbID))
	_, err = e.lbAttr(c, lbID)
	wantCode(t, err, "InvalidLoadBalancerId.NotFound")
	if n := len(e.s.Resources().LoadBalancers); n != 0 {
		t.Fatalf("%d load balancers left", n)
	}
}

// TestNetworkStateSurvivesRestart writes NAT gateway, EIP, SNAT entry and
// load balancer to the state file and reads them back in a new emulator.
func TestNetworkStateSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	e := newEnv(t, Config{StateFile: path})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	cn := vpc.CreateCreateNatGatewayRequest()
	cn.RegionId, cn.VpcId, cn.VSwitchId = testRegion, f.vpcID, f.vswID
	nat, err := e.vpc.CreateNatGateway(cn)
	must(t, err)
	table := nat.SnatTableIds.SnatTableId[0]
	eip, err := e.allocateEip("100", "PayByTraffic")
	must(t, err)
	must(t, e.associateEip(eip.AllocationId, nat.NatGatewayId, "Nat"))
	_, err = e.createSnat(table, f.vswID, "", eip.EipAddress)
	must(t, err)
	c := e.slbClient()
	lb := e.createLB(c, f.vswID, "")
	must(t, e.createListener(c, lb.LoadBalancerId, nil))
	run, err := e.ecs.RunInstances(e.runReq(f, "ecs.g7.xlarge", 1))
	must(t, err)
	_, err = e.addBackends(c, lb.LoadBalancerId, backendsJSON(run.InstanceIdSets.InstanceIdSet...))
	must(t, err)
	before := e.s.Resources()
	e.srv.Close()
	must(t, e.s.Close())

	e2 := newEnv(t, Config{StateFile: path})
	after := e2.s.Resources()
	for _, pair := range [][2][]map[string]any{{before.NatGateways, after.NatGateways}, {before.EIPs, after.EIPs},
		{before.SnatEntries, after.SnatEntries}} {
		if len(pair[0]) != 1 || fmt.Sprint(pair[0]) != fmt.Sprint(pair[1]) {
			t.Fatalf("not the same after a restart:\n%v\n%v", pair[0], pair[1])
		}
	}
	if len(after.LoadBalancers) != 1 || fmt.Sprint(before.LoadBalancers) != fmt.Sprint(after.LoadBalancers) {
		t.Fatalf("load balancers after a restart:\n%v\n%v", before.LoadBalancers, after.LoadBalancers)
	}
	// And they still work through the API.
	if got := e2.snatEntries(table); len(got) != 1 || got[0].SnatIp != eip.EipAddress {
		t.Fatalf("SNAT entries after a restart: %+v", got)
	}
	if got := e2.backendIDs(e2.slbClient(), lb.LoadBalancerId); !reflect.DeepEqual(got, run.InstanceIdSets.InstanceIdSet) {
		t.Fatalf("backends after a restart: %v", got)
	}
	wantCode(t, e2.deleteNat(nat.NatGatewayId, false), "DependencyViolation.SnatEntry")
}

func TestResourceCountsCoverEveryKind(t *testing.T) {
	e := newEnv(t, Config{})
	if got := e.s.Resources().Counts(); len(got) != 0 {
		t.Fatalf("a new emulator counts %v", got)
	}
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	cn := vpc.CreateCreateNatGatewayRequest()
	cn.RegionId, cn.VpcId, cn.VSwitchId = testRegion, f.vpcID, f.vswID
	nat, err := e.vpc.CreateNatGateway(cn)
	must(t, err)
	eip, err := e.allocateEip("10", "")
	must(t, err)
	must(t, e.associateEip(eip.AllocationId, nat.NatGatewayId, "Nat"))
	_, err = e.createSnat(nat.SnatTableIds.SnatTableId[0], f.vswID, "", eip.EipAddress)
	must(t, err)
	e.createLB(e.slbClient(), f.vswID, "")
	want := map[string]int{"vpcs": 1, "vswitches": 1, "security_groups": 1, "nat_gateways": 1, "snat_entries": 1,
		"eips": 1, "load_balancers": 1}
	if got := e.s.Resources().Counts(); !reflect.DeepEqual(got, want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
}

// SetLoadBalancerTCPListenerAttribute takes the interval as HealthCheckInterval (upper camel case,
// unlike the create call): a change must reach the listener, not be dropped.
func TestSetListenerHealthCheckInterval(t *testing.T) {
	e := newEnv(t, Config{})
	c := e.slbClient()
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	lbID := e.createLB(c, f.vswID, "lb-interval").LoadBalancerId
	must(t, e.createListener(c, lbID, nil))
	set := slb.CreateSetLoadBalancerTCPListenerAttributeRequest()
	set.RegionId, set.LoadBalancerId, set.ListenerPort = testRegion, lbID, requests.NewInteger(6443)
	set.HealthCheckInterval = requests.NewInteger(7)
	_, err := c.SetLoadBalancerTCPListenerAttribute(set)
	must(t, err)
	got, err := e.tcpListener(c, lbID, 6443)
	must(t, err)
	if got.HealthCheckInterval != 7 {
		t.Fatalf("HealthCheckInterval after Set = %d, want 7", got.HealthCheckInterval)
	}
}
