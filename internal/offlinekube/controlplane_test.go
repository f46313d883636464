package offlinekube

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterUpgradesItsControlPlane forms a cluster on the previous minor's control plane, runs a
// GPU Deployment on a kwok node, and upgrades the control plane to the current minor's binaries:
// the API server reports the new release, the objects written by the old one are read back by
// the new one from the same etcd, the pod kept running, a new replica is scheduled and run by the
// new scheduler and controllers, and etcd answered its health check throughout. A release
// without binaries is refused naming `make kube`.
func TestClusterUpgradesItsControlPlane(t *testing.T) {
	binDir, err := DefaultBinDir()
	if err != nil {
		t.Fatal(err)
	}
	older, newer, err := UpgradeReleases(binDir)
	if err != nil {
		t.Fatal(err)
	}

	c := StartT(t, Options{ControlPlaneVersion: older})
	client := c.Client()
	ctx := t.Context()
	if got := c.ControlPlaneVersion(); got != older {
		t.Fatalf("ControlPlaneVersion() = %q, want %q", got, older)
	}
	if v, err := client.Discovery().ServerVersion(); err != nil || v.GitVersion != older {
		t.Fatalf("the API server reports %v (%v), want %s", v, err, older)
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, gpuNode("gpu-node-0", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AppsV1().Deployments("default").Create(ctx, gpuDeployment("trainer", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := waitForPod(t, client, "default", "app=trainer", corev1.PodRunning)

	// While the control plane is replaced: etcd's health and the API, every 100 ms.
	var polls, etcdDown, apiDown atomic.Int64
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for watchCtx.Err() == nil {
			polls.Add(1)
			if err := c.EtcdHealth(watchCtx); err != nil && watchCtx.Err() == nil {
				etcdDown.Add(1)
			}
			if _, err := client.CoreV1().Pods("default").Get(watchCtx, before.Name, metav1.GetOptions{}); err != nil && watchCtx.Err() == nil {
				apiDown.Add(1)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	upgradeErr := c.UpgradeControlPlane(ctx, newer)
	stopWatch()
	<-watched
	if upgradeErr != nil {
		t.Fatalf("UpgradeControlPlane(%s): %v", newer, upgradeErr)
	}
	t.Logf("during the upgrade %s -> %s: %d polls, etcd unhealthy %d, the API failed %d", older, newer, polls.Load(), etcdDown.Load(), apiDown.Load())
	if etcdDown.Load() > 0 {
		t.Errorf("etcd failed its health check %d times during the upgrade", etcdDown.Load())
	}

	if got := c.ControlPlaneVersion(); got != newer {
		t.Errorf("ControlPlaneVersion() = %q after the upgrade, want %q", got, newer)
	}
	if v, err := client.Discovery().ServerVersion(); err != nil || v.GitVersion != newer {
		t.Fatalf("after the upgrade the API server reports %v (%v), want %s", v, err, newer)
	}
	if p, err := client.CoreV1().Pods("default").Get(ctx, before.Name, metav1.GetOptions{}); err != nil || p.Status.Phase != corev1.PodRunning || p.UID != before.UID {
		t.Fatalf("the pod %s that ran before the upgrade: %v (%v), want the same pod Running", before.Name, p, err)
	}
	// The new controllers and scheduler act: a second replica is created, bound and run.
	if _, err := client.AppsV1().Deployments("default").Patch(ctx, "trainer", "application/merge-patch+json",
		[]byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "two trainer pods running on the new control plane", func(ctx context.Context) (bool, string, error) {
		pods, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=trainer"})
		if err != nil {
			return false, "", err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == 2, "pods " + podPlacements(pods.Items), nil
	})

	err = c.UpgradeControlPlane(ctx, "v1.99.0")
	if err == nil || !strings.Contains(err.Error(), "make kube") || !strings.Contains(err.Error(), "v1.99.0") {
		t.Errorf("UpgradeControlPlane to a release without binaries: %v, want a refusal naming it and `make kube`", err)
	}
	c.Stop()
	if left := ProcessesMentioning(c.WorkDir()); len(left) > 0 {
		t.Errorf("processes left running after Stop: %v", left)
	}
}
