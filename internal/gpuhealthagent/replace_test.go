package gpuhealthagent

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
)

// TestAgentReplacesAnAutoscaledNode: an XID 79 on a node of an autoscaled pool (a scaling group in
// the emulator, the Node in the offline API server with the provider id the pool's bootstrap
// gives it) has the agent evict the node's GPU pod, wait until it has ended, then ask Auto Scaling
// for a new instance: the group releases the node's instance and launches another in its place.
// No request goes out while the pod is still there.
func TestAgentReplacesAnAutoscaledNode(t *testing.T) {
	kube := offlinekube.StartT(t, offlinekube.Options{})
	ctx := t.Context()
	c := cloudtest.Start(t, 3)
	n := c.CreateNetwork(ctx, t, cloudtest.Region+"-a")
	spec := gpuPoolSpec(n, "", &nodepool.Autoscale{Min: 1, Max: 2, Mix: cloud.AllOnDemand})
	pool, err := nodepool.ApplyAutoscaling(ctx, c.Client, spec)
	if err != nil || len(pool.Nodes) != 1 {
		t.Fatalf("the autoscaled pool: %+v, %v", pool, err)
	}
	old := pool.Nodes[0].ID

	node := "gpu-0"
	gpuNode(ctx, t, kube.Client(), node)
	updateNode(ctx, t, kube.Client(), node, "provider id", func(n *corev1.Node) { n.Spec.ProviderID = cloudtest.Region + "." + old })
	pod(ctx, t, kube.Client(), node, "trainer", "default", 1)
	waitFor(t, "pod trainer running", func() (bool, error) {
		got, err := kube.Client().CoreV1().Pods("default").Get(ctx, "trainer", metav1.GetOptions{})
		return err == nil && got.Status.Phase == corev1.PodRunning, err
	})

	exporter := &dcgmExporter{}
	exporter.set(1, 79)
	agent := &Agent{Client: kube.Client(), Node: node, Metrics: exporter.text, Replacer: ESSReplacer{Client: c.Client}}
	res, err := agent.Reconcile(ctx)
	if err != nil || !slices.Equal(res.Evicted, []string{"default/trainer"}) || res.Replaced {
		t.Fatalf("first round: %+v, %v; want the pod evicted and no replacement yet", res, err)
	}
	if n := c.Calls("SetInstanceHealth"); n != 0 {
		t.Fatalf("%d SetInstanceHealth calls while the GPU pod was still on the node", n)
	}
	waitFor(t, "the replacement request", func() (bool, error) {
		res, err := agent.Reconcile(ctx)
		return err == nil && res.Replaced, err
	})
	left, err := c.Client.DescribeInstancesByID(ctx, []string{old})
	if err != nil || len(left) != 0 {
		t.Fatalf("the old instance %s: %+v, %v; want it released", old, left, err)
	}
	waitFor(t, "a new instance in the group", func() (bool, error) {
		inst, err := c.Client.ScalingInstances(ctx, pool.GroupID)
		return err == nil && len(inst) == 1 && inst[0].InstanceID != old, err
	})
}
