package clustertest

import (
	"fmt"
	"strings"
	"testing"
)

// upgradeRoot is a control plane of three (the first node and a pool of two that joins it after
// it, as modules/cluster-core orders them) and a GPU worker pool after the control plane, every
// node installing Kubernetes release.
func upgradeRoot(release string) string {
	versions := fmt.Sprintf("\n    versions           = { kubernetes = %q }", release)
	pools := strings.Replace(etcdPool("control", "upg-cp", "ecs.g7.xlarge", 1, true), "ca_cert_hash       = gpucluster_cluster_ca.ca.ca_cert_hash",
		"ca_cert_hash       = gpucluster_cluster_ca.ca.ca_cert_hash"+versions, 1)
	join := strings.Replace(etcdPool("control_join", "upg-cp-join", "ecs.g7.xlarge", 2, false), "ca_cert_hash       = gpucluster_cluster_ca.ca.ca_cert_hash",
		"ca_cert_hash       = gpucluster_cluster_ca.ca.ca_cert_hash"+versions, 1)
	join = strings.Replace(join, "  name          = \"upg-cp-join\"", "  depends_on    = [gpucluster_node_pool.control]\n  name          = \"upg-cp-join\"", 1)
	return endpointRootHead("upg", "10.32.0.0/16") + pools + join +
		t4Workers("upg-gpu", "\n  depends_on = [gpucluster_node_pool.control, gpucluster_node_pool.control_join]",
			"\n    api_server_name = gpucluster_control_plane_endpoint.api.api_server_name"+strings.Replace(versions, "           ", "", 1)) + `
output "stack" {
  value = gpucluster_control_plane_endpoint.api.endpoint
}
`
}

// TestAccClusterKubernetesMinorUpgrade (issue #34): the cluster of upgradeRoot at 1.32 moved to
// 1.33 by changing the pools' release. A plan that skips a minor (to 1.34) is refused naming the
// version skew policy, and nothing changes. The apply raises the cluster's version through
// Cloud Assistant (kubeadm upgrade apply) before the first control-plane node is replaced, then
// replaces the control plane one node at a time and the worker after it: every node runs the
// 1.33 kubelet, kubeadm-config holds v1.33.6, and etcd lists exactly the three live control-plane
// nodes. Versions are the node agent's model (nodeagent/upgrade.go): the offline API server is
// one real v1.37.2 whatever the nodes install.
func TestAccClusterKubernetesMinorUpgrade(t *testing.T) {
	s := startStack(t)
	run := s.prepare(t, upgradeRoot("1.32.9"))
	run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	s.waitNodes(t, 3, 1)
	if v := s.clusterVersion(t); v != "v1.32.9" {
		t.Fatalf("cluster version after forming: %q, want v1.32.9", v)
	}

	run.Write(upgradeRoot("1.34.2"))
	code, out := run.Run("plan", "-no-color", "-input=false", "-detailed-exitcode")
	if code != 1 || !strings.Contains(out, "skips 1.33") || !strings.Contains(out, "version-skew-policy") {
		t.Fatalf("plan 1.32 -> 1.34: exit %d, want the skip refused naming the skew policy:\n%s", code, out)
	}

	run.Write(upgradeRoot("1.33"))
	run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	s.waitNodes(t, 3, 1)
	if v := s.clusterVersion(t); v != "v1.33.6" {
		t.Errorf("cluster version after the upgrade: %q, want v1.33.6", v)
	}
	live := map[string]string{}
	for _, st := range s.agent.Statuses() {
		if st.Node == "" {
			continue
		}
		live[st.Node] = st.InstanceID
		if st.KubeletVersion != "1.33.6" {
			t.Errorf("node %s (%s) runs kubelet %q after the upgrade, want 1.33.6", st.Node, st.InstanceID, st.KubeletVersion)
		}
		if strings.Contains(st.Reason, "KubeletVersion") {
			t.Errorf("instance %s was refused: %s", st.InstanceID, st.Reason)
		}
	}
	members := s.etcdMembers(t)
	for _, m := range members {
		if live[m.Name] != m.InstanceID || !m.Connected {
			t.Errorf("etcd member %+v is not a live control-plane node (live: %v)", m, live)
		}
	}
	if len(members) != 3 || len(live) != 4 {
		t.Fatalf("after the upgrade etcd lists %+v and the nodes are %v: want 3 members, 4 nodes", members, live)
	}
	if f := s.agent.Failures(); len(f) > 0 {
		t.Errorf("the agent counted failures: %+v", f)
	}
}

// clusterVersion is kubeadm-config's kubernetesVersion as the node agent reports it.
func (s *stack) clusterVersion(t *testing.T) string {
	t.Helper()
	return s.agentReport(t).Version
}
