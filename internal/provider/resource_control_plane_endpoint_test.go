package provider_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/slb"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

// haControlPlaneConfig is a control plane of size nodes behind a control plane endpoint, joining
// through the endpoint's address.
func haControlPlaneConfig(size int, extra string) string {
	return poolNetworkConfig("") + fmt.Sprintf(`
resource "gpucluster_control_plane_endpoint" "api" {
  name       = "api"
  network_id = gpucluster_rdma_network.net.id
  tags       = { team = "platform" }
}

resource "gpucluster_node_pool" "control" {
  name            = "control"
  network_id      = gpucluster_rdma_network.net.id
  scenario        = "engineering_simulation"
  instance_type   = "ecs.g7.2xlarge"
  size            = %d
  update_strategy = { max_unavailable = 2 }
  # One pool of 3 or 5 behind the load balancer: what this test is about. The node bootstrap
  # splits a control plane into a first pool and a joining one (see node_pool_ha_test.go).
  bootstrap       = false
  %s
  kubernetes = {
    role             = "control_plane"
    api_endpoint     = gpucluster_control_plane_endpoint.api.endpoint
    join_token       = %q
    load_balancer_id = gpucluster_control_plane_endpoint.api.load_balancer_id
  }
}
`, size, extra, testJoinToken)
}

// emulatorSLB is a real SLB SDK client pointed at the emulator: the tests read the load balancer
// as the cloud reports it, and change it behind Terraform's back.
func emulatorSLB(emu *acctest.Emulator) *slb.Client {
	client, err := slb.NewClientWithAccessKey(acctest.Region, acctest.AccessKey, acctest.SecretKey)
	if err != nil {
		panic(err)
	}
	toEmulator(emu, &client.Client)
	return client
}

// poolNodeIDs reads a pool's node ids from the state, sorted.
func poolNodeIDs(s *terraform.State, address string) ([]string, error) {
	rs, ok := s.RootModule().Resources[address]
	if !ok {
		return nil, fmt.Errorf("%s is not in the state", address)
	}
	n, _ := strconv.Atoi(rs.Primary.Attributes["nodes.#"])
	ids := make([]string, 0, n)
	for i := 0; i < n; i++ {
		ids = append(ids, rs.Primary.Attributes[fmt.Sprintf("nodes.%d.id", i)])
	}
	sort.Strings(ids)
	return ids, nil
}

// checkAPILoadBalancer reads the region's load balancers through the SLB API and asserts there is
// one, internal, listening on TCP 6443 (running, forwarding to 6443, TCP health check on), whose
// backend servers are exactly the control plane's nodes, wantNodes of them.
func checkAPILoadBalancer(emu *acctest.Emulator, wantNodes int) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		c := emulatorSLB(emu)
		list := slb.CreateDescribeLoadBalancersRequest()
		list.RegionId = acctest.Region
		lbs, err := c.DescribeLoadBalancers(list)
		if err != nil {
			return err
		}
		if n := len(lbs.LoadBalancers.LoadBalancer); n != 1 {
			return fmt.Errorf("%d load balancers in the region, want 1", n)
		}
		id := lbs.LoadBalancers.LoadBalancer[0].LoadBalancerId
		if got := s.RootModule().Resources["gpucluster_control_plane_endpoint.api"].Primary.Attributes["load_balancer_id"]; got != id {
			return fmt.Errorf("the endpoint records load balancer %q, the cloud has %q", got, id)
		}
		attr := slb.CreateDescribeLoadBalancerAttributeRequest()
		attr.RegionId, attr.LoadBalancerId = acctest.Region, id
		lb, err := c.DescribeLoadBalancerAttribute(attr)
		if err != nil {
			return err
		}
		if lb.AddressType != "intranet" {
			return fmt.Errorf("load balancer %s is %s, want intranet", id, lb.AddressType)
		}
		if ports := lb.ListenerPorts.ListenerPort; !slices.Equal(ports, []int{6443}) {
			return fmt.Errorf("load balancer %s listens on %v, want [6443]", id, ports)
		}
		la := slb.CreateDescribeLoadBalancerTCPListenerAttributeRequest()
		la.RegionId, la.LoadBalancerId, la.ListenerPort = acctest.Region, id, requests.NewInteger(6443)
		l, err := c.DescribeLoadBalancerTCPListenerAttribute(la)
		if err != nil {
			return err
		}
		if l.BackendServerPort != 6443 || l.Status != "running" || l.HealthCheck != "on" || l.HealthCheckType != "tcp" {
			return fmt.Errorf("listener 6443: backend port %d, status %s, health check %s/%s; want 6443, running, on/tcp",
				l.BackendServerPort, l.Status, l.HealthCheck, l.HealthCheckType)
		}
		var backends []string
		for _, b := range lb.BackendServers.BackendServer {
			backends = append(backends, b.ServerId)
		}
		sort.Strings(backends)
		nodes, err := poolNodeIDs(s, "gpucluster_node_pool.control")
		if err != nil {
			return err
		}
		if len(nodes) != wantNodes || !slices.Equal(backends, nodes) {
			return fmt.Errorf("backend servers %v, want the control plane's %d nodes %v", backends, wantNodes, nodes)
		}
		if ep := s.RootModule().Resources["gpucluster_control_plane_endpoint.api"].Primary.Attributes["endpoint"]; ep != lb.Address+":6443" {
			return fmt.Errorf("endpoint = %q, want the load balancer's address %s:6443", ep, lb.Address)
		}
		return nil
	}
}

