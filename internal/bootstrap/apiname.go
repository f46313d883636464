package bootstrap

// The name a cluster's API is reached by, and how each node resolves it.
//
// A highly available control plane sits behind an internal Classic Load Balancer whose backend
// servers are the control-plane nodes. A Layer-4 CLB gives no answer to a backend server that
// connects to it as a client: "a backend ECS instance cannot act both as a real server and a client
// that sends requests to a SLB instance. The returned packets can be transmitted only inside the
// ECS instance" (CLB FAQ about backend servers, https://www.alibabacloud.com/help/faq-detail/55198.htm;
// kubeadm's own tracker names Alibaba's CLB: https://github.com/kubernetes/kubeadm/issues/2996).
// Every kubeconfig kubeadm writes on a control-plane node (admin.conf, which the add-ons unit and
// the certificate upload use; kubelet.conf) points at controlPlaneEndpoint, so with the CLB's
// address there kubeadm init on the first node times out and a joined control-plane node loses
// its own API server whenever the CLB hands its connection back to it.
//
// So controlPlaneEndpoint is a name (Kubernetes.APIServerName), and each node maps it in
// /etc/hosts: a worker to the CLB; a control-plane node to the CLB until it serves the API
// itself, then to its own private address. The Cluster API provider for Azure does the same for
// Azure's internal load balancer, which has the same limit: it maps the name before kubeadm init
// on the first node and after kubeadm join on the others (https://github.com/kubernetes/kubeadm/issues/2271).
// Until it serves, the CLB does not forward to it at all (a backend failing the listener's health
// check gets no requests: https://www.alibabacloud.com/help/doc-detail/85958.html), so its
// discovery, TLS bootstrap and its check for a running cluster reach the control-plane nodes that
// do serve.
//
// A hosts entry, not an Alibaba Cloud DNS PrivateZone record: a zone bound to the VPC could only
// give every node the same answer, while a control-plane node must resolve the name to itself;
// and it is one product less to create, pay for and authorise.
//
// Its own private address, not 127.0.0.1: the API server certificate kubeadm makes names the
// node's advertise address (its private address) and not the loopback one, so a client that ends
// up with the resolved address instead of the name (a tool that dials it, an address printed in a
// log and used again) still verifies the server; and an API server bound to that address only (a
// common hardening of kubeadm's 0.0.0.0) still answers there.
//
// The entry is written by a small script (APIHostsPath) that the bootstrap calls around kubeadm
// and a unit runs at every boot before kubelet: cloud-init's update_etc_hosts module rewrites
// /etc/hosts from its template at boot when manage_etc_hosts is set
// (https://cloudinit.readthedocs.io/en/latest/reference/modules.html#update-etc-hosts).

