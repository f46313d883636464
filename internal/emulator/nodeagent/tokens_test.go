package nodeagent

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// clockedAgent is an agent over a view whose clock (View.Now) the test moves.
type clockedAgent struct {
	a     *Agent
	view  emulator.View
	queue *commandQueue // Cloud Assistant, when the test runs commands
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

// wantJoin wants the node registered (want "") or refused for a reason that holds want.
func wantJoin(t *testing.T, st NodeStatus, want string) {
	t.Helper()
	switch {
	case want == "" && st.Node == "":
		t.Errorf("%s refused: %s", st.InstanceID, st.Reason)
	case want != "" && (st.Node != "" || !strings.Contains(st.Reason, want)):
		t.Errorf("%s: node %q, reason %q; want refused with %q", st.InstanceID, st.Node, st.Reason, want)
	}
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
		t.Run(tc.after.String()+" after init", func(t *testing.T) {
			c := newClockedAgent(t, v)
			if st := c.boot(0, cp); st.Node == "" {
				t.Fatalf("first control-plane node did not register: %s", st.Reason)
			}
			st := c.boot(tc.after, worker)
			wantJoin(t, st, tc.want)
			if strings.Contains(st.Reason, joinToken) {
				t.Errorf("the reason quotes the token's secret: %s", st.Reason)
			}
		})
	}
}

// TestCertificateKeyExpires: the control-plane certificates kubeadm init uploads expire after two
// hours; a control-plane node that joins later finds them only if the first node's timer uploads
// them again (played at the join's round, as the agent plays it every round).
func TestCertificateKeyExpires(t *testing.T) {
	for _, tc := range []struct {
		reupload, after time.Duration
		expired         bool
	}{
		{0, time.Hour, false}, {0, 2 * time.Hour, true}, {0, 25 * time.Hour, true},
		{time.Hour, 25*time.Hour + 59*time.Minute, false}, {3 * time.Hour, 2*time.Hour + time.Minute, true},
	} {
		formed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		c := &cluster{initID: "i-cp", formed: formed, certs: certsState{uploader: CertsUploader{Period: tc.reupload}, uploaded: formed}}
		a := New(func() emulator.View { return emulator.View{} }, newFakeKube(), t.Logf)
		a.cluster, a.registered["i-cp"], a.now = c, "cp", formed.Add(tc.after)
		a.plans["i-cp"] = planEntry{plan: NodePlan{Init: true, CertsUploader: &c.certs.uploader}}
		a.playCertsUploads()
		got := c.certsVerdict(a.now)
		if (got != "") != tc.expired || (tc.expired && !strings.Contains(got, "kubeadm-certs Secret")) {
			t.Errorf("reupload %v, join %v after init: %q; want expired %v", tc.reupload, tc.after, got, tc.expired)
		}
	}
}

// fakeStore is a bucket whose policy lets role cp put b/workers/join-token and role wk get
// b/workers/*, and nothing else, answering as OSS does.
type fakeStore struct{ objects map[string][]byte }

func (s *fakeStore) read(_, role, bucket, key string) ([]byte, error) {
	if role != "wk" || !strings.HasPrefix(key, "b/workers/") {
		return nil, fmt.Errorf("403 AccessDenied")
	}
	b, ok := s.objects[bucket+"/"+key]
	if !ok {
		return nil, fmt.Errorf("404 NoSuchKey")
	}
	return b, nil
}

func (s *fakeStore) write(_, role, bucket, key string, body []byte) error {
	if role != "cp" || key != "b/workers/join-token" {
		return fmt.Errorf("403 AccessDenied")
	}
	s.objects[bucket+"/"+key] = body
	return nil
}

func joinStore(role, tokenKey string, publish ...string) *bootstrap.JoinStore {
	return &bootstrap.JoinStore{ObjectStore: testObjectStore(role), TokenKey: tokenKey, PublishKeys: publish}
}

// testObjectStore is the bucket gc-boot of the join store's and the etcd backup's tests, used by role.
func testObjectStore(role string) bootstrap.ObjectStore {
	return bootstrap.ObjectStore{Region: testRegion, Bucket: "gc-boot", RoleName: role, MetadataEndpoint: "http://100.100.100.200",
		OSSEndpoint: "https://gc-boot.oss-" + testRegion + "-internal.aliyuncs.com"}
}

