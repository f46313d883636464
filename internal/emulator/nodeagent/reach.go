package nodeagent

// How a node reaches the cluster's API at each step of its bootstrap, and the way a control-plane
// node behind a Classic Load Balancer does not: hairpin.
//
// A Layer-4 CLB gives no answer to a backend server that connects to it as a client and is
// forwarded to itself: "a backend ECS instance cannot act both as a real server and a client that
// sends requests to a SLB instance. The returned packets can be transmitted only inside the ECS
// instance and cannot pass through SLB" (CLB FAQ about backend servers,
// https://www.alibabacloud.com/help/faq-detail/55198.htm; kubeadm's tracker names Alibaba's CLB
// for this: https://github.com/kubernetes/kubeadm/issues/2996). The CLB forwards only to backends
// that pass its health check (https://www.alibabacloud.com/help/doc-detail/85958.html), so a
// backend that does not serve the API yet (a control-plane node while it joins) reaches the ones
// that do. A backend that serves the API (the first node once kubeadm init starts its API server,
// a control-plane node once joined) gets no answer: the CLB hands its connections back to it, all
// of them while it is the only API server, as the first node is during kubeadm init, some of them
// later, which is enough for kubelet and the add-ons to fail.
//
// Which steps reach the API, and where: kubeadm init uploads the cluster's configuration through
// admin.conf, whose server is controlPlaneEndpoint; a join discovers the cluster at its
// apiServerEndpoint and then takes the server of the cluster-info kubeconfig, controlPlaneEndpoint,
// for the kubelet's TLS bootstrap and kubelet.conf (kubeadm's discovery.For:
// https://github.com/kubernetes/kubernetes/blob/master/cmd/kubeadm/app/discovery/discovery.go);
// on a control-plane node admin.conf (the add-ons unit, the hourly certificate upload) points
// there too.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// apiStep is one connection of a node's bootstrap to the API: to endpoint (host:port), with the
// node's hosts entry in mode, and whether the node serves the API itself by then. what starts
// the reason when it fails ("" for the join's discovery, whose reasons stand alone).
type apiStep struct {
	what, endpoint, mode string
	serving              bool
}

// Steps of a bootstrap that reach the API, for APIHosts.mode.
const (
	stepInit = iota
	stepJoin
	stepRejoin
	stepAfter
)

// mode is the hosts entry's mode at a step ("" without an entry: the node uses addresses).
func (h *APIHosts) mode(step int) string {
	if h == nil {
		return ""
	}
	return [...]string{h.AtInit, h.AtJoin, h.AtRejoin, h.After}[step]
}

// reachAPI returns why a connection of in to the API at step s gets no answer from a serving API
// server, "" when one answers: the host resolves as the node resolves it, the connection lands
// on a load balancer's backends or an instance, not back on in through a load balancer it backs
// while it serves (hairpin), on a server that serves, and the security groups let it through.
func (a *Agent) reachAPI(net *network, in *emulator.InstanceView, p NodePlan, s apiStep) string {
	prefix := ""
	if s.what != "" {
		prefix = s.what + ": "
	}
	host, _, _ := strings.Cut(s.endpoint, ":")
	addr, why := resolveHost(in, p.APIHosts, host, s.mode)
	if why != "" {
		return prefix + why
	}
	shown := s.endpoint // the name and what it resolved to, in the reasons
	if addr != host {
		shown += " at " + addr
	}
	targets, lb, why := net.resolveEndpoint(in, shown, addr)
	if why != "" {
		return prefix + why
	}
	if lb != nil && s.serving && slices.Contains(lb.BackendIDs, in.ID) {
		return prefix + hairpinReason(in, lb, shown)
	}
	var serving []target
	for _, t := range targets {
		if (t.in.ID == in.ID && s.serving) || a.member(t.in.ID) {
			serving = append(serving, t)
		}
	}
	if len(serving) == 0 {
		return prefix + fmt.Sprintf("no API server answers at %s yet: %s has run kubeadm init or joined the control plane (the node waits up to 45 minutes)",
			shown, noneOf(targets))
	}
	if !slices.ContainsFunc(serving, func(t target) bool { return t.in.ID == in.ID || net.tcpAllowed(in, t.in, t.port) }) {
		return prefix + fmt.Sprintf("the security groups do not let TCP from %s (%s, groups %s) reach the API server behind %s: %s",
			in.PrivateIP, in.ID, strings.Join(in.SecurityGroupIDs, ","), shown, describeTargets(serving))
	}
	return ""
}

// member reports whether an instance serves the cluster's API (it ran kubeadm init or joined the
// control plane).
func (a *Agent) member(id string) bool {
	if a.cluster == nil {
		return false
	}
	_, ok := a.cluster.members[id]
	return ok
}

// HairpinReason starts the reason of a node whose connection to the API comes back to it through
// the load balancer it is a backend server of.
const HairpinReason = "hairpin"

func hairpinReason(in *emulator.InstanceView, lb *emulator.LoadBalancerView, endpoint string) string {
	return fmt.Sprintf("%s: %s is load balancer %s (%s), and %s is one of its backend servers and serves the API behind it: "+
		"a Layer-4 CLB gives no answer to a backend server's connection that it forwards back to that server "+
		"(CLB FAQ, https://www.alibabacloud.com/help/faq-detail/55198.htm; kubernetes/kubeadm#2996). Reach the API through a name "+
		"that control-plane nodes map to themselves and workers to the load balancer (the node pool does so behind kubernetes.load_balancer_id)",
		HairpinReason, endpoint, lb.ID, lb.Address, in.ID)
}

// afterJoinStep is where a joined node's kubelet (and on a control-plane node, admin.conf) reach
// the API: the cluster's controlPlaneEndpoint, with the hosts entry the bootstrap leaves.
func afterJoinStep(in *emulator.InstanceView, p NodePlan, endpoint string, controlPlane bool) apiStep {
	s := apiStep{endpoint: endpoint, mode: p.APIHosts.mode(stepAfter), serving: controlPlane}
	if controlPlane {
		s.what = fmt.Sprintf("once in the control plane, %s reaches the API at controlPlaneEndpoint %s through kubelet.conf and admin.conf "+
			"(kubelet, the add-ons, the certificate upload)", in.ID, endpoint)
	} else {
		s.what = fmt.Sprintf("once joined, the kubelet of %s reaches the API at %s, the cluster-info server kubeadm join writes into its kubeconfig "+
			"(controlPlaneEndpoint)", in.ID, endpoint)
	}
	return s
}