// endpointRules reads the ingress rules at the endpoint's priority (2) from the network's group.
func endpointRules(emu *acctest.Emulator, sgID string) ([]ecs.Permission, error) {
	req := ecs.CreateDescribeSecurityGroupAttributeRequest()
	req.RegionId, req.SecurityGroupId, req.Direction = acctest.Region, sgID, "ingress"
	resp, err := emulatorECS(emu).DescribeSecurityGroupAttribute(req)
	if err != nil {
		return nil, err
	}
	var out []ecs.Permission
	for _, p := range resp.Permissions.Permission {
		if p.Priority == "2" {
			out = append(out, p)
		}
	}
	return out, nil
}

// checkEndpointRules asserts that the endpoint owns exactly TCP 6443 from each of the network's
// vSwitch CIDRs and from the CLB health-check block, nothing wider.
func checkEndpointRules(emu *acctest.Emulator) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		net := s.RootModule().Resources["gpucluster_rdma_network.net"].Primary.Attributes
		want := []string{"100.64.0.0/10"}
		for k, v := range net {
			if strings.HasPrefix(k, "vswitch_cidrs.") && k != "vswitch_cidrs.%" {
				want = append(want, v)
			}
		}
		sort.Strings(want)
		rules, err := endpointRules(emu, net["id"])
		if err != nil {
			return err
		}
		var got []string
		for _, r := range rules {
			if r.IpProtocol != "TCP" || r.PortRange != "6443/6443" || r.Policy != "Accept" && r.Policy != "accept" {
				return fmt.Errorf("endpoint rule wider than TCP 6443 accept: %+v", r)
			}
			got = append(got, r.SourceCidrIp)
		}
		sort.Strings(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("endpoint rules from %v, want from %v", got, want)
		}
		return nil
	}
}

// backendWatch sits between the provider and the emulator and notes every DeleteInstances call
// that deletes a node some load balancer still sends traffic to.
type backendWatch struct {
	mu         sync.Mutex
	violations []string
	deletes    int
	URL        string
}

func startBackendWatch(t *testing.T, emu *acctest.Emulator) *backendWatch {
	t.Helper()
	w := &backendWatch{}
	next := emu.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.Form.Get("Action") == "DeleteInstances" {
			backends := map[string]bool{}
			for _, lb := range emu.Resources().LoadBalancers {
				for _, id := range lb["backend_server_ids"].([]string) {
					backends[id] = true
				}
			}
			w.mu.Lock()
			w.deletes++
			for k, v := range r.Form {
				if strings.HasPrefix(k, "InstanceId.") && backends[v[0]] {
					w.violations = append(w.violations, v[0])
				}
			}
			w.mu.Unlock()
		}
		next.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	w.URL = srv.URL
	return w
}

