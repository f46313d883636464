package nodeagent

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// TestNodesHoldTheirShutdown: every node whose bootstrap configures graceful node shutdown (the
// first control-plane node's KubeletConfiguration, a joining node's kubeletconfiguration patch)
// tells the emulator its guest delays a normal stop by shutdownGracePeriod; a node whose kubelet
// has none (0, the kubelet's default) does not, and stops without terminating its pods.
func TestNodesHoldTheirShutdown(t *testing.T) {
	v := goodView(t)
	a := New(func() emulator.View { return v }, newFakeKube(), t.Logf)
	held := map[string]time.Duration{}
	a.PowerOffWith(func(string) {})
	a.DelayShutdownWith(func(id string, d time.Duration) { held[id] = d })
	a.Sync(context.Background())
	want := map[string]time.Duration{"i-cp": 5 * time.Minute, "i-gpu1": 5 * time.Minute}
	if !maps.Equal(held, want) {
		t.Fatalf("delayed shutdowns %v, want %v", held, want)
	}
	for id, p := range map[string]NodePlan{"i-cp": a.plans["i-cp"].plan, "i-gpu1": a.plans["i-gpu1"].plan} {
		if p.Shutdown == nil || *p.Shutdown != (ShutdownSettings{GracePeriod: 5 * time.Minute, CriticalPods: time.Minute}) {
			t.Errorf("%s: shutdown settings %+v, want 5m with 1m for critical pods, read from its own files", id, p.Shutdown)
		}
	}

	off, ok, err := readShutdown("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nshutdownGracePeriod: 0s\n")
	if err != nil || !ok || off.GracePeriod != 0 {
		t.Fatalf("shutdownGracePeriod 0s: %+v %v %v", off, ok, err)
	}
	clear(held)
	a.holdShutdown("i-off", NodePlan{Shutdown: &off})
	if len(held) != 0 {
		t.Fatalf("a kubelet without graceful shutdown delayed its guest's: %v", held)
	}
	if _, ok, _ := readShutdown("apiVersion: kubeadm.k8s.io/v1beta4\nkind: JoinConfiguration\n"); ok {
		t.Fatal("settings read from a file without a KubeletConfiguration")
	}
}
