package clustertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/nodeagent"
)

// etcdRoot is a control plane of three behind its endpoint's API server name: the first node
// (kubeadm init) and a pool of two that join it with stacked etcd, of the given instance type.
func etcdRoot(joinType string) string {
	return endpointRootHead("etcd", "10.31.0.0/16") +
		etcdPool("control", "etcd-cp", "ecs.g7.xlarge", 1, true) +
		etcdPool("control_join", "etcd-cp-join", joinType, 2, false) + `
output "stack" {
  value = gpucluster_control_plane_endpoint.api.endpoint
}
`
}

// etcdPool is one control-plane pool of etcdRoot: the first (kubeadm init, which alone takes the
// CA's certificate and key) or one that joins it.
func etcdPool(resource, name, instanceType string, size int, first bool) string {
	ca := ""
	if first {
		ca = `
    ca_cert_pem        = gpucluster_cluster_ca.ca.cert_pem
    ca_key_pem         = gpucluster_cluster_ca.ca.private_key_pem`
	}
	return fmt.Sprintf(`
resource "gpucluster_node_pool" %q {
  name          = %q
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  instance_type = %q
  size          = %d
  kubernetes = {
    role               = "control_plane"
    control_plane_init = %t
    load_balancer_id   = gpucluster_control_plane_endpoint.api.load_balancer_id
    join_token         = "abcdef.0123456789abcdef"
    certificate_key    = gpucluster_cluster_ca.ca.certificate_key%s
    ca_cert_hash       = gpucluster_cluster_ca.ca.ca_cert_hash
  }
}
`, resource, name, instanceType, size, first, ca)
}

// TestAccClusterEtcdMembersAfterReplacement (issue #31): a control plane of three whose joining
// pool is rolled onto another instance type, one node at a time. Each replacement's kubeadm join
// adds an etcd member, which etcd refuses while the member of the node it replaces is still
// listed and unreachable (the node agent's model, nodeagent/etcd.go, and the offline cluster's
// real etcd, whose members the agent makes as kubeadm does); the provider removes that member
// through Cloud Assistant before it deletes the node. After the roll the control plane's three
// nodes are Ready and etcd lists exactly them, each connected: in the agent's list and in the
// real etcd's, voting members all.
func TestAccClusterEtcdMembersAfterReplacement(t *testing.T) {
	s := startStack(t)
	run := s.prepare(t, etcdRoot("ecs.g7.xlarge"))
	s.useRealEtcd(t)
	run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	s.waitControlPlane(t, 3)
	before := s.etcdMembers(t)
	if len(before) != 3 {
		t.Fatalf("etcd members after forming: %+v, want 3", before)
	}

	run.Write(etcdRoot("ecs.g7.2xlarge")) // the same state: the pool rolls onto the new type
	run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	s.waitControlPlane(t, 3)
	live := map[string]string{} // node name -> instance
	for _, st := range s.agent.Statuses() {
		if st.Node != "" {
			live[st.Node] = st.InstanceID
		}
	}
	after := s.etcdMembers(t)
	var names []string
	for _, m := range after {
		names = append(names, m.Name)
		if live[m.Name] != m.InstanceID || !m.Connected {
			t.Errorf("etcd member %+v is not a live control-plane node (live: %v)", m, live)
		}
	}
	if len(after) != 3 || len(live) != 3 {
		t.Fatalf("after the roll etcd lists %v, the cluster has nodes %v: want the same three", names, live)
	}
	replaced := 0
	for _, m := range before {
		if !slices.ContainsFunc(after, func(a nodeagent.EtcdMember) bool { return a.InstanceID == m.InstanceID }) {
			replaced++
		}
	}
	s.checkRealEtcd(t, "after the roll")
	if replaced != 2 {
		t.Errorf("%d of the members before the roll are gone, want the joining pool's 2 (before %+v, after %+v)", replaced, before, after)
	}
	for _, st := range s.agent.Statuses() {
		if strings.Contains(st.Reason, "unhealthy cluster") {
			t.Errorf("instance %s was refused: %s", st.InstanceID, st.Reason)
		}
	}
}

// waitControlPlane waits up to 3 minutes until n control-plane instances are registered nodes
// and etcd has n members, and fails the test naming each instance's status otherwise.
func (s *stack) waitControlPlane(t *testing.T, n int) { s.waitNodes(t, n, 0) }

// waitNodes is waitControlPlane that also waits for workers registered worker nodes (the
// workers a stack has are not counted with 0).
func (s *stack) waitNodes(t *testing.T, controlPlane, workers int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		cp, w := 0, 0
		var report []string
		for _, st := range s.agent.Statuses() {
			switch {
			case st.Node == "" || st.Status != "Running":
			case st.Role == nodeagent.RoleWorker:
				w++
			default:
				cp++
			}
			report = append(report, st.InstanceID+" "+st.Status+" "+st.Node+" "+st.Reason)
		}
		members := s.etcdMembers(t)
		if cp == controlPlane && len(members) == controlPlane && (workers == 0 || w == workers) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 3 minutes %d control-plane and %d worker nodes registered and etcd has %d members (%+v), want %d, %d and %d:\n%s",
				cp, w, len(members), members, controlPlane, workers, controlPlane, strings.Join(report, "\n"))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// etcdMembers is etcd's member list as the node agent reports it.
func (s *stack) etcdMembers(t *testing.T) []nodeagent.EtcdMember {
	t.Helper()
	return s.agentReport(t).Members
}

// useRealEtcd has the agent make kubeadm's etcd member changes on the offline cluster's real
// etcd, which then judges them (nodeagent etcdreal.go). Call it after prepare: at the test's end
// the agent lets go of the real etcd before the stack is destroyed, so that the control plane's
// going does not take etcd's quorum, and the API server with it, while the cleanup still calls
// the API (minutes of timeouts otherwise).
func (s *stack) useRealEtcd(t *testing.T) {
	s.agent.EtcdWith(s.cluster)
	t.Cleanup(func() { s.agent.EtcdWith(nil) })
}

// checkRealEtcd fails unless the offline cluster's etcd lists exactly the members the agent
// reports, each a voting member whose process runs (for a stack given to the agent with EtcdWith).
func (s *stack) checkRealEtcd(t *testing.T, step string) {
	t.Helper()
	listed, err := s.cluster.EtcdMemberList(t.Context())
	if err != nil {
		t.Fatalf("%s: etcd's member list: %v", step, err)
	}
	var got, want []string
	for _, m := range listed {
		got = append(got, m.Name)
		if m.Learner || !m.Running {
			t.Errorf("%s: etcd member %+v, want a running voting member", step, m)
		}
	}
	for _, m := range s.etcdMembers(t) {
		want = append(want, m.Name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: the real etcd lists %v, the agent %v: want the same members", step, got, want)
	}
}

// agentReport is what the node agent reports of the cluster (GET /_emulator/nodes): etcd's
// member list and kubeadm-config's kubernetesVersion.
type agentReport struct {
	Members []nodeagent.EtcdMember `json:"etcd_members"`
	Version string                 `json:"kubernetes_version"`
}

func (s *stack) agentReport(t *testing.T) agentReport {
	t.Helper()
	got, err := s.fetchAgentReport()
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// fetchAgentReport is agentReport for a goroutine, which may not end the test.
func (s *stack) fetchAgentReport() (agentReport, error) {
	var got agentReport
	resp, err := http.Get(s.emu.URL + emulator.NodesPath)
	if err != nil {
		return got, err
	}
	defer func() { _ = resp.Body.Close() }()
	return got, json.NewDecoder(resp.Body).Decode(&got)
}
