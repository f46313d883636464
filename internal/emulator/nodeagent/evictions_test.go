package nodeagent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
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
