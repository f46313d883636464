package cloud

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/slb"
)

// Paths of EnsureTCPListener the emulator cannot take (see TestLoadBalancerLifecycle for the
// lifecycle against it).

// A health-check change reaches the service in the vendor's spelling of every parameter: the
// Set call names the interval HealthCheckInterval, where the Create call names it
// healthCheckInterval.
func TestEnsureTCPListenerSendsEveryChange(t *testing.T) {
	var (
		mu  sync.Mutex
		set url.Values
	)
	api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
		switch action {
		case "DescribeLoadBalancerTCPListenerAttribute":
			resp := &slb.DescribeLoadBalancerTCPListenerAttributeResponse{RequestId: "req-l", ListenerPort: 6443,
				BackendServerPort: 6443, Status: ListenerStatusRunning, Bandwidth: -1, HealthyThreshold: 3,
				UnhealthyThreshold: 3, HealthCheckConnectTimeout: 5, HealthCheckInterval: 2}
			writeJSON(w, resp)
		case "SetLoadBalancerTCPListenerAttribute":
			mu.Lock()
			set = r.URL.Query()
			mu.Unlock()
			writeJSON(w, &slb.SetLoadBalancerTCPListenerAttributeResponse{RequestId: "req-set"})
		default:
			writeRPCError(w, r, http.StatusBadRequest, "UnexpectedAction", action, "req-x")
		}
	})
	c := api.client(t, 0)
	_, err := c.EnsureTCPListener(context.Background(), "lb-1", TCPListenerInput{Port: 6443, BackendPort: 6443,
		HealthCheck: HealthCheck{IntervalSeconds: 5, UnhealthyThreshold: 4}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if set == nil {
		t.Fatal("EnsureTCPListener sent no SetLoadBalancerTCPListenerAttribute for a changed health check")
	}
	for k, v := range map[string]string{"HealthCheckInterval": "5", "UnhealthyThreshold": "4", "ListenerPort": "6443", "LoadBalancerId": "lb-1"} {
		if got := set.Get(k); got != v {
			t.Errorf("SetLoadBalancerTCPListenerAttribute %s = %q, want %q", k, got, v)
		}
	}
	if set.Has("HealthyThreshold") {
		t.Errorf("SetLoadBalancerTCPListenerAttribute sent HealthyThreshold=%q, which the input left at the default", set.Get("HealthyThreshold"))
	}
	if n := api.hitsOf("StartLoadBalancerListener"); n != 0 {
		t.Errorf("a running listener was started again (%d calls)", n)
	}
}

// A create whose answer was lost and that the call layer sent again answers
// ListenerAlreadyExists: the listener is there, so EnsureTCPListener goes on and starts it.
func TestEnsureTCPListenerAfterALostCreateAnswer(t *testing.T) {
	var (
		mu      sync.Mutex
		started bool
	)
	api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
		mu.Lock()
		defer mu.Unlock()
		switch action {
		case "DescribeLoadBalancerTCPListenerAttribute":
			if hit == 1 {
				writeRPCError(w, r, http.StatusNotFound, "ListenerNotFound", "You have not created a listener for the specified port.", "req-nf")
				return
			}
			status := ListenerStatusStopped
			if started {
				status = ListenerStatusRunning
			}
			writeJSON(w, &slb.DescribeLoadBalancerTCPListenerAttributeResponse{RequestId: "req-l", ListenerPort: 6443,
				BackendServerPort: 6443, Status: status, Bandwidth: -1})
		case "CreateLoadBalancerTCPListener":
			writeRPCError(w, r, http.StatusBadRequest, "ListenerAlreadyExists", "The listener already exists.", "req-dup")
		case "StartLoadBalancerListener":
			started = true
			writeJSON(w, &slb.StartLoadBalancerListenerResponse{RequestId: "req-start"})
		default:
			writeRPCError(w, r, http.StatusBadRequest, "UnexpectedAction", action, "req-x")
		}
	})
	l, err := api.client(t, 0).EnsureTCPListener(context.Background(), "lb-1", TCPListenerInput{Port: 6443, BackendPort: 6443})
	if err != nil {
		t.Fatal(err)
	}
	if l.Status != ListenerStatusRunning || api.hitsOf("CreateLoadBalancerTCPListener") != 1 || api.hitsOf("StartLoadBalancerListener") != 1 {
		t.Errorf("listener %+v after %d creates and %d starts; want running after one of each",
			l, api.hitsOf("CreateLoadBalancerTCPListener"), api.hitsOf("StartLoadBalancerListener"))
	}
}
