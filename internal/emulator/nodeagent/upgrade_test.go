package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// The minor upgrade's versions: the repository's default minor (bootstrap.DefaultVersions, 1.33,
// pinned to 1.33.6) and the release before it.
const (
	oldRelease = "1.32.9"
	newRelease = "1.33.6"
)

// at is o installing Kubernetes release.
func at(o bootstrap.Options, release string) bootstrap.Options {
	o.Versions = bootstrap.Versions{Kubernetes: release}
	return o
}

// upgradeScript is bootstrap.KubeadmUpgradeScript for the test's nodes at release.
func upgradeScript(t *testing.T, release string) string {
	t.Helper()
	s, err := bootstrap.KubeadmUpgradeScript(at(firstControlPlane(testCAs(t)[0]), release))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestKubernetesMinorUpgrade (issue #34): a control plane of three and a GPU worker at 1.32
// moved to 1.33 the way the node pools do it. A replacement control-plane node of 1.33 is refused
// while kubeadm-config says 1.32 (its kubelet would be newer than the control plane); kubeadm
// upgrade apply is refused for a skipped minor and while a control-plane node is down, and once
// it raises the cluster to 1.33 the control plane is replaced one node at a time, each member
// removed before its node goes, etcd listing exactly the live control-plane nodes after every
// step; then the worker. A worker of 1.33 that joins the 1.32 cluster is noted as outside the
// skew policy.
func TestKubernetesMinorUpgrade(t *testing.T) {
	ca := testCAs(t)[0]
	v := goodView(t)
	v.Instances = []emulator.InstanceView{
		instance("i-cp1", "10.0.1.10", userData(t, at(firstControlPlane(ca), oldRelease)), false),
		instance("i-cp2", "10.0.1.12", userData(t, at(joiningControlPlane(ca), oldRelease)), false),
		instance("i-cp3", "10.0.1.13", userData(t, at(joiningControlPlane(ca), oldRelease)), false),
		instance("i-gpu1", "10.0.1.21", userData(t, at(gpuWorker(ca), oldRelease)), true),
	}
	v.LoadBalancers[0].BackendIDs = []string{"i-cp1", "i-cp2", "i-cp3"}
	q := &commandQueue{finished: map[string]string{}, codes: map[string]int{}}
	a := New(func() emulator.View { return v }, newFakeKube(), t.Logf)
	a.CommandsWith(q.list, q.finish)
	ctx := context.Background()
	a.Sync(ctx)
	if got := a.ClusterVersion(); got != "v"+oldRelease {
		t.Fatalf("cluster version after kubeadm init = %q, want v%s", got, oldRelease)
	}
	if st := statusOf(a, "i-gpu1"); st.Node == "" || st.KubeletVersion != oldRelease {
		t.Fatalf("worker at %s: node %q kubelet %q (%s)", oldRelease, st.Node, st.KubeletVersion, st.Reason)
	}
	live := []string{"i-cp1", "i-cp2", "i-cp3"}
	checkMembers := func(step string) {
		t.Helper()
		var want []string
		for _, id := range live {
			want = append(want, "iz"+id+"z")
		}
		got := a.EtcdMembers()
		if names := memberNames(got); !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(want))) {
			t.Fatalf("%s: etcd members %v, want exactly the live control-plane nodes %v", step, names, want)
		}
		for _, m := range got {
			if !m.Connected {
				t.Fatalf("%s: member %s not connected", step, m.Name)
			}
		}
	}
	checkMembers("formed")
	run := func(id, script string) (int, string) {
		t.Helper()
		invoke := fmt.Sprintf("t-%d", len(q.codes))
		q.pending = append(q.pending, emulator.PendingCommand{InvokeID: invoke, InstanceID: id, Content: script})
		a.Sync(ctx)
		if _, ok := q.finished[invoke]; !ok {
			t.Fatalf("command %s on %s not run", invoke, id)
		}
		return q.codes[invoke], q.finished[invoke]
	}
	// replace is one control-plane step of the roll: the member removed on a staying node, the
	// node released, its replacement (built by opts) started.
	replace := func(old, runner, next, ip string, opts bootstrap.Options) {
		t.Helper()
		script, err := bootstrap.EtcdMemberRemoveScript([]string{"iz" + old + "z"})
		if err != nil {
			t.Fatal(err)
		}
		if code, out := run(runner, script); code != 0 {
			t.Fatalf("removing %s's member: %d %s", old, code, out)
		}
		v.Instances = slices.DeleteFunc(v.Instances, func(in emulator.InstanceView) bool { return in.ID == old })
		v.Instances = append(v.Instances, instance(next, ip, userData(t, at(opts, newRelease)), false))
		lb := &v.LoadBalancers[0] // the node pool's backends: the staying nodes and the replacement
		lb.BackendIDs = append(slices.DeleteFunc(lb.BackendIDs, func(id string) bool { return id == old }), next)
		a.Sync(ctx)
	}

	// A worker of the new minor before the control plane: kubeadm lets it join, noted.
	v.Instances = append(v.Instances, instance("i-gpu9", "10.0.1.29", userData(t, at(gpuWorker(ca), newRelease)), true))
	a.Sync(ctx)
	if st := statusOf(a, "i-gpu9"); st.Node == "" || !slices.ContainsFunc(st.Notes, func(n string) bool { return strings.Contains(n, "outside the version skew policy") }) {
		t.Errorf("a 1.33 worker joining a 1.32 control plane: node %q notes %q, want it registered and noted", st.Node, st.Notes)
	}
	v.Instances = slices.DeleteFunc(v.Instances, func(in emulator.InstanceView) bool { return in.ID == "i-gpu9" })

	// The first 1.33 control-plane node, before the cluster's version is raised: refused.
	replace("i-cp3", "i-cp1", "i-cp4", "10.0.1.14", joiningControlPlane(ca))
	live = []string{"i-cp1", "i-cp2"}
	if st := statusOf(a, "i-cp4"); st.Node != "" || !strings.Contains(st.Reason, "[ERROR KubeletVersion]") || !strings.Contains(st.Reason, `Control plane version: "1.32.9"`) {
		t.Fatalf("1.33 control-plane node joining a 1.32 cluster: node %q, reason %q; want kubeadm's KubeletVersion refusal", st.Node, st.Reason)
	}
	checkMembers("refused join")

	// kubeadm upgrade apply: a skipped minor, a control-plane node stopped, the wrong
	// repository are refused and change nothing; then the upgrade.
	if code, out := run("i-cp1", upgradeScript(t, "1.34.2")); code == 0 || !strings.Contains(out, "kubeadm can upgrade only 1 minor version at a time") {
		t.Errorf("1.32 -> 1.34: exit %d, %q; want the one-minor refusal", code, out)
	}
	if code, out := run("i-cp1", strings.Replace(upgradeScript(t, newRelease), "/v1.33/deb/", "/v1.32/deb/", 1)); code != 100 || !strings.Contains(out, "'1.33.6-1.1' for 'kubeadm' was not found") {
		t.Errorf("the old minor's repository: exit %d, %q; want apt's version not found", code, out)
	}
	instanceByID(t, &v, "i-cp2").Status = "Stopped"
	if code, out := run("i-cp1", upgradeScript(t, newRelease)); code == 0 || !strings.Contains(out, "NotReady control-planes in the cluster: [izi-cp2z]") {
		t.Errorf("upgrade with a control-plane kubelet down: exit %d, %q; want the health check's refusal", code, out)
	}
	instanceByID(t, &v, "i-cp2").Status = "Running"
	if code, out := run("i-gpu1", upgradeScript(t, newRelease)); code == 0 {
		t.Errorf("upgrade run on a worker succeeded: %q", out)
	}
	if got := a.ClusterVersion(); got != "v"+oldRelease {
		t.Fatalf("refused upgrades changed the cluster's version to %s", got)
	}
	if code, out := run("i-cp2", upgradeScript(t, newRelease)); code != 0 || a.ClusterVersion() != "v"+newRelease {
		t.Fatalf("upgrade: exit %d, %q, cluster at %s", code, out, a.ClusterVersion())
	}
	if code, out := run("i-cp1", upgradeScript(t, newRelease)); code != 0 || !strings.Contains(out, "already at") {
		t.Errorf("the same upgrade again: exit %d, %q; want a no-op", code, out)
	}
	a.Sync(ctx)
	if st := statusOf(a, "i-cp4"); st.Node == "" || st.KubeletVersion != newRelease {
		t.Fatalf("1.33 control-plane node after the upgrade: node %q, reason %q", st.Node, st.Reason)
	}
	live = []string{"i-cp1", "i-cp2", "i-cp4"}
	checkMembers("i-cp3 replaced")

	// The rest of the control plane, one node at a time: the joining pool's other node, then
	// the first node (its replacement joins, the API answering).
	replace("i-cp2", "i-cp4", "i-cp5", "10.0.1.15", joiningControlPlane(ca))
	live = []string{"i-cp1", "i-cp4", "i-cp5"}
	checkMembers("i-cp2 replaced")
	replace("i-cp1", "i-cp4", "i-cp6", "10.0.1.16", firstControlPlane(ca))
	live = []string{"i-cp4", "i-cp5", "i-cp6"}
	checkMembers("i-cp1 replaced")
	for _, id := range live {
		if st := statusOf(a, id); st.Node == "" || st.KubeletVersion != newRelease {
			t.Fatalf("control-plane node %s: node %q kubelet %q (%s)", id, st.Node, st.KubeletVersion, st.Reason)
		}
	}

	// Then the worker: it joins without a note on its version.
	v.Instances = slices.DeleteFunc(v.Instances, func(in emulator.InstanceView) bool { return in.ID == "i-gpu1" })
	v.Instances = append(v.Instances, instance("i-gpu2", "10.0.1.22", userData(t, at(gpuWorker(ca), newRelease)), true))
	a.Sync(ctx)
	if st := statusOf(a, "i-gpu2"); st.Node == "" || slices.ContainsFunc(st.Notes, func(n string) bool { return strings.Contains(n, "skew") }) {
		t.Fatalf("1.33 worker after the control plane: node %q, reason %q, notes %q", st.Node, st.Reason, st.Notes)
	}
	if f := a.Failures(); len(f) > 0 {
		t.Fatalf("failures: %+v", f)
	}
}

