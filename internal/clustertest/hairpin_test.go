package clustertest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/nodeagent"
)

// hairpinRoot is a control plane laid out as before the API server name (issue #31): the first
// control-plane pool behind the endpoint's load balancer, which makes its node a backend server,
// with the load balancer's address as controlPlaneEndpoint (api_endpoint set, so the pool takes
// no name), and a GPU worker pool that joins that address.
var hairpinRoot = endpointRootHead("hairpin", "10.30.0.0/16") + `

resource "gpucluster_node_pool" "control" {
  name          = "hairpin-cp"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  instance_type = "ecs.g7.2xlarge"
  size          = 1
  kubernetes = {
    role             = "control_plane"
    api_endpoint     = gpucluster_control_plane_endpoint.api.endpoint
    load_balancer_id = gpucluster_control_plane_endpoint.api.load_balancer_id
    join_token       = "abcdef.0123456789abcdef"
    certificate_key  = gpucluster_cluster_ca.ca.certificate_key
    ca_cert_pem      = gpucluster_cluster_ca.ca.cert_pem
    ca_key_pem       = gpucluster_cluster_ca.ca.private_key_pem
    ca_cert_hash     = gpucluster_cluster_ca.ca.ca_cert_hash
  }
}

` + t4Workers("hairpin-gpu", "", "") + `
output "stack" {
  value = gpucluster_control_plane_endpoint.api.endpoint
}
`

// t4Workers is a pool "workers" of one T4 GPU worker, name, that joins the endpoint's address;
// head goes first in the resource (depends_on), k8s in its kubernetes block.
func t4Workers(name, head, k8s string) string {
	return fmt.Sprintf(`
resource "gpucluster_node_pool" "workers" {%s
  name          = %q
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  gpu_model     = "T4"
  gpus_per_node = 1
  size          = 1
  kubernetes = {
    api_endpoint = gpucluster_control_plane_endpoint.api.endpoint
    join_token   = "abcdef.0123456789abcdef"
    ca_cert_hash = gpucluster_cluster_ca.ca.ca_cert_hash%s
  }
}
`, head, name, k8s)
}

// endpointRootHead is a root's start: the provider, a network (<name>-net, cidr), the cluster CA
// and a control-plane endpoint (<name>-api).
func endpointRootHead(name, cidr string) string {
	return `
terraform {
  required_providers {
    gpucluster = { source = "gpucluster/gpucluster" }
  }
}

provider "gpucluster" {}

resource "gpucluster_rdma_network" "net" {
  name       = "` + name + `-net"
  cidr_block = "` + cidr + `"
  zone_ids   = ["cn-wulanchabu-a"]
}

resource "gpucluster_cluster_ca" "ca" {}

resource "gpucluster_control_plane_endpoint" "api" {
  name       = "` + name + `-api"
  network_id = gpucluster_rdma_network.net.id
}
`
}

// TestAccClusterHairpin is issue #31's negative: the control plane of TestAccClusterHairpin's
// root applies, but its cluster does not form: the first control-plane node's kubeadm init
// reaches its own API server through the load balancer it is a backend server of, which a
// Layer-4 CLB does not answer, so the node agent refuses it naming hairpin, and the worker finds
// no API server; the consoles say init and join failed. The scenario tests, whose control planes
// go through the load balancer's API server name, form their clusters.
func TestAccClusterHairpin(t *testing.T) {
	s := startStack(t)
	endpoint := s.apply(t, hairpinRoot)
	first, _ := s.waitRefused(t, 1, 2*time.Minute)
	for _, want := range []string{"kubeadm init on " + first.InstanceID + " fails", "controlPlaneEndpoint " + endpoint, nodeagent.HairpinReason + ":"} {
		if !strings.Contains(first.Reason, want) {
			t.Errorf("the first control-plane node's reason lacks %q: %s", want, first.Reason)
		}
	}
	outcomes, raw := s.consoles(t)
	for id, got := range outcomes {
		want := bootstrap.PhaseJoin
		if id == first.InstanceID {
			want = bootstrap.PhaseInit
		}
		if got.Joined || got.FailedPhase != want {
			t.Errorf("the console of %s = %+v, want failed at %s:\n%s", id, got, want, raw[id])
		}
	}
}
