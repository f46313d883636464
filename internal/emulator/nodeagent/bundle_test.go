package nodeagent

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

const bundleBucket = "cluster-bundles"

// fakeOSS answers objects by role, bucket and key: what a bucket policy lets each role read.
type fakeOSS map[string][]byte

func (f fakeOSS) read(_, role, bucket, key string) ([]byte, error) {
	b, ok := f[role+" "+bucket+"/"+key]
	if !ok {
		return nil, errors.New("403 AccessDenied: you have no right to access this resource because of bucket policy")
	}
	return b, nil
}

// bundled is o's bundle and the user data of its stub (Base64, as RunInstances takes it), with
// the user's extra part merged after the stub when given.
func bundled(t *testing.T, o bootstrap.Options, role string, extra ...string) (ud, key string, archive []byte) {
	t.Helper()
	files, err := bundle.FromCloudInit(renderDoc(t, o))
	if err != nil {
		t.Fatal(err)
	}
	archive, digest, err := bundle.Pack(files)
	if err != nil {
		t.Fatal(err)
	}
	key = "bundles/" + strings.TrimPrefix(digest, bundle.DigestPrefix) + ".tar.gz"
	stub, err := bundle.Stub(bundle.StubSpec{Region: testRegion, Bucket: bundleBucket, Key: key, Digest: digest, RoleName: role})
	if err != nil {
		t.Fatal(err)
	}
	if len(extra) > 0 {
		if stub, err = bootstrap.Merge(stub, extra[0]); err != nil {
			t.Fatal(err)
		}
	}
	return base64.StdEncoding.EncodeToString([]byte(stub)), key, archive
}

// bundleView is goodView with both nodes' user data stubs of their bundles, each node with its
// pool's role, and an OSS where each role reads its own pool's bundle.
func bundleView(t *testing.T) (emulator.View, fakeOSS) {
	v := goodView(t)
	ca := testCAs(t)[0]
	oss := fakeOSS{}
	for id, o := range map[string]bootstrap.Options{"i-cp": firstControlPlane(ca), "i-gpu1": gpuWorker(ca)} {
		role := "role-" + id
		var extra []string
		if id == "i-gpu1" {
			extra = []string{"#cloud-config\nruncmd:\n  - echo the user's own\n"}
		}
		ud, key, archive := bundled(t, o, role, extra...)
		in := instanceByID(t, &v, id)
		in.UserData, in.RamRole = ud, role
		oss[role+" "+bundleBucket+"/"+key] = archive
	}
	return v, oss
}

func syncBundles(t *testing.T, v emulator.View, read ObjectReader) (map[string]NodeStatus, map[string]string, *fakeKube) {
	t.Helper()
	kube := newFakeKube()
	a := New(func() emulator.View { return v }, kube, t.Logf)
	if read != nil {
		a.ReadObjectsWith(read)
	}
	consoles := map[string]string{}
	a.WriteConsoles(func(id, out string) { consoles[id] = out })
	a.Sync(context.Background())
	got := map[string]NodeStatus{}
	for _, st := range a.Statuses() {
		got[st.InstanceID] = st
	}
	return got, consoles, kube
}

// Nodes whose user data is a stub register from their bundles as they do from write_files: the
// same names, roles and joined consoles as goodView's.
func TestBundleNodesRegister(t *testing.T) {
	want := syncOnce(t, goodView(t), newFakeKube())
	v, oss := bundleView(t)
	got, consoles, kube := syncBundles(t, v, oss.read)
	for _, id := range []string{"i-cp", "i-gpu1"} {
		if got[id].Node == "" || got[id].Node != want[id].Node || got[id].Role != want[id].Role || got[id].Reason != "" {
			t.Errorf("%s: %+v, want it registered as %+v", id, got[id], want[id])
		}
		mustContain(t, id+" console", consoles[id], bootstrap.ConsolePrefix+bootstrap.StateJoined)
	}
	if len(kube.nodes) != 2 || len(kube.applied) != 1 {
		t.Errorf("registered %d nodes and applied add-ons %d times, want 2 and 1", len(kube.nodes), len(kube.applied))
	}
}

// A node whose fetch fails does not register, and its status and console say why, in the
// fetch script's words.
func TestBundleFetchFailures(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(v *emulator.View, oss fakeOSS)
		reader bool
		want   string
	}{
		"no role":         {func(v *emulator.View, _ fakeOSS) { v.Instances[1].RamRole = "" }, true, "this instance has no RAM role"},
		"another role":    {func(v *emulator.View, _ fakeOSS) { v.Instances[1].RamRole = "role-i-cp" }, true, "this instance's RAM role is role-i-cp, not role-i-gpu1"},
		"policy denies":   {func(_ *emulator.View, oss fakeOSS) { clear(oss) }, true, "403 AccessDenied"},
		"another region":  {func(v *emulator.View, _ fakeOSS) { v.Instances[1].Region = "cn-beijing" }, true, "internal endpoint of " + testRegion + " does not answer an instance in cn-beijing"},
		"no OSS played":   {func(*emulator.View, fakeOSS) {}, false, "plays no OSS"},
		"digest mismatch": {func(_ *emulator.View, oss fakeOSS) { tamper(oss, "role-i-gpu1") }, true, "not the expected"},
	} {
		t.Run(name, func(t *testing.T) {
			v, oss := bundleView(t)
			tc.change(&v, oss)
			var read ObjectReader
			if tc.reader {
				read = oss.read
			}
			got, consoles, kube := syncBundles(t, v, read)
			st := got["i-gpu1"]
			if st.Node != "" || !strings.Contains(st.Reason, tc.want) || !strings.HasPrefix(st.Reason, "bootstrap bundle: ") {
				t.Fatalf("i-gpu1: %+v, want it refused for %q", st, tc.want)
			}
			mustContain(t, "i-gpu1 console", consoles["i-gpu1"], "gpucluster-bundle: giving up after 10 attempts: ")
			mustContain(t, "i-gpu1 console", consoles["i-gpu1"], tc.want)
			for name := range kube.nodes {
				if strings.Contains(name, "gpu1") {
					t.Errorf("node %s registered", name)
				}
			}
		})
	}
}

// tamper changes a byte of role's bundles.
func tamper(oss fakeOSS, role string) {
	for k, b := range oss {
		if strings.HasPrefix(k, role+" ") {
			b = append([]byte(nil), b...)
			b[len(b)/2] ^= 1
			oss[k] = b
		}
	}
}

// A failed fetch is played again next round: once the bucket lets the role read its bundle, the
// node registers.
func TestBundleFetchRetried(t *testing.T) {
	v, oss := bundleView(t)
	saved := map[string][]byte{}
	for k, b := range oss {
		if strings.HasPrefix(k, "role-i-gpu1 ") {
			saved[k] = b
			delete(oss, k)
		}
	}
	a := New(func() emulator.View { return v }, newFakeKube(), t.Logf)
	a.ReadObjectsWith(oss.read)
	a.Sync(context.Background())
	if st := statusOf(a, "i-gpu1"); st.Node != "" || !strings.Contains(st.Reason, "AccessDenied") {
		t.Fatalf("before the policy allows it: %+v", st)
	}
	for k, b := range saved {
		oss[k] = b
	}
	a.Sync(context.Background())
	if st := statusOf(a, "i-gpu1"); st.Node == "" || st.Reason != "" {
		t.Fatalf("after the policy allows it: %+v", st)
	}
}

func statusOf(a *Agent, id string) NodeStatus {
	for _, st := range a.Statuses() {
		if st.InstanceID == id {
			return st
		}
	}
	return NodeStatus{}
}
