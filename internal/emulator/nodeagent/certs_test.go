package nodeagent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// sized is o with the control plane's size (bootstrap's conditional certificate upload).
func sized(o bootstrap.Options, size int) bootstrap.Options {
	o.Kubernetes.ControlPlaneSize = size
	return o
}

// clockedControlPlane boots a control plane of three at the view's time: the first node from
// first, the two others from join; with store, the bucket they keep the join token in.
func clockedControlPlane(t *testing.T, first, join bootstrap.Options, store ...*cpStore) *clockedAgent {
	t.Helper()
	return clockedControlPlaneOf(t, userData(t, first), userData(t, join), store...)
}

// clockedControlPlaneOf is clockedControlPlane from the nodes' user data.
func clockedControlPlaneOf(t *testing.T, first, join string, store ...*cpStore) *clockedAgent {
	t.Helper()
	v := goodView(t)
	v.Instances = []emulator.InstanceView{instance("i-cp", "10.0.1.10", first, false),
		instance("i-cp2", "10.0.1.12", join, false), instance("i-cp3", "10.0.1.13", join, false)}
	v.LoadBalancers[0].BackendIDs = []string{"i-cp", "i-cp2", "i-cp3", "i-cp4", "i-cp1b"} // the pools' backend attachments
	c := newClockedAgent(t, v)
	q := &commandQueue{finished: map[string]string{}, codes: map[string]int{}}
	c.a.CommandsWith(q.list, q.finish)
	c.queue = q
	for _, s := range store {
		c.a.ReadObjectsWith(s.read)
		c.a.WriteObjectsWith(s.write)
	}
	c.a.Sync(context.Background())
	for _, id := range []string{"i-cp", "i-cp2", "i-cp3"} {
		if st := statusOf(c.a, id); st.Node == "" {
			t.Fatalf("%s did not register: %s", id, st.Reason)
		}
	}
	return c
}

// at moves the clock by d and plays a round.
func (c *clockedAgent) at(d time.Duration) {
	c.view.Now = c.view.Now.Add(d)
	c.a.Sync(context.Background())
}

// release removes the instance and its etcd member (the provider's removal script, run on
// i-cp2), so a replacement's join is judged on the certificates and its token.
func (c *clockedAgent) release(t *testing.T, id, member string) {
	t.Helper()
	c.view.Instances = slices.DeleteFunc(c.view.Instances, func(in emulator.InstanceView) bool { return in.ID == id })
	c.a.Sync(context.Background())
	script, err := bootstrap.EtcdMemberRemoveScript([]string{member})
	if err != nil {
		t.Fatal(err)
	}
	c.queue.pending = []emulator.PendingCommand{{InvokeID: "t-remove-" + id, InstanceID: "i-cp2", Content: script}}
	c.a.Sync(context.Background())
	if c.queue.codes["t-remove-"+id] != 0 {
		t.Fatalf("etcd member removal: %q", c.queue.finished["t-remove-"+id])
	}
}

