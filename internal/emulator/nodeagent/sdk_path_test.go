package nodeagent

import (
	"context"
	"encoding/json"
	"net/http"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// cloudScenario is a network built in the real emulator through internal/cloud (the vendor SDK
// over HTTP), as the provider builds one: VPC, vSwitch, a security group whose members reach
// each other, the control plane's internal load balancer with its TCP 6443 listener, and, with
// egress, a NAT gateway with an EIP and an SNAT entry for the vSwitch.
type cloudScenario struct {
	srv              *emulator.Server
	url              string
	c                *cloud.Client
	vpcID, vswID     string
	sgID, lbID, lbIP string
	seq              int
}

const (
	testImage = "ubuntu_22_04_x64_20G_alibase_20240101.vhd"
	testZone  = "cn-wulanchabu-a"
)

func startCloud(t *testing.T, egress bool) *cloudScenario {
	t.Helper()
	srv, err := emulator.New(emulator.Config{BootTime: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx := t.Context()
	c, err := cloud.New(ctx, cloud.Config{Region: "cn-wulanchabu", Endpoint: url, MaxRetries: 3, UserAgent: "nodeagent-test/0",
		Credentials: cloud.Credentials{AccessKeyID: "emulator", AccessKeySecret: "emulator-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	s := &cloudScenario{srv: srv, url: url, c: c}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	s.vpcID, err = c.CreateVPC(ctx, cloud.VPCInput{Name: "agent", CIDRBlock: "10.0.0.0/16"})
	must(err)
	_, err = c.WaitVPCAvailable(ctx, s.vpcID)
	must(err)
	s.vswID, err = c.CreateVSwitch(ctx, cloud.VSwitchInput{VPCID: s.vpcID, ZoneID: testZone, CIDRBlock: "10.0.1.0/24", Name: "agent"})
	must(err)
	_, err = c.WaitVSwitchAvailable(ctx, s.vswID)
	must(err)
	s.sgID, err = c.CreateSecurityGroup(ctx, cloud.SecurityGroupInput{VPCID: s.vpcID, Name: "agent"})
	must(err)
	s.lbID, s.lbIP, err = c.CreateInternalLoadBalancer(ctx, cloud.LoadBalancerInput{VSwitchID: s.vswID, Name: "agent-cp"})
	must(err)
	_, err = c.EnsureTCPListener(ctx, s.lbID, cloud.TCPListenerInput{Port: 6443, BackendPort: 6443})
	must(err)
	if egress {
		natID, table, err := c.CreateNATGateway(ctx, cloud.NATGatewayInput{VPCID: s.vpcID, VSwitchID: s.vswID, Name: "agent"})
		must(err)
		_, err = c.WaitNATGatewayAvailable(ctx, natID)
		must(err)
		eipID, addr, err := c.AllocateEIP(ctx, cloud.EIPInput{BandwidthMbps: 100, InternetChargeType: cloud.EIPChargeByTraffic, Name: "agent"})
		must(err)
		must(c.AssociateEIP(ctx, eipID, natID, cloud.EIPInstanceNAT))
		entry, err := c.CreateSNATEntry(ctx, cloud.SNATEntryInput{SnatTableID: table, SourceVSwitchID: s.vswID, SnatIPs: []string{addr}, Name: "agent"})
		must(err)
		_, err = c.WaitSNATEntryAvailable(ctx, table, entry)
		must(err)
	}
	return s
}

// endpoint is the control plane's API endpoint: the load balancer's address, port 6443.
func (s *cloudScenario) endpoint() string { return s.lbIP + ":6443" }

// behind puts a node's options behind the load balancer as the node pool does: the endpoint, and
// the API server name of the load balancer that the node maps to it.
func (s *cloudScenario) behind(o bootstrap.Options) bootstrap.Options {
	o.Kubernetes.APIEndpoint, o.Kubernetes.APIServerName = s.endpoint(), bootstrap.APIServerNameFor(s.lbID)
	return o
}

// run starts one instance of the type with the user data, packed as the node pool packs it, and
// returns its id.
func (s *cloudScenario) run(t *testing.T, typ, host, doc string) string {
	t.Helper()
	return s.runAs(t, typ, host, doc, "")
}

// runAs is run with the instance RAM role role ("" for none).
func (s *cloudScenario) runAs(t *testing.T, typ, host, doc, role string) string {
	t.Helper()
	s.seq++
	ids, err := s.c.RunInstances(t.Context(), cloud.RunInstancesInput{ClientToken: "agent-" + host, InstanceType: typ, ZoneID: testZone,
		ImageID: testImage, SecurityGroupID: s.sgID, VSwitchID: s.vswID, Amount: 1, MinAmount: 1, InstanceName: host, HostName: host,
		SystemDisk: cloud.Disk{Category: "cloud_essd", SizeGiB: 100}, UserData: bootstrap.PackUserData(doc), RAMRoleName: role})
	if err != nil {
		t.Fatal(err)
	}
	return ids[0]
}

// backends makes the instances the load balancer's backend servers once Running, as the
// control-plane pool does.
func (s *cloudScenario) backends(t *testing.T, ids ...string) {
	t.Helper()
	if _, err := s.c.WaitInstancesRunning(t.Context(), ids); err != nil { // the vendor takes Running servers only
		t.Fatal(err)
	}
	var want []cloud.BackendServer
	for _, id := range ids {
		want = append(want, cloud.BackendServer{ServerID: id})
	}
	if err := s.c.SetBackendServers(t.Context(), s.lbID, want); err != nil {
		t.Fatal(err)
	}
}

// nodes answers GET /_emulator/nodes, by instance id.
func (s *cloudScenario) nodes(t *testing.T) map[string]NodeStatus {
	t.Helper()
	resp, err := http.Get(s.url + emulator.NodesPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", emulator.NodesPath, resp.Status)
	}
	var body struct{ Nodes []NodeStatus }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	out := map[string]NodeStatus{}
	for _, n := range body.Nodes {
		out[n.InstanceID] = n
	}
	return out
}

// settle runs agent rounds until every id has a node or a reason that done accepts, and returns
// the last answer of /_emulator/nodes. Instances become Running by time, so it polls.
func (s *cloudScenario) settle(t *testing.T, a *Agent, ids []string, done func(NodeStatus) bool) map[string]NodeStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for {
		a.Sync(ctx)
		got := s.nodes(t)
		all := true
		for _, id := range ids {
			all = all && done(got[id])
		}
		if all {
			return got
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the nodes did not settle: %+v", got)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// power stops or starts an instance with the ECS SDK's StopInstances / StartInstances, as a user
// does from the console or the CLI (internal/cloud has no call for it: the provider never stops a
// node).
func (s *cloudScenario) power(t *testing.T, id string, start bool) {
	t.Helper()
	c, err := ecs.NewClientWithAccessKey("cn-wulanchabu", "emulator", "emulator-secret")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := neturl.Parse(s.url)
	c.Domain, c.GetConfig().Scheme = u.Host, "HTTP"
	if start {
		r := ecs.CreateStartInstancesRequest()
		r.InstanceId = &[]string{id}
		_, err = c.StartInstances(r)
	} else {
		r := ecs.CreateStopInstancesRequest()
		r.InstanceId = &[]string{id}
		_, err = c.StopInstances(r)
	}
	if err != nil {
		t.Fatalf("start=%v %s: %v", start, id, err)
	}
}

// startAgent plugs an agent over the scenario's emulator into its admin API.
func (s *cloudScenario) startAgent(t *testing.T, kube Kube) *Agent {
	a := New(s.srv.View, kube, t.Logf)
	s.srv.HandleAdmin(emulator.NodesPath, a)
	a.WriteConsoles(s.srv.SetConsoleOutput)
	return a
}

func registered(st NodeStatus) bool { return st.Node != "" }

// smallCluster starts a first control-plane node (CA cpCA, behind the load balancer) and one GPU
// worker pinned to workerCA, named prefix-cp-0 and prefix-gpu-0, and returns their ids. edit,
// when given, changes both nodes' options (such as upstream).
func (s *cloudScenario) smallCluster(t *testing.T, prefix string, cpCA, workerCA clusterCA, edit ...func(bootstrap.Options) bootstrap.Options) (cp, worker string) {
	t.Helper()
	cpOpts, wOpts := firstControlPlane(cpCA), gpuWorker(workerCA)
	for _, e := range edit {
		cpOpts, wOpts = e(cpOpts), e(wOpts)
	}
	cpOpts = s.behind(cpOpts)
	cp = s.run(t, "ecs.g7.xlarge", prefix+"-cp-0", renderDoc(t, cpOpts))
	s.backends(t, cp)
	wOpts = s.behind(wOpts)
	return cp, s.run(t, "ecs.gn7i-c32g1.16xlarge", prefix+"-gpu-0", renderDoc(t, wOpts))
}

// TestThroughTheSDK: a first control-plane node and two GPU workers created through the SDK
// path register with the labels, taints and capacity of their user data and instance type; the
// add-ons (Flannel first) are applied once.
func TestThroughTheSDK(t *testing.T) {
	ca := testCAs(t)[0]
	s := startCloud(t, true)
	cpOpts := firstControlPlane(ca)
	cpOpts = s.behind(cpOpts)
	cp := s.run(t, "ecs.g7.xlarge", "cp-0", renderDoc(t, cpOpts))
	s.backends(t, cp)
	wOpts := gpuWorker(ca)
	wOpts = s.behind(wOpts)
	w1 := s.run(t, "ecs.gn7i-c32g1.16xlarge", "gpu-0", renderDoc(t, wOpts))
	w2 := s.run(t, "ecs.gn7i-c32g1.16xlarge", "gpu-1", renderDoc(t, wOpts))
	kube := newFakeKube()
	a := s.startAgent(t, kube)
	got := s.settle(t, a, []string{cp, w1, w2}, registered)

	if got[cp].Node != "cp-0" || got[cp].Role != RoleInit || got[w1].Node != "gpu-0" || got[w2].Role != RoleWorker {
		t.Errorf("statuses = %+v", got)
	}
	n := kube.nodes["gpu-0"]
	for k, v := range wOpts.Kubernetes.Labels {
		if n.Labels[k] != v {
			t.Errorf("gpu-0 label %s = %q, want %q", k, n.Labels[k], v)
		}
	}
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != bootstrap.GPUTaintKey || string(n.Spec.Taints[0].Effect) != bootstrap.GPUTaintEffect {
		t.Errorf("gpu-0 taints = %+v, want only %s:%s", n.Spec.Taints, bootstrap.GPUTaintKey, bootstrap.GPUTaintEffect)
	}
	// ecs.gn7i-c32g1.16xlarge: 64 vCPUs, 376 GiB, 2 GPUs (the emulator's catalog).
	gpus, cpu, mem := n.Status.Capacity[GPUResource], n.Status.Capacity["cpu"], n.Status.Capacity["memory"]
	if gpus.Value() != 2 || cpu.Value() != 64 || mem.Value() != 376<<30 {
		t.Errorf("gpu-0 capacity = %v", n.Status.Capacity)
	}
	c := kube.nodes["cp-0"]
	if _, ok := c.Labels["node-role.kubernetes.io/control-plane"]; !ok || len(c.Spec.Taints) != 1 || c.Spec.Taints[0].Key != "node-role.kubernetes.io/control-plane" {
		t.Errorf("cp-0 labels %v taints %+v: want kubeadm's control-plane label and taint", c.Labels, c.Spec.Taints)
	}
	if _, ok := c.Status.Capacity[GPUResource]; ok {
		t.Errorf("cp-0 (no GPU) has %s capacity", GPUResource)
	}
	if len(kube.applied) != 1 || len(kube.applied[0]) != 2 || kube.applied[0][0].Name != bootstrap.CNIAddonFile || kube.applied[0][1].Name != "10-team.yaml" {
		t.Errorf("applied add-ons %v, want once: %s then 10-team.yaml", kube.applied, bootstrap.CNIAddonFile)
	}
	if !strings.Contains(kube.applied[0][0].YAML, "kind: DaemonSet") {
		t.Errorf("the CNI add-on is not Flannel's manifest")
	}

	// A released worker's node goes, as the cloud's node controller deletes it.
	if err := s.c.DeleteInstances(t.Context(), []string{w2}); err != nil {
		t.Fatal(err)
	}
	a.Sync(t.Context())
	if kube.nodes["gpu-1"] != nil || kube.nodes["gpu-0"] == nil {
		t.Errorf("after releasing %s: nodes %v, want gpu-0 only of the workers", w2, kube.nodes)
	}
}

// TestThroughTheSDKWithoutEgress: the same cluster with upstream sources (which need the
// internet; the in-region defaults do not) on a network without a NAT gateway: no node
// registers, and /_emulator/nodes says "no route to the internet" for each.
func TestThroughTheSDKWithoutEgress(t *testing.T) {
	ca := testCAs(t)[0]
	s := startCloud(t, false)
	cp, w := s.smallCluster(t, "noegress", ca, ca, upstream)
	kube := newFakeKube()
	got := s.settle(t, s.startAgent(t, kube), []string{cp, w}, func(st NodeStatus) bool { return strings.HasPrefix(st.Reason, NoRouteReason) })
	if len(kube.nodes) != 0 || len(kube.applied) != 0 {
		t.Errorf("nodes %v registered, add-ons %v applied; want none", kube.nodes, kube.applied)
	}
	mustContain(t, "worker reason", got[w].Reason, "vSwitch "+s.vswID)
}

// TestConsoleThroughTheSDK: the bootstrap's outcome read as the provider or an operator reads it
// on the cloud, through ECS GetInstanceConsoleOutput (internal/cloud's ConsoleOutput, the ECS
// SDK) and bootstrap.ParseConsole: the nodes of the in-region defaults joined; with today's
// upstream sources in cn-wulanchabu the control plane failed at the phase that installs the
// Kubernetes packages from pkgs.k8s.io (kubelet), and the GPU worker at join, with no API server
// to join. An empty console (the agent wrote nothing) fails every check; without an agent the
// console holds no bootstrap line.
func TestConsoleThroughTheSDK(t *testing.T) {
	ca := testCAs(t)[0]
	console := func(t *testing.T, s *cloudScenario, id string) (string, bootstrap.ConsoleOutcome) {
		t.Helper()
		out, err := s.c.ConsoleOutput(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return out, bootstrap.ParseConsole(out)
	}
	t.Run("joined", func(t *testing.T) {
		s := startCloud(t, true)
		cp, w := s.smallCluster(t, "console", ca, ca)
		s.settle(t, s.startAgent(t, newFakeKube()), []string{cp, w}, registered)
		for _, id := range []string{cp, w} {
			out, got := console(t, s, id)
			if !got.Seen || !got.Joined || got.FailedPhase != "" || !strings.HasPrefix(out, bootstrap.ConsolePrefix+"phase ") {
				t.Errorf("console of %s = %+v, want joined:\n%s", id, got, out)
			}
		}
		out, _ := console(t, s, cp)
		mustContain(t, "control plane's console", out, bootstrap.ConsolePrefix+"phase "+bootstrap.PhaseInit+" ok\n")
	})
	t.Run("failed at a phase", func(t *testing.T) {
		s := startCloud(t, true)
		cp, w := s.smallCluster(t, "console", ca, ca, upstream)
		refused := func(st NodeStatus) bool { return st.Role != "" && st.Reason != "" } // judged, not waiting for Running
		s.settle(t, s.startAgent(t, newFakeKube()), []string{cp, w}, refused)
		// The worker's join endpoint has no API server (the control plane failed), which the
		// agent checks before the worker's own downloads: its bootstrap waits at join.
		for id, want := range map[string][2]string{
			cp: {bootstrap.PhaseKubelet, "failed (attempt 8/8): the bootstrap cannot fetch what it needs from cn-wulanchabu"},
			w:  {bootstrap.PhaseJoin, "failed (attempt 8/8): no API server answers at " + bootstrap.APIServerNameFor(s.lbID) + ":6443 at " + s.lbIP},
		} {
			out, got := console(t, s, id)
			if got.Joined || got.FailedPhase != want[0] {
				t.Errorf("console of %s = %+v, want failed at %s:\n%s", id, got, want[0], out)
			}
			mustContain(t, "console of "+id, out, bootstrap.ConsolePrefix+"phase "+want[0]+" "+want[1])
		}
	})
	t.Run("no agent", func(t *testing.T) {
		s := startCloud(t, true)
		cp, _ := s.smallCluster(t, "console", ca, ca)
		if out, got := console(t, s, cp); out != "" || got.Seen {
			t.Errorf("console without a node agent = %q, want empty", out)
		}
	})
}
