package offlinekube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestEtcdMembershipIsEtcds: the members a control plane of three makes, the way kubeadm makes
// them, and what etcd itself then says of the changes: a member stopped leaves a quorum and the
// API answers; a new member is refused while the stopped one stays in the list (the connected
// voting members would be short of a quorum with it); once the stopped one is removed the new
// one joins; the first member can be removed with the API answering through the others; two of
// three stopped leave no quorum until one runs again.
func TestEtcdMembershipIsEtcds(t *testing.T) {
	c := StartT(t, Options{})
	ctx := t.Context()
	c.NameFirstEtcdMember("cp-1")
	for _, name := range []string{"cp-2", "cp-3"} {
		if err := c.JoinEtcdMember(ctx, name); err != nil {
			t.Fatalf("join %s: %v", name, err)
		}
	}
	checkMembers(t, c, "three joined", "cp-1", "cp-2", "cp-3")
	apiWrites(t, c, "three members")

	if err := c.SetEtcdMemberRunning(ctx, "cp-3", false); err != nil {
		t.Fatal(err)
	}
	if err := c.EtcdHealth(ctx); err != nil {
		t.Errorf("one of three members stopped: etcd unhealthy: %v", err)
	}
	apiWrites(t, c, "one of three stopped")
	err := c.JoinEtcdMember(ctx, "cp-4")
	if err == nil || !strings.Contains(err.Error(), "unhealthy cluster") {
		t.Fatalf("a member added while a stopped one stays in the list: %v, want etcd's refusal (unhealthy cluster)", err)
	}
	removeMember(t, c, "cp-3")
	if err := c.JoinEtcdMember(ctx, "cp-4"); err != nil {
		t.Fatalf("join cp-4 once the stopped member is removed: %v", err)
	}
	checkMembers(t, c, "cp-3 replaced", "cp-1", "cp-2", "cp-4")

	// The first member, which the etcd endpoint pointed at, goes: the API server's etcd
	// connection moves to another member.
	removeMember(t, c, "cp-1")
	if err := c.JoinEtcdMember(ctx, "cp-5"); err != nil {
		t.Fatalf("join cp-5: %v", err)
	}
	checkMembers(t, c, "cp-1 replaced", "cp-2", "cp-4", "cp-5")
	apiWrites(t, c, "after the first member went")

	for _, name := range []string{"cp-4", "cp-5"} {
		if err := c.SetEtcdMemberRunning(ctx, name, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.EtcdHealth(ctx); err == nil {
		t.Errorf("two of three members stopped: etcd says it is healthy, want no quorum")
	}
	if err := c.SetEtcdMemberRunning(ctx, "cp-5", true); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "etcd healthy again with two of three members", func(ctx context.Context) (bool, string, error) {
		err := c.EtcdHealth(ctx)
		return err == nil, fmt.Sprint(err), nil
	})
	apiWrites(t, c, "quorum back")
}

// removeMember removes name's member, trying a refusal again as the provider's removal script
// does (bootstrap.EtcdRemoveTries): right after a join etcd refuses to remove a voting member until
// the new member has been connected for its 5 s health interval ("etcdserver: unhealthy cluster").
func removeMember(t *testing.T, c *Cluster, name string) {
	t.Helper()
	var err error
	for try := 1; try <= 15; try++ {
		if err = c.RemoveEtcdMember(t.Context(), name); err == nil || !strings.Contains(err.Error(), "unhealthy cluster") {
			break
		}
		t.Logf("remove %s, try %d: %v", name, try, err)
		time.Sleep(time.Second)
	}
	if err != nil {
		t.Fatalf("remove %s: %v", name, err)
	}
}

// checkMembers fails unless etcd's member list is exactly names, every one a voting member whose
// process runs.
func checkMembers(t *testing.T, c *Cluster, step string, names ...string) {
	t.Helper()
	list, err := c.EtcdMemberList(t.Context())
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	var got []string
	for _, m := range list {
		got = append(got, m.Name)
		if m.Learner || !m.Running {
			t.Errorf("%s: member %+v, want a running voting member", step, m)
		}
	}
	if slices.Sort(got); !slices.Equal(got, names) {
		t.Fatalf("%s: etcd's members are %v, want %v", step, got, names)
	}
}

// apiWrites fails unless the API server stores an object (etcd took the write).
func apiWrites(t *testing.T, c *Cluster, step string) {
	t.Helper()
	name := strings.ReplaceAll(strings.ReplaceAll(step, " ", "-"), "--", "-")
	waitUntil(t, step+": the API server stores a ConfigMap", func(ctx context.Context) (bool, string, error) {
		_, err := c.Client().CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		return err == nil, fmt.Sprint(err), nil
	})
}
