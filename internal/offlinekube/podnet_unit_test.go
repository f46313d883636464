package offlinekube

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
)

// TestPodNetworkRoutes: the CONNECT proxy takes a Service's ClusterIP and port to the process
// registered for its ready endpoint's pod IP and container port (the EndpointSlice's, not the
// Service's number), and a pod IP straight to its process; it refuses, with 502, an endpoint whose
// pod runs no process, a not-ready endpoint, a ClusterIP and port no Service has, and a node's
// kubelet port.
func TestPodNetworkRoutes(t *testing.T) {
	ready, notReady, portName, port := true, false, "https", int32(9443)
	client := fake.NewClientset(
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hook", Namespace: "sys"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.20",
			Ports: []corev1.ServicePort{{Name: portName, Port: 443, TargetPort: intstr.FromString("webhook-server")}}}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "hook-x", Namespace: "sys", Labels: map[string]string{discoveryv1.LabelServiceName: "hook"}},
			AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
			Endpoints: []discoveryv1.Endpoint{
				{Addresses: []string{"10.244.0.7"}, Conditions: discoveryv1.EndpointConditions{Ready: &notReady}},
				{Addresses: []string{"10.244.0.5"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}},
			}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "idle", Namespace: "sys"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.30",
			Ports: []corev1.ServicePort{{Name: portName, Port: 443}}}},
	)
	echo := echoServer(t)
	n, err := newPodNetwork(t.Logf, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.close()
	n.setClient(client)
	remove := n.serve("10.244.0.5", 9443, echo)
	n.serve("10.244.0.7", 9443, echo) // not ready: kube-proxy would not send to it

	for _, target := range []string{"10.96.0.20:443", "10.244.0.5:9443"} {
		if got := connectAndEcho(t, n.addr(), target); got != "200 hello "+target {
			t.Errorf("CONNECT %s: %q, want the registered process to answer", target, got)
		}
	}
	for _, target := range []string{"10.96.0.30:443", "10.96.0.20:80", "192.168.0.10:10250"} {
		if got := connectAndEcho(t, n.addr(), target); !strings.HasPrefix(got, "502") {
			t.Errorf("CONNECT %s: %q, want 502", target, got)
		}
	}
	remove()
	if got := connectAndEcho(t, n.addr(), "10.96.0.20:443"); !strings.HasPrefix(got, "502") {
		t.Errorf("CONNECT to the Service after its pod's process went: %q, want 502 (only the not-ready endpoint is left)", got)
	}
}

// TestPodNetworkEndsARelayWhosePodWentMidConnect: a CONNECT routed just before its pod's
// registration was removed must not start a relay that outlives the removal (the race that let
// a webhook call reach a removed pod's program while the controller manager's own calls were in
// flight).
func TestPodNetworkEndsARelayWhosePodWentMidConnect(t *testing.T) {
	echo := echoServer(t)
	n, err := newPodNetwork(t.Logf, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.close()
	remove := n.serve("10.244.0.5", 9443, echo)
	target, err := n.route(t.Context(), "10.244.0.5:9443")
	if err != nil {
		t.Fatal(err)
	}
	upstream, err := net.Dial("tcp", target)
	if err != nil {
		t.Fatal(err)
	}
	remove() // the pod goes after its route was taken and its process dialled

	apiServerSide, proxySide := net.Pipe()
	go n.relay(proxySide, proxySide, upstream, target)
	// A bound on the wait, not a speed check: a relay that started would echo, not close.
	_ = apiServerSide.SetDeadline(time.Now().Add(30 * time.Second))
	_, _ = fmt.Fprintf(apiServerSide, "still there?\n")
	reply, err := io.ReadAll(apiServerSide)
	if len(reply) > 0 || (err != nil && !errors.Is(err, io.ErrClosedPipe)) {
		t.Fatalf("a relay to a removed pod's process carried traffic: read %q, %v; want the connection closed", reply, err)
	}
}

// echoServer answers each line with "hello <line>".
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				line, _ := bufio.NewReader(c).ReadString('\n')
				_, _ = fmt.Fprintf(c, "hello %s", line)
			}()
		}
	}()
	return l.Addr().String()
}

// connectAndEcho sends CONNECT target as kube-apiserver's HTTPConnect dialer does, then a line,
// and returns the status code and what came back ("<code> <reply>").
func connectAndEcho(t *testing.T, proxy, target string) string {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	// What kube-apiserver writes (k8s.io/apiserver v0.37.2 pkg/server/egressselector
	// egress_selector.go, tunnelHTTPConnect): the target in the request line, Host 127.0.0.1.
	if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", target); err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if _, err := fmt.Fprintf(c, "%s\n", target); err != nil {
		t.Fatalf("writing through the tunnel to %s: %v", target, err)
	}
	reply, _ := io.ReadAll(br)
	return "200 " + strings.TrimSpace(string(reply))
}
