package emulator

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

// TestViewShowsRunningInstancesAndTheirNetwork: what the node agent reads: an instance made
// through the SDK with user data, host name and security group, with its type's figures from the
// catalog, Pending first and Running after the boot time; the group's rules as authorised.
func TestViewShowsRunningInstancesAndTheirNetwork(t *testing.T) {
	// A boot of minutes, so no poll can miss a status, moved through by the clock; all of it
	// stays under the 15 minutes a signed request may be off the emulator's clock.
	e := newEnv(t, Config{BootTime: 4 * time.Minute})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	auth := ecs.CreateAuthorizeSecurityGroupRequest()
	auth.RegionId, auth.SecurityGroupId = testRegion, f.sgID
	auth.IpProtocol, auth.PortRange, auth.SourceCidrIp, auth.Priority = "tcp", "6443/6443", "10.0.0.0/16", "2"
	_, err := e.ecs.AuthorizeSecurityGroup(auth)
	must(t, err)
	r := e.runReq(f, "ecs.gn7i-c32g1.16xlarge", 1)
	r.HostName, r.UserData = "gpu-0", "I2Nsb3VkLWNvbmZpZwo=" // "#cloud-config\n"
	resp, err := e.ecs.RunInstances(r)
	must(t, err)
	id := resp.InstanceIdSets.InstanceIdSet[0]

	v := e.s.View()
	if len(v.Instances) != 1 || v.Instances[0].Status != "Pending" {
		t.Fatalf("View right after RunInstances = %+v, want the instance Pending", v.Instances)
	}
	// Pending for the first half of the boot, Starting for the second, then Running: the clock is
	// moved into each, so no poll can miss the Starting half however slow the machine.
	for _, step := range []struct {
		advance time.Duration
		want    string
	}{{time.Minute, "Pending"}, {2 * time.Minute, "Starting"}, {2 * time.Minute, "Running"}} {
		e.advance(step.advance)
		if got := e.describe([]string{id})[0].Status; got != step.want {
			t.Fatalf("%v further into its 4-minute boot the instance is %s, want %s", step.advance, got, step.want)
		}
	}
	v = e.s.View()
	in := v.Instances[0]
	if in.ID != id || in.Status != "Running" || in.HostName != "gpu-0" || in.UserData != r.UserData || in.VSwitchID != f.vswID ||
		in.VpcID != f.vpcID || len(in.SecurityGroupIDs) != 1 || in.SecurityGroupIDs[0] != f.sgID || !strings.HasPrefix(in.PrivateIP, "10.0.1.") {
		t.Errorf("View instance = %+v", in)
	}
	if in.VCPUs != 64 || in.MemoryGiB != 376 || in.GPUs != 2 {
		t.Errorf("View figures = %d vCPUs, %v GiB, %d GPUs; want ecs.gn7i-c32g1.16xlarge's 64, 376, 2", in.VCPUs, in.MemoryGiB, in.GPUs)
	}
	sg := v.SecurityGroups[f.sgID]
	if !sg.InnerAccessAccept || len(sg.Rules) != 1 || sg.Rules[0] != (SecurityRuleView{Direction: "ingress", Protocol: "TCP",
		PortRange: "6443/6443", CIDR: "10.0.0.0/16", Policy: "accept", Priority: 2}) {
		t.Errorf("View security group = %+v", sg)
	}
	if sw := v.VSwitches[f.vswID]; sw.CIDR != "10.0.1.0/24" || sw.VpcID != f.vpcID {
		t.Errorf("View vSwitch = %+v", sw)
	}
}

// TestPublicIPWithInternetBandwidth: an instance launched with InternetMaxBandwidthOut > 0 gets a
// public address (DescribeInstances' PublicIpAddress, the View's PublicIP); one without, none.
func TestPublicIPWithInternetBandwidth(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	addrs := map[string]string{}
	for _, bw := range []int{10, 0} {
		r := e.runReq(f, "ecs.g7.xlarge", 1)
		r.InternetMaxBandwidthOut = requests.NewInteger(bw)
		resp, err := e.ecs.RunInstances(r)
		must(t, err)
		id := resp.InstanceIdSets.InstanceIdSet[0]
		got := e.describe([]string{id})[0].PublicIpAddress.IpAddress
		if (bw > 0) != (len(got) == 1) {
			t.Errorf("InternetMaxBandwidthOut %d: PublicIpAddress %v", bw, got)
		}
		if len(got) == 1 {
			addrs[id] = got[0]
		}
	}
	for _, in := range e.s.View().Instances {
		if in.PublicIP != addrs[in.ID] {
			t.Errorf("View %s PublicIP %q, want %q", in.ID, in.PublicIP, addrs[in.ID])
		}
	}
}

// TestNodesPathWithoutAndWithAnAgent: without a node agent GET /_emulator/nodes is a 404 that
// says how to start one; HandleAdmin plugs one in.
func TestNodesPathWithoutAndWithAnAgent(t *testing.T) {
	e := newEnv(t, Config{})
	get := func() (int, string) {
		resp, err := http.Get(e.srv.URL + NodesPath)
		must(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(); code != http.StatusNotFound || !strings.Contains(body, "--kubeconfig") {
		t.Errorf("without an agent: %d %q, want 404 naming --kubeconfig", code, body)
	}
	e.s.HandleAdmin(NodesPath, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"nodes":[]}`) }))
	if code, body := get(); code != http.StatusOK || body != `{"nodes":[]}` {
		t.Errorf("with an agent: %d %q", code, body)
	}
	resp, err := http.Get(e.srv.URL + "/_emulator/nope")
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown admin path: %s", resp.Status)
	}
}

// BenchmarkView10k measures one View of 10,000 instances: what each node agent poll costs the
// emulator (under its read lock). Without an agent nothing calls it.
func BenchmarkView10k(b *testing.B) {
	e := newEnv(b, Config{})
	populate(b, e, 10000)
	b.ResetTimer()
	for b.Loop() {
		if v := e.s.View(); len(v.Instances) != 10000 {
			b.Fatalf("View has %d instances", len(v.Instances))
		}
	}
}
