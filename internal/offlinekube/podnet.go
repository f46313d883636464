package offlinekube

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The pod network, as the API server sees it. Nothing in the offline cluster routes a packet: a
// Service's ClusterIP and a Pod's IP (from podCIDR, handed out by kwok) are only numbers. Yet the
// API server calls into the cluster: an admission webhook named by a Service
// (clientConfig.service) is resolved to https://<ClusterIP>:<port> (k8s.io/apiserver v0.37.2
// pkg/util/proxy/proxy.go ResolveCluster, through the ClusterIP resolver that
// cmd/kube-apiserver/app/server.go buildServiceResolver picks without
// --enable-aggregator-routing) and dialled through the egress selector's "cluster" network
// context (pkg/util/webhook/authentication.go, ClientConfigForServiceFunc). The egress selector
// configuration (apiserver.k8s.io/v1beta1 EgressSelectorConfiguration,
// https://kubernetes.io/docs/tasks/extend-kubernetes/setup-konnectivity/ and
// https://kubernetes.io/docs/reference/config-api/apiserver-config.v1beta1/#apiserver-k8s-io-v1beta1-EgressSelectorConfiguration)
// sends that context's connections to an HTTP CONNECT proxy: podNetwork is that proxy, and it
// plays kube-proxy and the pod network together. It answers `CONNECT <ClusterIP>:<port>` by
// finding the Service with that ClusterIP and port, the port's ready endpoints in the Service's
// EndpointSlices (the numbers kube-proxy programs), and, among their pod IPs, one whose process a
// runner registered (ServePodPort) for that container port; it then relays bytes to the loopback
// address the process listens on. `CONNECT <PodIP>:<port>` goes straight to a registered pod.
// Anything else is refused with 502 at once, as an unreachable address fails the dial: the
// kubelet connections (logs, exec, and the proxy subresources take the same "cluster" context:
// k8s.io/kubernetes v1.37.2 pkg/kubelet/client/kubelet_client.go MakeTransport, and the
// ProxyTransport of pkg/controlplane/apiserver) to kwok's nodes, which have no kubelet; the
// aggregator's calls to an APIService whose pod runs nothing (k8s.io/kube-aggregator
// pkg/apiserver/apiserver.go, proxyTransportDial, also "cluster"); a pod whose program nobody runs.

// egressSelectorConfig is the API server's --egress-selector-config-file: the "cluster" context
// over HTTP CONNECT on TCP to the pod network, with TLS both ways (the control plane and etcd
// contexts, absent, stay direct). Not plain http://: k8s.io/apiserver v0.37.2 validates an
// http:// URL only without a tlsConfig (pkg/server/egressselector/config.go
// validateTCPConnection), then builds the dialer with getTLSConfig(tlsConfig) whatever the scheme
// (egress_selector.go connectionToDialerCreator), which dereferences the missing config: the API
// server panics at start. So https:// with the API server's client certificate and the cluster CA,
// and the proxy verifies that certificate. The API server writes `CONNECT <addr>` with
// `Host: 127.0.0.1` and wants 200 (egress_selector.go tunnelHTTPConnect); the request line is
// what handleConnect routes by.
const egressSelectorConfig = `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      tcp:
        url: https://%s
        tlsConfig:
          caBundle: %s
          clientCert: %s
          clientKey: %s
`

func writeEgressSelectorConfig(path, proxyAddr string, certs *pki) error {
	return os.WriteFile(path, fmt.Appendf(nil, egressSelectorConfig, proxyAddr, certs.caCertFile, certs.egressClientCertFile, certs.egressClientKeyFile), 0o600)
}

