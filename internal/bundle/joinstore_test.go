package bundle_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle/bucket"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// object runs the fetch script's get or put of one object on instance as role, with stdin for a
// put; it answers stdout, stderr and the error.
func (e *fetchEnv) object(t *testing.T, instance, mode, bucketName, key, role, stdin string) (string, string, error) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "fetch.sh")
	writeExec(t, script, bundle.StubScript())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, mode, e.url+emulator.MetadataPath+"/"+instance, e.url+"/"+bucketName, cloudtest.Region, bucketName, key, role)
	cmd.Env = append(cmd.Environ(), "TMPDIR="+dir, "GPUCLUSTER_BUNDLE_TRIES=1", "GPUCLUSTER_BUNDLE_DELAY=0")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// TestJoinStoreObjects: with the policy Policy writes, the control-plane role's node puts the
// join token where the workers' role reads it (the put asks for KMS encryption), and no other
// grant follows: the workers' role cannot write it, the control-plane role can write no other
// key, and another pool's role cannot read it. The token travels on stdin and stdout, never on a
// command line or in the script's messages.
func TestJoinStoreObjects(t *testing.T) {
	e := newFetchEnv(t)
	ctx := cloudtest.Context(t)
	const name, token = "gc-join", "abcdef.0123456789abcdef"
	tokenKey := "gpucluster-bundles/c/workers/join-token"
	if _, err := e.oss.PutBucket(ctx, &oss.PutBucketRequest{Bucket: oss.Ptr(name)}); err != nil {
		t.Fatal(err)
	}
	policy := bucket.Policy(name, core.AccountID,
		[]bucket.Reader{{KeyPrefix: "gpucluster-bundles/c/workers", RoleName: "wk"}, {KeyPrefix: "gpucluster-bundles/c/control-plane", RoleName: "cp"}},
		[]bucket.Writer{{Key: tokenKey, RoleName: "cp"}})
	if _, err := e.oss.PutBucketPolicy(ctx, &oss.PutBucketPolicyRequest{Bucket: oss.Ptr(name), Body: strings.NewReader(policy)}); err != nil {
		t.Fatal(err)
	}
	cp, wk, other := e.instance(t, "cp"), e.instance(t, "wk"), e.instance(t, "other")
	if _, stderr, err := e.object(t, cp, "put", name, tokenKey, "cp", token); err != nil {
		t.Fatalf("control-plane role's put: %v\n%s", err, stderr)
	}
	got, stderr, err := e.object(t, wk, "get", name, tokenKey, "wk", "")
	if err != nil || got != token {
		t.Fatalf("workers' role's get: %v, %d bytes (want the token)\n%s", err, len(got), stderr)
	}
	// The bucket has no default encryption: the put itself asks for KMS.
	if h, err := e.oss.HeadObject(ctx, &oss.HeadObjectRequest{Bucket: oss.Ptr(name), Key: oss.Ptr(tokenKey)}); err != nil {
		t.Errorf("HeadObject of the stored token: %v", err)
	} else if sse := oss.ToString(h.ServerSideEncryption); sse != "KMS" {
		t.Errorf("the stored token's encryption is %q; want KMS, asked for by the put", sse)
	}
	for _, c := range []struct{ what, instance, mode, key, role, want string }{
		{"workers' role writes the token", wk, "put", tokenKey, "wk", "HTTP 403 AccessDenied"},
		{"control-plane role writes another key", cp, "put", "gpucluster-bundles/c/workers/a10/x.tar.gz", "cp", "HTTP 403 AccessDenied"},
		{"another role reads the token", other, "get", tokenKey, "other", "HTTP 403 AccessDenied"},
	} {
		_, stderr, err := e.object(t, c.instance, c.mode, name, c.key, c.role, "zzzzzz.0123456789abcdef")
		if err == nil || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: %v, want a failure naming %q:\n%s", c.what, err, c.want, stderr)
		}
		if strings.Contains(stderr, token) {
			t.Errorf("%s: the token is in the script's messages", c.what)
		}
	}
}
