package upload_test

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle/upload"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
)

const (
	testToken = "abcdef.0123456789abcdef"
	bucket    = "pool-bundles"
	prefix    = "gpucluster-bundles/gpu"
)

// worker renders a GPU worker's document joining with token.
func worker(t *testing.T, label string) string {
	t.Helper()
	doc, err := bootstrap.Render(bootstrap.Options{Role: bootstrap.RoleGPUWorker, Region: cloudtest.Region, Kubernetes: bootstrap.Kubernetes{
		APIEndpoint: "10.0.0.10:6443", JoinToken: testToken, CACertHash: "sha256:" + strings.Repeat("ab", 32),
		Labels: map[string]string{"pool": label}, ImageRegistry: "registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster"}})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

var loc = upload.Location{Region: cloudtest.Region, Bucket: bucket, Prefix: prefix, RoleName: "gpucluster-worker"}

// Prepare names the object by the digest, and the stub names the object, the digest and the
// role and nothing of the bundle: no join token in the user data. The same document gives the
// same key and stub; another gives another key, so a pool's stub changes with its files.
func TestPrepare(t *testing.T) {
	doc := worker(t, "a")
	p, err := upload.Prepare(doc, loc)
	if err != nil {
		t.Fatal(err)
	}
	if want := prefix + "/" + strings.TrimPrefix(p.Digest, bundle.DigestPrefix) + ".tar.gz"; p.Key != want || bundle.Digest(p.Archive) != p.Digest {
		t.Fatalf("key %s, digest %s: want %s and the archive's digest", p.Key, p.Digest, want)
	}
	if len(p.Stub) > bundle.MaxStubBytes {
		t.Errorf("stub is %d bytes", len(p.Stub))
	}
	for _, want := range []string{p.Key, p.Digest, loc.RoleName, loc.Bucket, bundle.FetchScriptPath} {
		if !strings.Contains(p.Stub, want) {
			t.Errorf("stub does not name %q", want)
		}
	}
	if strings.Contains(p.Stub, testToken) || strings.Contains(p.Stub, base64.StdEncoding.EncodeToString([]byte(testToken))) {
		t.Error("the stub carries the join token")
	}
	files, err := bundle.Unpack(p.Archive, p.Digest)
	if err != nil || !strings.Contains(string(files[bootstrap.KubeadmPath].Content), testToken) {
		t.Fatalf("the bundle does not carry the kubeadm configuration with the token: %v", err)
	}
	again, err := upload.Prepare(doc, loc)
	if err != nil || again.Key != p.Key || again.Stub != p.Stub {
		t.Fatalf("the same document gave another key or stub: %v", err)
	}
	other, err := upload.Prepare(worker(t, "b"), loc)
	if err != nil || other.Key == p.Key || other.Stub == p.Stub {
		t.Fatalf("another document gave the same key %s: %v", other.Key, err)
	}
	if _, err := upload.Prepare("#!/bin/sh\necho hi\n", loc); err == nil {
		t.Error("a document FromCloudInit refuses was prepared")
	}
	bad := loc
	bad.RoleName = "role with spaces"
	if _, err := upload.Prepare(doc, bad); err == nil || !strings.Contains(err.Error(), "role name") {
		t.Errorf("a bad role name was taken: %v", err)
	}
}

// Upload puts the bundle once (a second apply adds no version), Prune keeps only the current
// bundle, Prune with no key empties the pool's prefix and leaves other pools' keys alone.
func TestUploadAndPrune(t *testing.T) {
	c := cloudtest.Start(t, 1)
	ctx := cloudtest.Context(t)
	if err := c.Client.CreateBucket(ctx, cloud.BucketInput{Name: bucket}); err != nil {
		t.Fatal(err)
	}
	versions := func() []string {
		t.Helper()
		vs, err := c.Client.ListObjectVersions(ctx, bucket, 0)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, v := range vs {
			keys = append(keys, v.Key)
		}
		slices.Sort(keys)
		return keys
	}
	old, err := upload.Prepare(worker(t, "a"), loc)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := upload.Prepare(worker(t, "b"), loc)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []upload.Prepared{old, cur, cur} {
		if err := upload.Upload(ctx, c.Client, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Client.PutObject(ctx, bucket, prefix+"-other/x.tar.gz", []byte("x"), ""); err != nil {
		t.Fatal(err)
	}
	if got, want := versions(), sorted(old.Key, cur.Key, prefix+"-other/x.tar.gz"); !slices.Equal(got, want) {
		t.Fatalf("after uploads: %v, want %v (one version each)", got, want)
	}
	if err := c.Client.PutObject(ctx, bucket, cur.Key, []byte("not the bundle"), ""); err != nil {
		t.Fatal(err)
	}
	if err := upload.Upload(ctx, c.Client, cur); err != nil {
		t.Fatal(err)
	}
	info, err := c.Client.HeadObject(ctx, bucket, cur.Key)
	if err != nil || info.Size != int64(len(cur.Archive)) {
		t.Fatalf("other bytes at the key were not replaced by the bundle: %+v %v", info, err)
	}
	// A node made before the change still names the old bundle (its user data packed, as ECS
	// holds it): it stays until no node does.
	nodes := []string{bootstrap.PackUserData(old.Stub)}
	inUse := func(context.Context) ([]string, error) { return nodes, nil }
	if err := upload.Prune(ctx, c.Client, bucket, prefix, cur.Key, inUse); err != nil {
		t.Fatal(err)
	}
	if got, want := versions(), sorted(old.Key, cur.Key, cur.Key, cur.Key, prefix+"-other/x.tar.gz"); !slices.Equal(got, want) {
		t.Fatalf("after Prune with a node on the old bundle: %v, want %v", got, want)
	}
	nodes = []string{cur.Stub}
	if err := upload.Prune(ctx, c.Client, bucket, prefix, cur.Key, inUse); err != nil {
		t.Fatal(err)
	}
	if got, want := versions(), sorted(cur.Key, cur.Key, cur.Key, prefix+"-other/x.tar.gz"); !slices.Equal(got, want) {
		t.Fatalf("after Prune: %v, want %v", got, want)
	}
	if err := upload.Prune(ctx, c.Client, bucket, prefix, "", nil); err != nil {
		t.Fatal(err)
	}
	if got, want := versions(), []string{prefix + "-other/x.tar.gz"}; !slices.Equal(got, want) {
		t.Fatalf("after the pool's delete: %v, want %v", got, want)
	}
}

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}