// podNetworkTLS is the pod network's side of that TLS: its own certificate for 127.0.0.1, and a
// client certificate of the cluster's CA required.
func podNetworkTLS(certs *pki) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certs.podNetworkCertFile, certs.podNetworkKeyFile)
	if err != nil {
		return nil, fmt.Errorf("offlinekube: pod network certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(certs.caCert)
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// podPort is a pod's IP and one of its container ports.
type podPort struct {
	ip   string
	port int
}

// podNetwork is the CONNECT proxy. Its zero value is not usable; see newPodNetwork.
type podNetwork struct {
	listener net.Listener
	server   *http.Server
	// hostListener and hostServer are the pod network as a node's host network reaches it
	// (handleHostRequest): plain HTTP on loopback, for the host-network pods' programs.
	hostListener net.Listener
	hostServer   *http.Server
	logf         func(format string, args ...any)

	mu     sync.Mutex
	client kubernetes.Interface // set once the cluster's client exists
	pods   map[podPort]string   // registered pod ports -> where the process listens
	conns  map[net.Conn]string  // relayed connections -> the process address they reach
	// refusals: when each refusal was last logged. The aggregator asks an APIService whose pod
	// runs nothing every few seconds for as long as the cluster runs; once a minute says it.
	refusals map[string]time.Time
}

// refusalLogEvery is how often the same refusal is logged again.
const refusalLogEvery = time.Minute

// logRefusal logs that what was refused for err, unless it did within refusalLogEvery.
func (n *podNetwork) logRefusal(what string, err error) {
	key := what + ": " + err.Error()
	n.mu.Lock()
	last, seen := n.refusals[key]
	if seen && time.Since(last) < refusalLogEvery {
		n.mu.Unlock()
		return
	}
	n.refusals[key] = time.Now()
	n.mu.Unlock()
	n.logf("offlinekube: pod network: %s refused: %v (said again at most once a minute)", what, err)
}

// newPodNetwork listens on a free loopback port, over TLS with tlsConfig when it is not nil;
// serve starts answering.
func newPodNetwork(logf func(string, ...any), tlsConfig *tls.Config) (*podNetwork, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("offlinekube: pod network listener: %w", err)
	}
	if tlsConfig != nil {
		l = tls.NewListener(l, tlsConfig) // HTTP/1.1 only: a CONNECT is hijacked, which HTTP/2 cannot
	}
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("offlinekube: pod network's host listener: %w", err)
	}
	n := &podNetwork{listener: l, hostListener: hl, logf: logf, pods: map[podPort]string{}, conns: map[net.Conn]string{},
		refusals: map[string]time.Time{}}
	n.server = &http.Server{Handler: http.HandlerFunc(n.handleConnect), ReadHeaderTimeout: 10 * time.Second}
	n.hostServer = &http.Server{Handler: http.HandlerFunc(n.handleHostRequest), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = n.server.Serve(l) }()
	go func() { _ = n.hostServer.Serve(hl) }()
	return n, nil
}

func (n *podNetwork) addr() string { return n.listener.Addr().String() }

// hostProxyURL is the HTTP proxy a host-network program reaches pod IPs and ClusterIPs through.
func (n *podNetwork) hostProxyURL() string { return "http://" + n.hostListener.Addr().String() }

// handleHostRequest is the pod network seen from a node's host network: on a real node the CNI
// routes a host process's packets to a pod IP (and kube-proxy a ClusterIP's); here nothing
// routes, so a host-network pod's program is given this as its HTTP proxy and its requests are
// routed as the API server's CONNECTs are (route), a plain http:// request forwarded whole.
func (n *podNetwork) handleHostRequest(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		n.handleConnect(w, r)
		return
	}
	if r.URL.Host == "" {
		http.Error(w, "a proxy request names its target: GET http://<pod IP>:<port>/...", http.StatusBadRequest)
		return
	}
	target, err := n.route(r.Context(), r.URL.Host)
	if err != nil {
		n.logRefusal(fmt.Sprintf("%s %s from the host", r.Method, r.URL.Host), err)
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.Out.URL.Scheme, pr.Out.URL.Host = "http", target
		pr.Out.Host = r.URL.Host
	}}
	proxy.ServeHTTP(w, r)
}

func (n *podNetwork) setClient(c kubernetes.Interface) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.client = c
}

// close stops accepting and ends every relayed connection. A nil network (a cluster stopped
// before it had one) has nothing to close.
func (n *podNetwork) close() {
	if n == nil {
		return
	}
	_ = n.server.Close()
	_ = n.hostServer.Close()
	n.mu.Lock()
	defer n.mu.Unlock()
	for c := range n.conns {
		_ = c.Close()
	}
}

// serve registers addr as where podIP:port is answered, until the returned function is called.
func (n *podNetwork) serve(podIP string, port int, addr string) (remove func()) {
	key := podPort{podIP, port}
	n.mu.Lock()
	n.pods[key] = addr
	n.mu.Unlock()
	// A pod that stops takes its connections with it (its network namespace goes): the relays to
	// its process are closed, so a client holding a kept-alive connection (the API server's
	// webhook client does) dials again and finds nothing there.
	return func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.pods[key] == addr {
			delete(n.pods, key)
		}
		for c, to := range n.conns {
			if to == addr {
				_ = c.Close()
			}
		}
	}
}

// handleConnect answers one CONNECT: 200 and a relay to the pod's process, or 502 with why.
func (n *podNetwork) handleConnect(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "only CONNECT", http.StatusMethodNotAllowed)
		return
	}
	target, err := n.route(r.Context(), r.Host)
	if err != nil {
		n.logRefusal("CONNECT "+r.Host, err)
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	upstream, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		http.Error(w, fmt.Sprintf("%s (at %s): %v", r.Host, target, err), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = upstream.Close()
		http.Error(w, "cannot hijack", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		_ = upstream.Close()
		return
	}
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		_ = upstream.Close()
		_ = client.Close()
		return
	}
	n.relay(client, buf.Reader, upstream, target) // the reader holds what came after the CONNECT, then the rest
}

