package emulator

import (
	"errors"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/oss"
)

// ReadObjectAsInstance answers what the instance's own signed GetObject gets
// (TestInstanceRoleReadsWhatTheBucketPolicyAllows): the bundle its role may read, AccessDenied
// elsewhere, NoSuchKey for a key that is not there, and no keys at all for an instance without
// the role.
func TestReadObjectAsInstance(t *testing.T) {
	e, node, bare := newRoleEnv(t)
	policyBuckets(t, e)
	body, err := e.s.ReadObjectAsInstance(node, "gpucluster-node", "boot", "bootstrap/bundle.tar.gz")
	if err != nil || string(body) != "bootstrap/bundle.tar.gz" {
		t.Fatalf("the role's bundle: %q, %v", body, err)
	}
	for _, c := range []struct{ bucket, key, code string }{
		{"boot", "admin/kubeconfig", "AccessDenied"},
		{"other-team", "bootstrap/bundle.tar.gz", "AccessDenied"},
		{"boot", "bootstrap/missing.tar.gz", "NoSuchKey"},
		{"no-such-bucket", "bootstrap/bundle.tar.gz", "NoSuchBucket"},
	} {
		_, err := e.s.ReadObjectAsInstance(node, "gpucluster-node", c.bucket, c.key)
		var oe *oss.ObjectError
		if !errors.As(err, &oe) || oe.Code != c.code {
			t.Errorf("%s/%s: %v, want %s", c.bucket, c.key, err, c.code)
		}
	}
	for _, c := range []struct{ instance, role string }{{bare, "gpucluster-node"}, {node, "someone-else"}} {
		if _, err := e.s.ReadObjectAsInstance(c.instance, c.role, "boot", "bootstrap/bundle.tar.gz"); !errors.Is(err, ErrNoRoleKeys) {
			t.Errorf("%s as %s: %v, want ErrNoRoleKeys", c.instance, c.role, err)
		}
	}
}