import (
	"fmt"
	"net/netip"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// APIServerDomain is the domain of the names APIServerNameFor makes: .internal, which ICANN
// reserved in July 2024 for private use and will never delegate
// (https://www.icann.org/en/public-comment/proceeding/proposed-top-level-domain-string-for-private-use-24-01-2024),
// so no public name can ever shadow it.
const APIServerDomain = "gpucluster.internal"

// APIServerNameFor is the API server name of the control plane behind a load balancer:
// api.<load balancer id>.gpucluster.internal, one per cluster, known once the load balancer
// exists.
func APIServerNameFor(loadBalancerID string) string {
	return "api." + strings.ToLower(loadBalancerID) + "." + APIServerDomain
}

// Paths and unit of the hosts entry.
const (
	// APIHostsPath maps the API server name in /etc/hosts: "lb" to the load balancer, "self" to
	// the node's own private address, "boot" (the unit) to self once the node serves the API.
	APIHostsPath = "/usr/local/sbin/gpucluster-api-hosts"
	// APIHostsModeLB, APIHostsModeSelf and APIHostsModeBoot are its arguments.
	APIHostsModeLB   = "lb"
	APIHostsModeSelf = "self"
	APIHostsModeBoot = "boot"
	apiHostsUnit     = "gpucluster-api-hosts.service"
	// apiServerManifest is the static pod kubeadm writes on a node that serves the API: the boot
	// mode's sign that the node is a control-plane member.
	apiServerManifest = "/etc/kubernetes/manifests/kube-apiserver.yaml"
)

// apiHostsScript is APIHostsPath for a name and the load balancer's address. The node's own
// address is the one it reaches the load balancer from (its primary private address, kubeadm's
// default advertise address). The file is rewritten in place, not replaced, so a bind mount of it
// (a container's) sees the change.
// GPUCLUSTER_HOSTS and GPUCLUSTER_APISERVER_MANIFEST move the files elsewhere, for tests.
const apiHostsScript = `#!/bin/sh
# Maps the Kubernetes API server name in /etc/hosts. Rendered by terraform-provider-gpucluster.
# lb: the control plane's load balancer; self: this node's own private address; boot (every
# boot, before kubelet): self once this node serves the API, lb until then.
set -eu
name=%s
lb=%s
hosts=${GPUCLUSTER_HOSTS:-/etc/hosts}
mode=${1:-boot}
if [ "$mode" = boot ]; then
  mode=lb
  if [ -e "${GPUCLUSTER_APISERVER_MANIFEST:-` + apiServerManifest + `}" ]; then mode=self; fi
fi
addr=$lb
if [ "$mode" = self ]; then addr=$(ip -4 route get "$lb" | sed -n 's/.* src \([0-9.]*\).*/\1/p'); fi
if [ -z "$addr" ]; then echo "no address of this node toward $lb for $name" >&2; exit 1; fi
awk -v n="$name" '!(NF == 2 && $2 == n)' "$hosts" >"$hosts.gpucluster"
echo "$addr $name" >>"$hosts.gpucluster"
cat "$hosts.gpucluster" >"$hosts"
rm -f "$hosts.gpucluster"
echo "$name -> $addr ($mode)"
`

// apiHostsUnitText runs the script at every boot, after cloud-init may have rewritten /etc/hosts
// and before kubelet, kube-proxy and the add-ons use the name.
const apiHostsUnitText = `[Unit]
Description=Map the Kubernetes API server name in /etc/hosts (gpucluster)
Wants=network-online.target
After=network-online.target cloud-init.service
Before=kubelet.service

[Service]
Type=oneshot
ExecStart=` + APIHostsPath + ` ` + APIHostsModeBoot + `

[Install]
WantedBy=multi-user.target
`

// apiHost is the load balancer's address: APIEndpoint's host.
func (o Options) apiHost() string {
	host, _, _ := strings.Cut(o.Kubernetes.APIEndpoint, ":")
	return host
}

// controlPlaneEndpoint is where kubeadm reaches the API: the name with APIEndpoint's port, or
// APIEndpoint itself without a name.
func (o Options) controlPlaneEndpoint() string {
	if o.Kubernetes.APIServerName == "" {
		return o.Kubernetes.APIEndpoint
	}
	_, port, _ := strings.Cut(o.Kubernetes.APIEndpoint, ":")
	return o.Kubernetes.APIServerName + ":" + port
}

// certSANs are the names the API server certificate carries besides kubeadm's own (which include
// controlPlaneEndpoint's host): the name and the load balancer's address, so a client given
// either (a kubeconfig off the nodes, where the name does not resolve) verifies the server.
func (o Options) certSANs() []string {
	if o.Kubernetes.APIServerName == "" {
		return nil
	}
	return []string{o.Kubernetes.APIServerName, o.apiHost()}
}

// apiHostsCall is the script line that maps the name in mode; none without a name.
func (o Options) apiHostsCall(mode string) []string {
	if o.Kubernetes.APIServerName == "" {
		return nil
	}
	return []string{APIHostsPath + " " + mode}
}

// apiHostsSetup enables the boot unit and maps the name to the load balancer: the first lines
// of a join or init phase.
func (o Options) apiHostsSetup() []string {
	if o.Kubernetes.APIServerName == "" {
		return nil
	}
	return append([]string{"systemctl daemon-reload", "systemctl enable " + apiHostsUnit}, o.apiHostsCall(APIHostsModeLB)...)
}

// apiHostsFiles are the script and its unit, on nodes with a name.
func apiHostsFiles(o Options) []writeFile {
	if o.Kubernetes.APIServerName == "" {
		return nil
	}
	return []writeFile{
		{Path: APIHostsPath, Permissions: "0755", Owner: "root:root", Content: fmt.Sprintf(apiHostsScript, o.Kubernetes.APIServerName, o.apiHost())},
		{Path: systemdDir + apiHostsUnit, Permissions: "0644", Owner: "root:root", Content: apiHostsUnitText},
	}
}

// validateAPIServerName checks the name and that APIEndpoint gives the address it maps to.
func validateAPIServerName(o Options) error {
	k := o.Kubernetes
	if k.APIServerName == "" {
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(k.APIServerName); len(errs) > 0 || !strings.Contains(k.APIServerName, ".") {
		return planerr.Input("kubernetes.api_server_name", k.APIServerName, "is not a DNS name of two labels or more (lower-case letters, digits, '-' and '.')",
			"use gpucluster_control_plane_endpoint.<name>.api_server_name, such as "+APIServerNameFor("lb-2ze7o5h8x9k1"))
	}
	if _, err := netip.ParseAddr(k.APIServerName); err == nil {
		return planerr.Input("kubernetes.api_server_name", k.APIServerName, "is an address, not a name", "use gpucluster_control_plane_endpoint.<name>.api_server_name")
	}
	if addr, err := netip.ParseAddr(o.apiHost()); k.APIEndpoint == "" || err != nil || !addr.Is4() {
		return planerr.Input("kubernetes.api_endpoint", k.APIEndpoint, "is not IPv4-address:port, which api_server_name needs: the node maps the name to that address in /etc/hosts",
			"pass the load balancer's endpoint (gpucluster_control_plane_endpoint.<name>.endpoint) as api_endpoint")
	}
	return nil
}