// TestJoinAWeekLater: with the join store, the control plane's timer keeps a fresh token where the
// workers read it, so a worker that boots 25 hours, or a week, after kubeadm init joins, where
// one with the configured token is refused; without the timer the store is empty and the worker
// says so; a timer whose puts the bucket refuses leaves it empty too.
func TestJoinAWeekLater(t *testing.T) {
	ca := testCAs(t)[0]
	v := goodView(t)
	v.Instances = nil
	cp := firstControlPlane(ca)
	cp.Kubernetes.JoinStore = joinStore("cp", "", "b/workers/join-token")
	w := gpuWorker(ca)
	w.Kubernetes.JoinStore = joinStore("wk", "b/workers/join-token")
	for _, tc := range []struct {
		name       string
		cp, worker bootstrap.Options
		after      time.Duration
		want       string
	}{
		{"stored token, 25h later", cp, w, 25 * time.Hour, ""},
		{"stored token, a week later", cp, w, 7 * 24 * time.Hour, ""},
		{"configured token, 25h later", cp, gpuWorker(ca), 25 * time.Hour, "or it has expired"},
		{"no timer on the control plane", firstControlPlane(ca), w, time.Hour, "404 NoSuchKey"},
		{"timer puts where the bucket refuses", func() bootstrap.Options {
			o := cp
			o.Kubernetes.JoinStore = joinStore("cp", "", "b/other/join-token")
			return o
		}(), w, time.Hour, "404 NoSuchKey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := v
			c := newClockedAgent(t, v)
			store := &fakeStore{objects: map[string][]byte{}}
			c.a.ReadObjectsWith(store.read)
			c.a.WriteObjectsWith(store.write)
			if st := c.boot(0, instance("i-cp", "10.0.1.10", userData(t, tc.cp), false)); st.Node == "" {
				t.Fatalf("first control-plane node did not register: %s", st.Reason)
			}
			// The agent plays the rounds in between, as it polls.
			for elapsed := time.Duration(0); elapsed+time.Hour < tc.after; elapsed += time.Hour {
				c.view.Now = c.view.Now.Add(time.Hour)
				c.a.Sync(context.Background())
			}
			st := c.boot(time.Hour, instance("i-gpu1", "10.0.1.11", userData(t, tc.worker), true))
			wantJoin(t, st, tc.want)
		})
	}
}

// withoutFile is o's user data without the write_files entry at path.
func withoutFile(t *testing.T, o bootstrap.Options, path string) string {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(strings.TrimPrefix(renderDoc(t, o), "#cloud-config\n")), &doc); err != nil {
		t.Fatal(err)
	}
	files, _ := doc["write_files"].([]any)
	kept := files[:0]
	for _, f := range files {
		if m, _ := f.(map[string]any); m["path"] != path {
			kept = append(kept, f)
		}
	}
	if len(kept) == len(files) {
		t.Fatalf("the user data writes no %s", path)
	}
	doc["write_files"] = kept
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(append([]byte("#cloud-config\n"), out...))
}

// TestControlPlaneJoinAfterCertsExpire: a control-plane node that joins three hours after kubeadm
// init finds the certificates while the first node's upload timer keeps uploading them, and is
// refused in kubeadm's terms when that node has no timer (the Secret expired after two hours).
func TestControlPlaneJoinAfterCertsExpire(t *testing.T) {
	ca := testCAs(t)[0]
	v := goodView(t)
	v.Instances = nil
	for _, tc := range []struct {
		name, cpUserData, want string
	}{
		{"upload timer", userData(t, firstControlPlane(ca)), ""},
		{"no upload timer", withoutFile(t, firstControlPlane(ca), "/etc/systemd/system/gpucluster-upload-certs.timer"), "kubeadm-certs Secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClockedAgent(t, v)
			if st := c.boot(0, instance("i-cp", "10.0.1.10", tc.cpUserData, false)); st.Node == "" {
				t.Fatalf("first control-plane node did not register: %s", st.Reason)
			}
			st := c.boot(3*time.Hour, instance("i-cp2", "10.0.1.12", userData(t, joiningControlPlane(ca)), false))
			wantJoin(t, st, tc.want)
		})
	}
}
