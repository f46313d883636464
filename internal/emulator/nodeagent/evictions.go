package nodeagent

// The drain a node pool runs on a node before it stops it (bootstrap.DrainScript, through Cloud
// Assistant). On the node it is kubectl with the kubelet's credentials: cordon the node, then in
// rounds list the node's pods and ask the Eviction API to evict each one but DaemonSet and static
// (mirror) pods, until none is left or the rounds run out. The agent plays the same calls on the
// offline cluster's real API server, so its answers are the real ones: the API server refuses an
// eviction with 429 while a PodDisruptionBudget allows no disruption
// (https://kubernetes.io/docs/concepts/scheduling-eviction/api-eviction/), from the budget's
// status as the real disruption controller keeps it. The kubelet's NodeRestriction limits (a
// node evicts only pods bound to it) are not checked here: the agent's client is the cluster's
// admin; the script names its own node only.

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
)

var (
	drainNodeRE     = regexp.MustCompile(`(?m)^NODE=([a-z0-9.-]+)$`)
	drainRoundsRE   = regexp.MustCompile(`(?m)^ROUNDS=(\d+)$`)
	drainIntervalRE = regexp.MustCompile(`\n    sleep (\d+)\n  done\n`)
)

// drainPlay is a drain command's script as the agent plays it.
type drainPlay struct {
	node     string
	rounds   int
	interval time.Duration
}

// drainPlayOf reads a drain script; ok is false for a script that is not one.
func drainPlayOf(script string) (d drainPlay, ok bool) {
	node, rounds, interval := drainNodeRE.FindStringSubmatch(script), drainRoundsRE.FindStringSubmatch(script), drainIntervalRE.FindStringSubmatch(script)
	if !strings.Contains(script, "\n"+bootstrap.DrainScriptMarker) || node == nil || rounds == nil || interval == nil {
		return d, false
	}
	n, _ := strconv.Atoi(rounds[1])
	s, _ := strconv.Atoi(interval[1])
	return drainPlay{node: node[1], rounds: n, interval: time.Duration(s) * time.Second}, true
}

// runDrain plays a drain script, invocation invokeID on instance id, on its own goroutine
// (commandUnderWay); handled is false for a script that is not one. A node that never
// registered has no kubelet credentials: nothing to drain, as the script says.
func (a *Agent) runDrain(ctx context.Context, invokeID, id, script string) (exitCode int, output string, handled bool) {
	d, ok := drainPlayOf(script)
	if !ok {
		return 0, "", false
	}
	if a.registered[id] == "" || a.kube == nil {
		return 0, fmt.Sprintf("node %s: no /etc/kubernetes/kubelet.conf, the node never joined: nothing to drain\n", d.node), true
	}
	a.putUnderWay(invokeID)
	var code int
	var out string
	a.finishInBackground(invokeID, id, func() { code, out = playDrain(ctx, a.kube, d) }, func() (int, string) {
		a.logf("nodeagent: %s drained node %s: exit %d (%d evictions, %d refused): %s", id, d.node, code,
			strings.Count(out, "\nevicted "), strings.Count(out, "Error from server"), lastOutputLine(out))
		return code, out
	})
	return commandUnderWay, "", true
}

// playDrain makes the script's calls: cordon, then rounds of listing and evicting.
func playDrain(ctx context.Context, k Kube, d drainPlay) (code int, output string) {
	var out strings.Builder
	if err := k.SetUnschedulable(ctx, d.node, true); err != nil {
		return bootstrap.DrainExitNoAPI, fmt.Sprintf("node %s: cordon failed: %v\n", d.node, err)
	}
	fmt.Fprintf(&out, "node/%s cordoned\n", d.node)
	var left []string
	for round := 0; round <= d.rounds; round++ {
		var err error
		if left, err = k.DrainablePods(ctx, d.node); err != nil {
			return bootstrap.DrainExitNoAPI, out.String() + err.Error() + "\n"
		}
		if len(left) == 0 {
			fmt.Fprintf(&out, "node %s drained\n", d.node)
			return 0, out.String()
		}
		if round == d.rounds {
			break
		}
		for _, p := range left {
			if err := k.Evict(ctx, p); err != nil {
				fmt.Fprintf(&out, "Error from server: %v\n", err)
				continue
			}
			fmt.Fprintf(&out, "evicted %s\n", p)
		}
		select {
		case <-ctx.Done():
			return 1, out.String() + ctx.Err().Error() + "\n"
		case <-time.After(d.interval):
		}
	}
	fmt.Fprintf(&out, "node %s: pods left after %d rounds: %s\n", d.node, d.rounds, strings.Join(left, " "))
	if err := k.SetUnschedulable(ctx, d.node, false); err != nil {
		fmt.Fprintf(&out, "uncordon: %v\n", err)
	}
	return bootstrap.DrainExitPodsLeft, out.String()
}

func lastOutputLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// SetUnschedulable cordons the node (kubectl cordon) or uncordons it.
func (k *clientKube) SetUnschedulable(ctx context.Context, name string, on bool) error {
	nodes := k.cs.CoreV1().Nodes()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.Spec.Unschedulable == on {
			return nil
		}
		cur.Spec.Unschedulable = on
		_, err = nodes.Update(ctx, cur, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	})
}

// DrainablePods lists the pods bound to the node (namespace/name) that the drain evicts: all
// but DaemonSet and static (mirror) pods, ended and terminating ones too, as the script's
// listing shows them.
func (k *clientKube) DrainablePods(ctx context.Context, name string) ([]string, error) {
	pods, err := k.podsOn(ctx, name)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods {
		if !goesWithItsNode(&p) {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Evict asks the Eviction API to evict the pod (namespace/name) with its own grace period; a
// PodDisruptionBudget's refusal is the API server's 429.
func (k *clientKube) Evict(ctx context.Context, pod string) error {
	ns, name, _ := strings.Cut(pod, "/")
	err := k.cs.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
