package nodeagent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// clockedAgent is an agent over a view whose clock (View.Now) the test moves.
type clockedAgent struct {
	a    *Agent
	view emulator.View
}

func newClockedAgent(t *testing.T, v emulator.View) *clockedAgent {
	c := &clockedAgent{view: v}
	c.view.Now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.a = New(func() emulator.View { return c.view }, newFakeKube(), t.Logf)
	return c
}

// boot adds an instance at the view's time plus after and plays a round; it answers its status.
func (c *clockedAgent) boot(after time.Duration, in emulator.InstanceView) NodeStatus {
	c.view.Now = c.view.Now.Add(after)
	c.view.Instances = append(c.view.Instances, in)
	c.a.Sync(context.Background())
	for _, st := range c.a.Statuses() {
		if st.InstanceID == in.ID {
			return st
		}
	}
	return NodeStatus{}
}

// TestJoinTokenExpires: the configured token's ttl is kubeadm's 24 hours, so a worker that boots
// 25 hours after kubeadm init is refused in kubeadm's words, and one that boots within the day
// joins.
func TestJoinTokenExpires(t *testing.T) {
	v := goodView(t)
	cp, worker := v.Instances[0], v.Instances[1]
	v.Instances = nil
	for _, tc := range []struct {
		after time.Duration
		want  string
	}{{23 * time.Hour, ""}, {25 * time.Hour, `token id "abcdef" is invalid for this cluster or it has expired`}} {
		c := newClockedAgent(t, v)
		if st := c.boot(0, cp); st.Node == "" {
			t.Fatalf("first control-plane node did not register: %s", st.Reason)
		}
		st := c.boot(tc.after, worker)
		switch {
		case tc.want == "" && st.Node == "":
			t.Errorf("worker %v after init: refused: %s", tc.after, st.Reason)
		case tc.want != "" && (st.Node != "" || !strings.Contains(st.Reason, tc.want)):
			t.Errorf("worker %v after init: node %q, reason %q; want refused with %q", tc.after, st.Node, st.Reason, tc.want)
		}
		if strings.Contains(st.Reason, joinToken) {
			t.Errorf("the reason quotes the token's secret: %s", st.Reason)
		}
	}
}

// TestCertificateKeyExpires: the control-plane certificates kubeadm init uploads expire after two
// hours; a control-plane node that joins later finds them only if the first node uploads them
// again.
func TestCertificateKeyExpires(t *testing.T) {
	c := &cluster{initID: "i-cp", formed: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, tc := range []struct {
		reupload, after time.Duration
		expired         bool
	}{
		{0, time.Hour, false}, {0, 2 * time.Hour, true}, {0, 25 * time.Hour, true},
		{time.Hour, 25*time.Hour + 59*time.Minute, false}, {3 * time.Hour, 2*time.Hour + time.Minute, true},
	} {
		c.reupload = tc.reupload
		got := c.certsVerdict(c.formed.Add(tc.after))
		if (got != "") != tc.expired || (tc.expired && !strings.Contains(got, "kubeadm-certs Secret")) {
			t.Errorf("reupload %v, join %v after init: %q; want expired %v", tc.reupload, tc.after, got, tc.expired)
		}
	}
}
