package nodeagent

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// commandQueue stands for the emulator's Cloud Assistant: the commands sent, and their outcomes.
type commandQueue struct {
	pending  []emulator.PendingCommand
	finished map[string]string // invoke id -> "exit code|output"
	codes    map[string]int
}

func (q *commandQueue) list() []emulator.PendingCommand { return slices.Clone(q.pending) }
func (q *commandQueue) finish(invokeID, _ string, code int, out string) {
	q.pending = slices.DeleteFunc(q.pending, func(p emulator.PendingCommand) bool { return p.InvokeID == invokeID })
	q.finished[invokeID], q.codes[invokeID] = out, code
}

func memberNames(ms []EtcdMember) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

// TestEtcdMemberOfReplacedControlPlaneNode: a control plane of three, one node released and a
// replacement started. While the released node's member stays, etcd refuses the replacement's
// member and its kubeadm join fails; once the removal script has run on a running control-plane
// node, the replacement joins and etcd lists exactly the live control-plane nodes.
func TestEtcdMemberOfReplacedControlPlaneNode(t *testing.T) {
	ca := testCAs(t)[0]
	v := goodView(t)
	v.Instances = v.Instances[:1] // the first control-plane node alone
	for _, id := range []string{"i-cp2", "i-cp3"} {
		v.Instances = append(v.Instances, instance(id, "10.0.1."+map[string]string{"i-cp2": "12", "i-cp3": "13"}[id], userData(t, joiningControlPlane(ca)), false))
	}
	q := &commandQueue{finished: map[string]string{}, codes: map[string]int{}}
	a := New(func() emulator.View { return v }, newFakeKube(), t.Logf)
	a.CommandsWith(q.list, q.finish)
	ctx := context.Background()
	a.Sync(ctx)
	if got := memberNames(a.EtcdMembers()); !slices.Equal(got, []string{"izi-cpz", "izi-cp2z", "izi-cp3z"}) {
		t.Fatalf("etcd members after forming: %v, want the three control-plane nodes", got)
	}

	// i-cp3 is released and i-cp4 replaces it.
	v.Instances = slices.DeleteFunc(v.Instances, func(in emulator.InstanceView) bool { return in.ID == "i-cp3" })
	v.Instances = append(v.Instances, instance("i-cp4", "10.0.1.14", userData(t, joiningControlPlane(ca)), false))
	a.Sync(ctx)
	st := statusOf(a, "i-cp4")
	if st.Node != "" || !strings.Contains(st.Reason, "etcdserver: unhealthy cluster") || !strings.Contains(st.Reason, "izi-cp3z (instance i-cp3, released)") {
		t.Fatalf("replacement joined, or for another reason, while the released node's member stays: node %q, reason %q", st.Node, st.Reason)
	}
	members := a.EtcdMembers()
	if i := slices.IndexFunc(members, func(m EtcdMember) bool { return m.Name == "izi-cp3z" }); i < 0 || members[i].Connected {
		t.Fatalf("etcd members %+v: want izi-cp3z listed and not connected", members)
	}

	// The script on a worker finds no etcd; with a certificate kubeadm does not write it fails;
	// the provider's script on a running control-plane node removes the member.
	script, err := bootstrap.EtcdMemberRemoveScript([]string{"izi-cp3z"})
	if err != nil {
		t.Fatal(err)
	}
	v.Instances = append(v.Instances, instance("i-gpu1", "10.0.1.11", userData(t, gpuWorker(ca)), true))
	q.pending = []emulator.PendingCommand{
		{InvokeID: "t-worker", InstanceID: "i-gpu1", Content: script},
		{InvokeID: "t-badcert", InstanceID: "i-cp", Content: strings.ReplaceAll(script, "healthcheck-client", "etcdctl-client")},
	}
	a.Sync(ctx)
	if q.codes["t-worker"] == 0 || q.codes["t-badcert"] == 0 {
		t.Fatalf("removal on a worker or with a missing certificate succeeded: %v %q", q.codes, q.finished)
	}
	if got := memberNames(a.EtcdMembers()); len(got) != 3 {
		t.Fatalf("a failed removal changed the members: %v", got)
	}
	q.pending = []emulator.PendingCommand{{InvokeID: "t-remove", InstanceID: "i-cp2", Content: script}}
	a.Sync(ctx)
	if q.codes["t-remove"] != 0 || !strings.Contains(q.finished["t-remove"], "etcd member izi-cp3z: removed") {
		t.Fatalf("removal: exit %d, output %q", q.codes["t-remove"], q.finished["t-remove"])
	}
	a.Sync(ctx)
	if st := statusOf(a, "i-cp4"); st.Node == "" {
		t.Fatalf("replacement did not join once the stale member was removed: %s", st.Reason)
	}
	got := a.EtcdMembers()
	if names := memberNames(got); !slices.Equal(names, []string{"izi-cpz", "izi-cp2z", "izi-cp4z"}) {
		t.Fatalf("etcd members after the replacement: %v, want exactly the live control-plane nodes", names)
	}
	for _, m := range got {
		if !m.Connected {
			t.Errorf("member %s not connected", m.Name)
		}
	}
}

// TestEtcdUnknownCommandLeftRunning: the agent runs only the scripts it models; any other stays
// with Cloud Assistant until its timeout, as on an instance whose client never answers.
func TestEtcdUnknownCommandLeftRunning(t *testing.T) {
	v := goodView(t)
	q := &commandQueue{finished: map[string]string{}, codes: map[string]int{}, pending: []emulator.PendingCommand{{InvokeID: "t-1", InstanceID: "i-cp", Content: "echo hello"}}}
	a := New(func() emulator.View { return v }, newFakeKube(), t.Logf)
	a.CommandsWith(q.list, q.finish)
	a.Sync(context.Background())
	if _, done := q.finished["t-1"]; done || len(q.pending) != 1 {
		t.Fatalf("an unmodeled command was finished: %q", q.finished)
	}
}
