package nodeagent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// budgetKube is a node's pods behind an API server whose PodDisruptionBudget refuses the first
// refusals evictions of pod kept; it records the cordons.
type budgetKube struct {
	Kube
	pods       []string
	kept       string
	refusals   int
	cordons    []bool
	evictCalls int
}

func (k *budgetKube) SetUnschedulable(_ context.Context, _ string, on bool) error {
	k.cordons = append(k.cordons, on)
	return nil
}

func (k *budgetKube) DrainablePods(context.Context, string) ([]string, error) {
	return slices.Clone(k.pods), nil
}

func (k *budgetKube) Evict(_ context.Context, pod string) error {
	k.evictCalls++
	if pod == k.kept && k.refusals > 0 {
		k.refusals--
		return errors.New("Cannot evict pod as it would violate the pod's disruption budget")
	}
	k.pods = slices.DeleteFunc(k.pods, func(p string) bool { return p == pod })
	return nil
}

// TestAgentPlaysTheDrainScript: the agent reads the node, the rounds and their interval from the
// rendered script, cordons, evicts round by round with a refused eviction tried again, and
// answers the script's exit codes: drained, or pods left (then uncordoned).
func TestAgentPlaysTheDrainScript(t *testing.T) {
	script, err := bootstrap.DrainScript("izgpu1z", 2*bootstrap.DrainInterval)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := drainPlayOf(script)
	if !ok || d.node != "izgpu1z" || d.rounds != 2 || d.interval != bootstrap.DrainInterval {
		t.Fatalf("read %+v (ok %t) from the script, want node izgpu1z, 2 rounds %s apart", d, ok, bootstrap.DrainInterval)
	}
	if _, ok := drainPlayOf("#!/bin/bash\nNODE=x\nROUNDS=3\n"); ok {
		t.Error("a script without the drain's marker was taken for one")
	}
	d.interval = 10 * time.Millisecond

	k := &budgetKube{pods: []string{"default/steady-a", "default/trainer"}, kept: "default/steady-a", refusals: 1}
	code, out := playDrain(t.Context(), k, d)
	if code != 0 || !strings.Contains(out, "node izgpu1z drained") || k.evictCalls != 3 || !slices.Equal(k.cordons, []bool{true}) {
		t.Errorf("exit %d after %d evictions, cordons %v, output:\n%s\nwant drained after 3 evictions (one refused), cordoned once", code, k.evictCalls, k.cordons, out)
	}

	k = &budgetKube{pods: []string{"default/steady-a"}, kept: "default/steady-a", refusals: 100}
	code, out = playDrain(t.Context(), k, d)
	if code != bootstrap.DrainExitPodsLeft || !strings.Contains(out, "pods left after 2 rounds: default/steady-a") || !slices.Equal(k.cordons, []bool{true, false}) {
		t.Errorf("exit %d, cordons %v, output:\n%s\nwant %d naming the pod, then uncordoned", code, k.cordons, out, bootstrap.DrainExitPodsLeft)
	}
}

// testDrainAsksTheBudget (issue #34), on the offline cluster's real API server: a Job's pod runs on
// a node, with a PodDisruptionBudget of minAvailable 1 over it. The drain's evictions are refused
// by the API server (the real disruption budget check), so the drain ends with the pod named and
// the node uncordoned; without the budget the same drain evicts the pod and leaves the node
// cordoned for the stop that follows.
func testDrainAsksTheBudget(t *testing.T, kube Kube, client kubernetes.Interface) {
	in := instance("i-budget", "10.0.9.20", "", true)
	in.Type, in.GPUs = "ecs.gn7i-c32g1.16xlarge", 1
	if err := kube.RegisterNode(t.Context(), nodeFor(&in, NodePlan{NodeName: "budget-gpu-0"}, false, "", nil)); err != nil {
		t.Fatal(err)
	}
	waitReady(t, client, "budget-gpu-0")
	pod := runJob(t, client, "drain-budget", []string{"budget-gpu-0"})
	one := intstr.FromInt32(1)
	budgets := client.PolicyV1().PodDisruptionBudgets("default")
	if _, err := budgets.Create(t.Context(), &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "drain-budget"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"job-name": "drain-budget"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d := drainPlay{node: "budget-gpu-0", rounds: 2, interval: 200 * time.Millisecond}
	code, out := playDrain(t.Context(), kube, d)
	if code != bootstrap.DrainExitPodsLeft || !strings.Contains(out, "disruption budget") || !strings.Contains(out, "default/"+pod.Name) {
		t.Fatalf("drain with the budget: exit %d, output:\n%s\nwant %d, the API's refusal and the pod named", code, out, bootstrap.DrainExitPodsLeft)
	}
	if n, err := client.CoreV1().Nodes().Get(t.Context(), "budget-gpu-0", metav1.GetOptions{}); err != nil || n.Spec.Unschedulable {
		t.Errorf("the node a budget kept is still cordoned (%v)", err)
	}
	if err := budgets.Delete(t.Context(), "drain-budget", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	d.rounds = 300 // the evicted pod ends within its 120 s grace period: kwok deletes it at once
	if code, out = playDrain(t.Context(), kube, d); code != 0 || !strings.Contains(out, "evicted default/"+pod.Name) {
		t.Fatalf("drain without the budget: exit %d, output:\n%s\nwant the pod evicted", code, out)
	}
	if n, err := client.CoreV1().Nodes().Get(t.Context(), "budget-gpu-0", metav1.GetOptions{}); err != nil || !n.Spec.Unschedulable {
		t.Errorf("the drained node is not cordoned (%v)", err)
	}
}

// TestDrainOfANodeThatNeverJoined: a drain sent to an instance whose node never registered ends
// at once with nothing to drain, as the script does without kubelet credentials; it is not left
// running until its timeout, which would hold a roll replacing a broken node for the whole
// drain_timeout.
func TestDrainOfANodeThatNeverJoined(t *testing.T) {
	script, err := bootstrap.DrainScript("izbroken0z", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	a := New(func() emulator.View { return emulator.View{} }, &budgetKube{}, t.Logf)
	code, out, ok := a.runCommand(t.Context(), emulator.PendingCommand{InvokeID: "t-1", InstanceID: "i-broken", Content: script})
	if !ok || code != 0 || !strings.Contains(out, "never joined") {
		t.Fatalf("drain on an unregistered instance: handled %t, exit %d, output %q; want 0 and nothing to drain", ok, code, out)
	}
	if _, ok := a.underWay["t-1"]; ok {
		t.Error("the drain of an unregistered node was left under way")
	}
}
