package bundle_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

const (
	nodeRole   = "gpucluster-node"
	bootBucket = "gpucluster-boot"
	bootPrefix = "bundles/"
)

// The real path, end to end against the emulator: the first control-plane node's files, packed
// and uploaded to a bucket whose policy lets the node role read them, are fetched by the stub
// with the instance's own role keys (hardened metadata mode, signature V4 with the security
// token), checked, unpacked with their modes, and the bootstrap unit is started as runcmd
// starts it today. Every way it can go wrong at boot fails with its cause named and no secret
// shown: a role the policy does not name, a digest that is not the object's, an instance without
// a role or with another one; OSS briefly unavailable is waited out.
func TestStubFetchesBundleFromEmulator(t *testing.T) {
	e := newFetchEnv(t)
	doc, caKey := firstControlPlane(t)
	files, err := bundle.FromCloudInit(doc)
	if err != nil {
		t.Fatal(err)
	}
	archive, digest, err := bundle.Pack(files)
	if err != nil {
		t.Fatal(err)
	}
	key := bootPrefix + "cluster-a/cp-first/" + strings.TrimPrefix(digest, "sha256:") + ".tar.gz"
	e.bucket(t, bootBucket, nodeRole, bootPrefix, key, archive)
	spec := bundle.StubSpec{Region: "cn-wulanchabu", Bucket: bootBucket, Key: key, Digest: digest, RoleName: nodeRole}
	node := e.instance(t, nodeRole)
	bundleSecrets := map[string]string{"join token": testToken, "CA key": strings.TrimSpace(caKey)}

	t.Run("allowed role", func(t *testing.T) {
		r := e.boot(t, node, spec)
		if r.err != nil {
			t.Fatalf("stub failed: %v\n%s", r.err, r.stderr)
		}
		wantUnpacked(t, r.root, files)
		if want := "daemon-reload\nenable --now " + bootstrap.BootstrapUnit + "\n"; r.systemctl != want {
			t.Errorf("systemctl calls %q, want %q", r.systemctl, want)
		}
		r.secretsKept(t, e.roleKeys(t, node, nodeRole), bundleSecrets)
	})
	t.Run("role the policy does not name", func(t *testing.T) {
		other := e.instance(t, "someone-else")
		s := spec
		s.RoleName = "someone-else"
		r := e.boot(t, other, s)
		r.failed(t, "HTTP 403 AccessDenied (does the bucket policy let role someone-else read it?)")
		r.secretsKept(t, e.roleKeys(t, other, "someone-else"), bundleSecrets)
	})
	t.Run("digest mismatch", func(t *testing.T) {
		s := spec
		s.Digest = bundle.Digest([]byte("another bundle"))
		r := e.boot(t, node, s)
		r.failed(t, "has digest "+digest+", not "+s.Digest)
		r.secretsKept(t, e.roleKeys(t, node, nodeRole), bundleSecrets)
	})
	t.Run("instance without a role", func(t *testing.T) {
		r := e.boot(t, e.instance(t, ""), spec)
		r.failed(t, "this instance has no RAM role")
		r.secretsKept(t, bundleSecrets)
		if !strings.Contains(r.stderr, "giving up after 2 attempts") {
			t.Errorf("no sign of the retry:\n%s", r.stderr)
		}
	})
	t.Run("instance with another role", func(t *testing.T) {
		r := e.boot(t, e.instance(t, "another-role"), spec)
		r.failed(t, "RAM role is another-role, not "+nodeRole)
		r.secretsKept(t, bundleSecrets)
	})
	t.Run("OSS briefly unavailable", func(t *testing.T) {
		done := e.unavailableOnce()
		r := e.boot(t, node, spec, "GPUCLUSTER_BUNDLE_TRIES=4", "GPUCLUSTER_BUNDLE_DELAY=1")
		<-done
		if r.err != nil {
			t.Fatalf("stub failed: %v\n%s", r.err, r.stderr)
		}
		if !strings.Contains(r.stderr, "attempt 1/4 failed: GET ") || !strings.Contains(r.stderr, "HTTP 503 ServiceUnavailable; again in 1s") {
			t.Errorf("the first attempt's failure is not reported:\n%s", r.stderr)
		}
		wantUnpacked(t, r.root, files)
	})
}

// unavailableOnce makes OSS answer ServiceUnavailable until it has done so once, as a service
// that comes back; the channel closes when the fault is cleared.
func (e *fetchEnv) unavailableOnce() <-chan struct{} {
	e.srv.SetFaults(emulator.Faults{UnavailableRate: 1})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if e.srv.Stats().Errors["ServiceUnavailable"] > 0 {
				break
			}
		}
		e.srv.SetFaults(emulator.Faults{})
	}()
	return done
}

// wantUnpacked checks every file of the bundle is under root with its content and mode.
func wantUnpacked(t *testing.T, root string, files map[string]bundle.File) {
	t.Helper()
	for p, f := range files {
		full := filepath.Join(root, p)
		got, err := os.ReadFile(full)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if !bytes.Equal(got, f.Content) {
			t.Errorf("%s: content differs", p)
		}
		if st, err := os.Stat(full); err != nil || st.Mode().Perm() != f.Mode {
			t.Errorf("%s: mode %v, want %v", p, st.Mode().Perm(), f.Mode)
		}
	}
}
