package nodeagent

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// TestShutdownOrder: the kubelet terminates the regular pods first, then the critical ones
// (priority 2000000000 and up), skips pods that have ended, and the shutdown takes, per group, the
// longest grace period a pod asks for within the group's period, the groups one after the other.
func TestShutdownOrder(t *testing.T) {
	pod := func(name string, priority int32, grace int64, phase corev1.PodPhase) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Priority: &priority}, Status: corev1.PodStatus{Phase: phase}}
		if grace >= 0 {
			p.Spec.TerminationGracePeriodSeconds = &grace
		}
		return p
	}
	pods := []corev1.Pod{
		pod("flannel", 2000001000, 30, corev1.PodRunning), // system-node-critical
		pod("train", 0, 600, corev1.PodRunning),           // asks for more than the regular period (4 min)
		pod("done", 0, 30, corev1.PodSucceeded),
		pod("web", 0, -1, corev1.PodRunning),          // the API's default, 30 s
		pod("dns", 2000000000, 90, corev1.PodRunning), // system-cluster-critical, more than its 1 min
	}
	s := ShutdownSettings{GracePeriod: 5 * time.Minute, CriticalPods: time.Minute}
	order, seconds := shutdownOrder(pods, s)
	var names []string
	for _, p := range order {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "train,web,flannel,dns" {
		t.Errorf("order %v, want train,web (regular) then flannel,dns (critical); done has ended", names)
	}
	if seconds != 240+60 {
		t.Errorf("modeled %v s, want 300: 240 for the regular pods (train capped), 60 for the critical ones (dns capped)", seconds)
	}
	if _, seconds := shutdownOrder(pods[1:2], ShutdownSettings{GracePeriod: 5 * time.Minute}); seconds != 300 {
		t.Errorf("no critical period: %v s, want 300 (train capped at the whole period)", seconds)
	}
}

// TestShutdownPlayedOnceOutsideTheLock: a normal stop of a node with graceful node shutdown plays
// the shutdown once, without the agent's lock (waiting for the not-ready taint takes the real API
// up to half a minute, and /_emulator/nodes must answer meanwhile), powers the guest off after,
// reports it while the instance is down, and forgets it once the instance runs again.
func TestShutdownPlayedOnceOutsideTheLock(t *testing.T) {
	v := goodView(t)
	kube := newFakeKube()
	a := New(func() emulator.View { return v }, kube, t.Logf)
	var off []string
	a.PowerOffWith(func(id string) { off = append(off, id) })
	a.DelayShutdownWith(func(string, time.Duration) {})
	ctx := context.Background()
	a.Sync(ctx)
	node := statusOf(a, "i-gpu1").Node
	if node == "" {
		t.Fatalf("i-gpu1 did not register: %s", statusOf(a, "i-gpu1").Reason)
	}
	kube.onShutdown = func(string) {
		if !a.mu.TryLock() {
			t.Error("ShutdownNode ran while the agent held its lock")
			return
		}
		a.mu.Unlock()
	}

	v.Instances[1].Status, v.Instances[1].ShutdownSignalled = "Stopping", true
	a.Sync(ctx)
	if !slices.Equal(off, []string{"i-gpu1"}) {
		t.Fatalf("powered off %v, want i-gpu1 once its shutdown is done", off)
	}
	if st := statusOf(a, "i-gpu1"); st.Shutdown == nil || st.Shutdown.ModeledSeconds != 300 {
		t.Fatalf("status after the shutdown: %+v, want the shutdown reported (300 s modeled)", st.Shutdown)
	}
	v.Instances[1].Status, v.Instances[1].ShutdownSignalled = "Stopped", false
	a.Sync(ctx)
	if st := statusOf(a, "i-gpu1"); kube.shutdowns[node] != 1 || len(off) != 1 || st.Shutdown == nil {
		t.Fatalf("after another round: %d shutdowns, powered off %v, report %+v; want one, still reported", kube.shutdowns[node], off, st.Shutdown)
	}
	v.Instances[1].Status = "Running"
	a.Sync(ctx)
	if st := statusOf(a, "i-gpu1"); st.Shutdown != nil {
		t.Fatalf("the shutdown is still reported once the instance runs again: %+v", st.Shutdown)
	}
}

// TestReleasedWithPodsCountedOnce: a node released while it runs pods is one failure, however
// many rounds the agent takes to delete its Node.
func TestReleasedWithPodsCountedOnce(t *testing.T) {
	v := goodView(t)
	kube := newFakeKube()
	a := New(func() emulator.View { return v }, kube, t.Logf)
	ctx := context.Background()
	a.Sync(ctx)
	node := statusOf(a, "i-gpu1").Node
	if node == "" {
		t.Fatalf("i-gpu1 did not register: %s", statusOf(a, "i-gpu1").Reason)
	}
	kube.running = map[string][]string{node: {"default/train"}}
	kube.deleteErr = errors.New("the API server is restarting")
	v.Instances = v.Instances[:1]
	a.Sync(ctx)
	a.Sync(ctx)
	kube.deleteErr = nil
	a.Sync(ctx)
	if _, left := kube.nodes[node]; left {
		t.Fatalf("node %s not deleted once the API server answers", node)
	}
	f := a.Failures()
	if len(f) != 1 || f[0].InstanceID != "i-gpu1" || !strings.Contains(f[0].Reason, "default/train") {
		t.Fatalf("failures %+v, want one, of i-gpu1 running default/train", f)
	}
}