func (w *backendWatch) check(minDeletes int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.deletes < minDeletes {
			return fmt.Errorf("%d DeleteInstances calls seen, want at least %d: the watch saw no roll", w.deletes, minDeletes)
		}
		if len(w.violations) > 0 {
			return fmt.Errorf("nodes deleted while still backend servers of the load balancer: %v", w.violations)
		}
		return nil
	}
}

// Must show: a control plane of 3 gets one internal load balancer with a TCP 6443 listener and
// its 3 nodes as backends; scaling to 5 and rolling keep the backends equal to the nodes (no node
// is deleted while it takes traffic); drift is repaired; size 2 is refused at plan; destroy
// leaves nothing.
func TestAccControlPlaneEndpoint_haControlPlane(t *testing.T) {
	const newImage = "aliyun_3_x64_20G_alibase_20240101.vhd"
	emu := acctest.StartEmulator(t, acctest.WithBootTime(500*time.Millisecond))
	watch := startBackendWatch(t, emu)
	provider := acctest.ProviderBlock(watch.URL, acctest.AccessKey, acctest.SecretKey)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{
				Config:      provider + haControlPlaneConfig(2, ""),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)size = 2: a control plane runs etcd.*Use\s+size\s+=\s+1`),
			},
			{
				Config: provider + haControlPlaneConfig(3, ""),
				Check:  resource.ComposeTestCheckFunc(checkAPILoadBalancer(emu, 3), checkEndpointRules(emu)),
			},
			{
				ResourceName:      "gpucluster_control_plane_endpoint.api",
				ImportState:       true,
				ImportStateVerify: true,
			},
			{
				Config: provider + haControlPlaneConfig(5, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_node_pool.control", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("gpucluster_control_plane_endpoint.api", plancheck.ResourceActionNoop),
				}},
				Check: checkAPILoadBalancer(emu, 5),
			},
			{
				// A roll, two nodes a wave: each wave's nodes leave the load balancer before they are
				// deleted, and the backends end up the five new nodes.
				Config: provider + haControlPlaneConfig(5, `image_id = "`+newImage+`"`),
				Check:  resource.ComposeTestCheckFunc(checkAPILoadBalancer(emu, 5), checkImages(emu, newImage, 5), watch.check(3)),
			},
			{
				// Behind Terraform's back: a backend taken out, an endpoint rule revoked, the listener
				// stopped. The plan shows it and the apply restores all three.
				PreConfig: func() { breakEndpoint(t, emu) },
				Config:    provider + haControlPlaneConfig(5, `image_id = "`+newImage+`"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_node_pool.control", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("gpucluster_control_plane_endpoint.api", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(checkAPILoadBalancer(emu, 5), checkEndpointRules(emu)),
			},
		},
	})
}

// breakEndpoint removes one backend server, revokes one endpoint rule and stops the listener,
// through the vendor APIs.
func breakEndpoint(t *testing.T, emu *acctest.Emulator) {
	t.Helper()
	c := emulatorSLB(emu)
	lb := emu.Resources().LoadBalancers[0]
	id := lb["id"].(string)
	victim := lb["backend_server_ids"].([]string)[0]
	rm := slb.CreateRemoveBackendServersRequest()
	rm.RegionId, rm.LoadBalancerId, rm.BackendServers = acctest.Region, id, `[{"ServerId":"`+victim+`","Type":"ecs"}]`
	if _, err := c.RemoveBackendServers(rm); err != nil {
		t.Fatal(err)
	}
	stop := slb.CreateStopLoadBalancerListenerRequest()
	stop.RegionId, stop.LoadBalancerId, stop.ListenerPort = acctest.Region, id, requests.NewInteger(6443)
	if _, err := c.StopLoadBalancerListener(stop); err != nil {
		t.Fatal(err)
	}
	sg := emu.Resources().SecurityGroups[0]["id"].(string)
	rules, err := endpointRules(emu, sg)
	if err != nil || len(rules) == 0 {
		t.Fatalf("no endpoint rule to revoke (%v)", err)
	}
	revoke := ecs.CreateRevokeSecurityGroupRequest()
	revoke.RegionId, revoke.SecurityGroupId = acctest.Region, sg
	revoke.SecurityGroupRuleId = &[]string{rules[0].SecurityGroupRuleId}
	if _, err := emulatorECS(emu).RevokeSecurityGroup(revoke); err != nil {
		t.Fatal(err)
	}
}