// TestKubeadmUpgradeReplacesTheControlPlane: with the offline cluster's control plane handed in
// (UpgradeControlPlaneWith), an allowed kubeadm upgrade apply replaces it with the target's
// binaries before it succeeds: the command stays running, and kubeadm-config at the old version,
// until the replacement is done, later rounds do not start it again, and a control plane that does
// not come up fails the command and leaves the version as it was.
func TestKubeadmUpgradeReplacesTheControlPlane(t *testing.T) {
	ca := testCAs(t)[0]
	v := goodView(t)
	v.Instances = []emulator.InstanceView{
		instance("i-cp1", "10.0.1.10", userData(t, at(firstControlPlane(ca), oldRelease)), false),
		instance("i-cp2", "10.0.1.12", userData(t, at(joiningControlPlane(ca), oldRelease)), false),
	}
	v.LoadBalancers[0].BackendIDs = []string{"i-cp1", "i-cp2"}
	q := &commandQueue{finished: map[string]string{}, codes: map[string]int{}}
	a := New(func() emulator.View { return v }, newFakeKube(), t.Logf)
	a.CommandsWith(q.list, q.finish)
	type call struct {
		release string
		result  chan error
	}
	calls := make(chan call, 4)
	a.UpgradeControlPlaneWith(func(_ context.Context, release string) error {
		c := call{release, make(chan error)}
		calls <- c
		return <-c.result
	})
	ctx := context.Background()
	a.Sync(ctx)
	if got := a.ClusterVersion(); got != "v"+oldRelease {
		t.Fatalf("cluster version after kubeadm init = %q, want v%s", got, oldRelease)
	}
	// finished reads the command's outcome under the agent's lock, which the upgrade's goroutine
	// finished it under.
	finished := func(invoke string) (int, string, bool) {
		a.mu.Lock()
		defer a.mu.Unlock()
		out, ok := q.finished[invoke]
		return q.codes[invoke], out, ok
	}
	upgrade := func(invoke string, result error) (int, string) {
		t.Helper()
		a.mu.Lock()
		q.pending = append(q.pending, emulator.PendingCommand{InvokeID: invoke, InstanceID: "i-cp1", Content: upgradeScript(t, newRelease)})
		a.mu.Unlock()
		a.Sync(ctx)
		c := <-calls
		if c.release != "v"+newRelease {
			t.Fatalf("the control plane was asked for %q, want v%s", c.release, newRelease)
		}
		a.Sync(ctx) // a round while the control plane is replaced
		if _, _, done := finished(invoke); done || a.ClusterVersion() != "v"+oldRelease {
			t.Fatalf("while the control plane is replaced: command finished %v, cluster at %s; want it running and the version unchanged", done, a.ClusterVersion())
		}
		select {
		case again := <-calls:
			t.Fatalf("a second replacement (%s) started for the same command", again.release)
		default:
		}
		c.result <- result
		for {
			if code, out, done := finished(invoke); done {
				return code, out
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if code, out := upgrade("t-fail", errors.New("kube-apiserver exited")); code != 1 || !strings.Contains(out, "kube-apiserver exited") || a.ClusterVersion() != "v"+oldRelease {
		t.Errorf("a control plane that did not come up: exit %d, %q, cluster at %s; want exit 1 naming why and the version unchanged", code, out, a.ClusterVersion())
	}
	if code, out := upgrade("t-ok", nil); code != 0 || !strings.Contains(out, "SUCCESS") || a.ClusterVersion() != "v"+newRelease {
		t.Errorf("the upgrade: exit %d, %q, cluster at %s; want success at v%s", code, out, a.ClusterVersion(), newRelease)
	}
}
