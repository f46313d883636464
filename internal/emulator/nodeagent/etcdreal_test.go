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

// recordingEtcd records what the agent asks of the real etcd; refuseJoin, when set, is etcd's
// answer to a member add.
type recordingEtcd struct {
	calls      []string
	running    map[string]bool
	refuseJoin error
}

func (e *recordingEtcd) NameFirstEtcdMember(name string) { e.calls = append(e.calls, "first "+name) }
func (e *recordingEtcd) JoinEtcdMember(_ context.Context, name string) error {
	if e.refuseJoin != nil {
		return e.refuseJoin
	}
	e.calls = append(e.calls, "join "+name)
	return nil
}
func (e *recordingEtcd) RemoveEtcdMember(_ context.Context, name string) error {
	e.calls = append(e.calls, "remove "+name)
	return nil
}
func (e *recordingEtcd) SetEtcdMemberRunning(_ context.Context, name string, running bool) error {
	if e.running[name] != running {
		e.calls = append(e.calls, fmt.Sprintf("running %s %v", name, running))
	}
	e.running[name] = running
	return nil
}

// TestAgentMakesKubeadmsEtcdChangesOnTheRealEtcd: given a real etcd (EtcdWith), kubeadm init
// names its first member, each control-plane join adds one (and fails with etcd's refusal when
// etcd refuses), a stopped instance's member stops, and the removal script removes the member.
func TestAgentMakesKubeadmsEtcdChangesOnTheRealEtcd(t *testing.T) {
	ca := testCAs(t)[0]
	v := goodView(t)
	v.Instances = append(v.Instances[:1], instance("i-cp2", "10.0.1.12", userData(t, joiningControlPlane(ca)), false))
	q := &commandQueue{finished: map[string]string{}, codes: map[string]int{}}
	e := &recordingEtcd{running: map[string]bool{}, refuseJoin: errors.New("etcdserver: unhealthy cluster")}
	a := New(func() emulator.View { return v }, newFakeKube(), t.Logf)
	a.CommandsWith(q.list, q.finish)
	a.EtcdWith(e)
	ctx := context.Background()
	a.Sync(ctx)
	if st := statusOf(a, "i-cp2"); st.Node != "" || !strings.Contains(st.Reason, "etcdserver: unhealthy cluster") {
		t.Fatalf("a join etcd refuses: node %q, reason %q; want it unregistered with etcd's error", st.Node, st.Reason)
	}
	e.refuseJoin = nil
	a.Sync(ctx)
	if st := statusOf(a, "i-cp2"); st.Node == "" {
		t.Fatalf("the join once etcd takes the member: %s", st.Reason)
	}
	instanceByID(t, &v, "i-cp2").Status = "Stopped"
	a.Sync(ctx)
	script, err := bootstrap.EtcdMemberRemoveScript([]string{"izi-cp2z"})
	if err != nil {
		t.Fatal(err)
	}
	code, out := runUntilFinished(t, a, q, emulator.PendingCommand{InvokeID: "t-remove", InstanceID: "i-cp", Content: script})
	want := []string{"first izi-cpz", "running izi-cpz true", "join izi-cp2z", "running izi-cp2z true", "running izi-cp2z false", "remove izi-cp2z"}
	if !slices.Equal(e.calls, want) {
		t.Errorf("the real etcd was asked\n%q\nwant\n%q", e.calls, want)
	}
	if code != 0 {
		t.Errorf("removal: exit %d, %q", code, out)
	}
}

// runUntilFinished queues cmd and syncs the agent until the command finished (on the agent's
// goroutine or a command's own), and answers its exit code and output, read under the lock the
// agent finishes commands under.
func runUntilFinished(t *testing.T, a *Agent, q *commandQueue, cmd emulator.PendingCommand) (int, string) {
	t.Helper()
	a.mu.Lock()
	q.pending = append(q.pending, cmd)
	a.mu.Unlock()
	deadline := time.Now().Add(time.Minute)
	for {
		a.Sync(context.Background())
		a.mu.Lock()
		out, done := q.finished[cmd.InvokeID]
		code := q.codes[cmd.InvokeID]
		a.mu.Unlock()
		if done {
			return code, out
		}
		if time.Now().After(deadline) {
			t.Fatalf("command %s did not finish within a minute", cmd.InvokeID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// flakyRemoveEtcd refuses the first refusals removals as etcd does while a member that joined a
// moment ago has not been connected for its health interval.
type flakyRemoveEtcd struct {
	recordingEtcd
	refusals int
}

func (e *flakyRemoveEtcd) RemoveEtcdMember(ctx context.Context, name string) error {
	if e.refusals > 0 {
		e.refusals--
		return errors.New("etcd member remove " + name + ": etcdserver: unhealthy cluster")
	}
	return e.recordingEtcd.RemoveEtcdMember(ctx, name)
}

// TestEtcdMemberRemovalOutlastsARefusal: etcd refuses to remove a voting member while fewer than
// a quorum of the others have been connected for its health interval (5 s): right after a
// replacement joined, as in a roll (mayRemoveMember,
// https://github.com/etcd-io/etcd/blob/v3.7.0/server/etcdserver/server.go). The provider's
// removal script retries, so one refusal does not fail it; the member goes once etcd takes it.
func TestEtcdMemberRemovalOutlastsARefusal(t *testing.T) {
	ca := testCAs(t)[0]
	v := goodView(t)
	v.Instances = append(v.Instances[:1], instance("i-cp2", "10.0.1.12", userData(t, joiningControlPlane(ca)), false))
	q := &commandQueue{finished: map[string]string{}, codes: map[string]int{}}
	e := &flakyRemoveEtcd{recordingEtcd: recordingEtcd{running: map[string]bool{}}, refusals: 1}
	a := New(func() emulator.View { return v }, newFakeKube(), t.Logf)
	a.CommandsWith(q.list, q.finish)
	a.EtcdWith(e)
	ctx := context.Background()
	a.Sync(ctx)
	script, err := bootstrap.EtcdMemberRemoveScript([]string{"izi-cp2z"})
	if err != nil {
		t.Fatal(err)
	}
	code, out := runUntilFinished(t, a, q, emulator.PendingCommand{InvokeID: "t-remove", InstanceID: "i-cp", Content: script})
	if code != 0 || !strings.Contains(out, "etcd member izi-cp2z: removed") {
		t.Fatalf("removal after one refusal: exit %d, %q; want it removed", code, out)
	}
	if got := memberNames(a.EtcdMembers()); !slices.Equal(got, []string{"izi-cpz"}) {
		t.Errorf("etcd members after the removal: %v, want the first node's alone", got)
	}
}