// relay copies both ways until either side ends, then closes both.
func (n *podNetwork) relay(client net.Conn, fromClient io.Reader, upstream net.Conn, target string) {
	n.mu.Lock()
	if !n.answers(target) {
		// The pod went between route and here (another client's call can be mid-CONNECT when a
		// pod's registration is removed: the controller manager publishing kube-root-ca.crt
		// meets the same webhook), so this connection must end as the others did.
		n.mu.Unlock()
		_ = client.Close()
		_ = upstream.Close()
		return
	}
	n.conns[client], n.conns[upstream] = target, target
	n.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(upstream, fromClient); done <- struct{}{} }()
	go func() { _, _ = io.Copy(client, upstream); done <- struct{}{} }()
	<-done
	_ = client.Close()
	_ = upstream.Close()
	<-done
	n.mu.Lock()
	delete(n.conns, client)
	delete(n.conns, upstream)
	n.mu.Unlock()
}

// answers says whether some pod port is still served at addr; the caller holds n.mu.
func (n *podNetwork) answers(addr string) bool {
	for _, a := range n.pods {
		if a == addr {
			return true
		}
	}
	return false
}

// route is where a connection to hostport goes: a registered pod port itself, or the one behind
// the Service with that ClusterIP and port.
func (n *podNetwork) route(ctx context.Context, hostport string) (string, error) {
	host, portText, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return "", fmt.Errorf("port %q: %w", portText, err)
	}
	if addr, ok := n.registered(podPort{host, port}); ok {
		return addr, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pp, err := n.resolveService(ctx, host, port)
	if err != nil {
		return "", err
	}
	if addr, ok := n.registered(pp); ok {
		return addr, nil
	}
	return "", fmt.Errorf("%s: its endpoint %s:%d runs no process here (a pod without a program behind it, like one whose network is down)", hostport, pp.ip, pp.port)
}

func (n *podNetwork) registered(pp podPort) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	addr, ok := n.pods[pp]
	return addr, ok
}

// errNoRoute is the refusal for an address that is neither a registered pod nor a Service with
// a ready endpoint: a node's kubelet port, an unknown IP.
var errNoRoute = errors.New("no Service with this ClusterIP and port, and no pod program registered at it")

// resolveService finds the Service whose ClusterIP is ip, its port numbered port, and the first
// ready endpoint of that port among its EndpointSlices, preferring one whose pod runs a program
// here, as kube-proxy would send the connection to a ready endpoint.
func (n *podNetwork) resolveService(ctx context.Context, ip string, port int) (podPort, error) {
	n.mu.Lock()
	client := n.client
	n.mu.Unlock()
	if client == nil {
		return podPort{}, errNoRoute
	}
	services, err := client.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return podPort{}, err
	}
	for _, svc := range services.Items {
		if svc.Spec.ClusterIP != ip {
			continue
		}
		for _, sp := range svc.Spec.Ports {
			if int(sp.Port) == port && (sp.Protocol == "" || sp.Protocol == corev1.ProtocolTCP) {
				return n.readyEndpoint(ctx, client, svc.Namespace, svc.Name, sp.Name)
			}
		}
	}
	return podPort{}, errNoRoute
}

// readyEndpoint: the EndpointSlices of the Service (label kubernetes.io/service-name) carry, per
// service port name, the container port its targetPort resolved to, and the pod IPs that are
// ready (https://kubernetes.io/docs/concepts/services-networking/endpoint-slices/).
func (n *podNetwork) readyEndpoint(ctx context.Context, client kubernetes.Interface, namespace, service, portName string) (podPort, error) {
	slices, err := client.DiscoveryV1().EndpointSlices(namespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + service})
	if err != nil {
		return podPort{}, err
	}
	var first *podPort
	for _, s := range slices.Items {
		for _, p := range s.Ports {
			if p.Port == nil || (p.Name != nil && *p.Name != portName) || (p.Name == nil && portName != "") {
				continue
			}
			for _, e := range s.Endpoints {
				if e.Conditions.Ready != nil && !*e.Conditions.Ready {
					continue
				}
				for _, a := range e.Addresses {
					pp := podPort{a, int(*p.Port)}
					if _, ok := n.registered(pp); ok {
						return pp, nil
					}
					if first == nil {
						first = &pp
					}
				}
			}
		}
	}
	if first == nil {
		return podPort{}, fmt.Errorf("Service %s/%s has no ready endpoint for port %q", namespace, service, portName)
	}
	return *first, nil
}