// endpointOnlyConfig is the network (with admin CIDRs) and an endpoint in it, no pool.
func endpointOnlyConfig(adminCIDR string) string {
	return fmt.Sprintf(`
resource "gpucluster_rdma_network" "net" {
  name        = "pool-net"
  cidr_block  = "10.20.0.0/16"
  zone_ids    = ["cn-wulanchabu-a", "cn-wulanchabu-b"]
  admin_cidrs = [%q]
}

resource "gpucluster_control_plane_endpoint" "api" {
  name       = "api"
  network_id = gpucluster_rdma_network.net.id
}
`, adminCIDR)
}

// An apply interrupted after the load balancer was created left it tagged but unrecorded: the next
// apply adopts it instead of creating a second one. The network's own rule changes leave the
// endpoint's rules alone, and neither resource shows the other's rules as drift.
func TestAccControlPlaneEndpoint_adoptAndShareTheGroup(t *testing.T) {
	emu := acctest.StartEmulator(t)
	var orphan string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{Config: emu.Config() + poolNetworkConfig("")},
			{
				// What the interrupted apply left: the load balancer, tagged, no listener, no rules.
				PreConfig: func() { orphan = createOrphanEndpoint(t, emu) },
				Config:    emu.Config() + endpointOnlyConfig("10.99.0.0/24"),
				Check: resource.ComposeTestCheckFunc(
					func(*terraform.State) error {
						if n := len(emu.Resources().LoadBalancers); n != 1 {
							return fmt.Errorf("%d load balancers, want the orphan adopted and no second one", n)
						}
						return nil
					},
					resource.TestCheckResourceAttrPtr("gpucluster_control_plane_endpoint.api", "id", &orphan),
					resource.TestCheckResourceAttr("gpucluster_control_plane_endpoint.api", "listener_status", "running"),
					resource.TestCheckResourceAttr("gpucluster_control_plane_endpoint.api", "allowed_sources.#", "3"),
					checkEndpointRules(emu),
				),
			},
			{
				// The network's admin CIDRs change: its own 22/6443 rules move, the endpoint's stay.
				Config: emu.Config() + endpointOnlyConfig("10.98.0.0/24"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_rdma_network.net", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("gpucluster_control_plane_endpoint.api", plancheck.ResourceActionNoop),
				}},
				Check: resource.ComposeTestCheckFunc(checkEndpointRules(emu),
					resource.TestCheckResourceAttr("gpucluster_rdma_network.net", "admin_cidrs.#", "1"),
					resource.TestCheckResourceAttr("gpucluster_rdma_network.net", "admin_cidrs.0", "10.98.0.0/24")),
			},
		},
	})
}

// createOrphanEndpoint creates, through the SLB API, the load balancer an interrupted apply of
// endpoint "api" in the state's network would have left, and returns its id.
func createOrphanEndpoint(t *testing.T, emu *acctest.Emulator) string {
	t.Helper()
	sg := emu.Resources().SecurityGroups[0]["id"].(string)
	var vswitch string
	for _, sw := range emu.Resources().VSwitches {
		vswitch = sw["id"].(string)
		break
	}
	req := slb.CreateCreateLoadBalancerRequest()
	req.RegionId, req.AddressType, req.VSwitchId, req.LoadBalancerName = acctest.Region, "intranet", vswitch, "api"
	req.LoadBalancerSpec = "slb.s1.small"
	req.Tag = &[]slb.CreateLoadBalancerTag{
		{Key: "gpucluster:managed-by", Value: "terraform-provider-gpucluster"},
		{Key: "gpucluster:network-id", Value: sg},
		{Key: "gpucluster:control-plane-endpoint", Value: "api"},
	}
	resp, err := emulatorSLB(emu).CreateLoadBalancer(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.LoadBalancerId
}