// TestCertsOnlyWhileControlPlaneJoinPending: with the control plane's size, the upload timer's
// first run after the control plane is full deletes the kubeadm-certs Secret, and the agent
// reports the certificates as not uploaded; a control-plane node released, its replacement is
// refused until the timer's next run, which uploads them, and joins then; the control plane
// full again, they are gone again. The old timer without a size uploads them for good.
func TestCertsOnlyWhileControlPlaneJoinPending(t *testing.T) {
	ca := testCAs(t)[0]
	t.Run("hourly for good without control_plane_size", func(t *testing.T) {
		c := clockedControlPlane(t, firstControlPlane(ca), joiningControlPlane(ca))
		c.at(3 * time.Hour)
		if got := c.a.CertsVerdict(); got != "" {
			t.Fatalf("the hourly timer's upload is gone: %s", got)
		}
	})
	c := clockedControlPlane(t, sized(firstControlPlane(ca), 3), sized(joiningControlPlane(ca), 3))
	if got := c.a.CertsVerdict(); got != "" {
		t.Fatalf("right after kubeadm init --upload-certs the certificates are not available: %s", got)
	}
	c.at(time.Hour) // the timer's first run: three of three Ready
	if got := c.a.CertsVerdict(); !strings.Contains(got, "no kubeadm-certs Secret") || !strings.Contains(got, "3 of 3 control-plane nodes Ready") {
		t.Fatalf("full control plane: certificates %q; want not uploaded, the control plane full", got)
	}

	c.at(20 * time.Minute)
	c.release(t, "i-cp3", "izi-cp3z")
	c.view.Instances = append(c.view.Instances, instance("i-cp4", "10.0.1.14", userData(t, sized(joiningControlPlane(ca), 3)), false))
	c.a.Sync(context.Background())
	if st := statusOf(c.a, "i-cp4"); st.Node != "" || !strings.Contains(st.Reason, "no kubeadm-certs Secret") {
		t.Fatalf("replacement before the timer's next run: node %q, reason %q; want refused, no certificates", st.Node, st.Reason)
	}
	c.at(40 * time.Minute) // the timer's second run: two of three Ready, a join pending
	if st := statusOf(c.a, "i-cp4"); st.Node == "" {
		t.Fatalf("replacement after the timer's next run did not join: %s", st.Reason)
	}
	c.at(time.Hour)
	if got := c.a.CertsVerdict(); !strings.Contains(got, "no kubeadm-certs Secret") {
		t.Fatalf("full again: certificates %q; want deleted", got)
	}
}

// cpStore is a bucket whose policy lets role cp put and get b/control-plane/join-token, and
// nothing else, answering as OSS does.
type cpStore struct{ objects map[string][]byte }

const cpTokenKey = "b/control-plane/join-token"

func (s *cpStore) read(_, role, bucket, key string) ([]byte, error) {
	if role != "cp" || key != cpTokenKey {
		return nil, fmt.Errorf("403 AccessDenied")
	}
	if b, ok := s.objects[bucket+"/"+key]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("404 NoSuchKey")
}

func (s *cpStore) write(_, role, bucket, key string, body []byte) error {
	if role != "cp" || key != cpTokenKey {
		return fmt.Errorf("403 AccessDenied")
	}
	s.objects[bucket+"/"+key] = body
	return nil
}

// TestReplacedFirstNodeJoinsWithStoredToken: the first control-plane node released 25 hours
// after kubeadm init, its replacement (the same user data: the replacement join of
// kubeadm-join.yaml) joins with the token the control plane stored; with the configured token,
// expired since the 24th hour, it is refused in kubeadm's words.
func TestReplacedFirstNodeJoinsWithStoredToken(t *testing.T) {
	ca := testCAs(t)[0]
	stored := func(o bootstrap.Options) bootstrap.Options {
		o = sized(o, 3)
		o.Kubernetes.JoinStore = joinStore("cp", cpTokenKey, cpTokenKey)
		return o
	}
	configured := func(o bootstrap.Options) bootstrap.Options {
		o = stored(o)
		o.Kubernetes.JoinStore.TokenKey = ""
		return o
	}
	for _, tc := range []struct {
		name  string
		first bootstrap.Options
		want  string
	}{
		{"stored token", stored(firstControlPlane(ca)), ""},
		{"configured token", configured(firstControlPlane(ca)), "or it has expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := clockedControlPlane(t, tc.first, stored(joiningControlPlane(ca)), &cpStore{objects: map[string][]byte{}})
			for range 24 {
				c.at(time.Hour)
			}
			c.at(30 * time.Minute)
			c.release(t, "i-cp", "izi-cpz")
			c.view.Now = c.view.Now.Add(30 * time.Minute) // 25 h after init: the upload timer's run
			st := c.boot(0, instance("i-cp1b", "10.0.1.15", userData(t, tc.first), false))
			wantJoin(t, st, tc.want)
		})
	}
}
