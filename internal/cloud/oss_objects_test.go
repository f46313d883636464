package cloud

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

// keysIn is every version's key in the bucket, sorted, one entry a version or delete marker.
func keysIn(ctx context.Context, t *testing.T, c *Client, bucket string) []string {
	t.Helper()
	vs, err := c.ListObjectVersions(ctx, bucket, 0)
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

// PutObject, HeadObject and DeleteObject against the emulator's OSS, in a versioned bucket as the
// provider makes them: a second upload of the same key is fine, and DeleteObject leaves no
// version of the key behind (a plain delete would leave the bytes under a delete marker).
func TestObjectsThroughEmulator(t *testing.T) {
	c, _ := startEmulator(t)
	ctx := testCtx(t)
	const bucket = "bundles-test"
	if err := c.CreateBucket(ctx, BucketInput{Name: bucket}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.HeadObject(ctx, bucket, "a/one.tar.gz"); !IsNotFound(err) {
		t.Fatalf("HeadObject of a missing key: want not found, got %v", err)
	}
	body := []byte("bundle bytes")
	for range 2 {
		if err := c.PutObject(ctx, bucket, "a/one.tar.gz", body, "application/gzip"); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.PutObject(ctx, bucket, "a/two.tar.gz", body, ""); err != nil {
		t.Fatal(err)
	}
	if err := c.PutObject(ctx, bucket, "b/three.tar.gz", body, ""); err != nil {
		t.Fatal(err)
	}
	info, err := c.HeadObject(ctx, bucket, "a/one.tar.gz")
	if err != nil || info.Size != int64(len(body)) || info.ETag == "" || strings.Contains(info.ETag, `"`) {
		t.Fatalf("HeadObject: %+v, %v", info, err)
	}
	if got := keysIn(ctx, t, c, bucket); !slices.Equal(got, []string{"a/one.tar.gz", "a/one.tar.gz", "a/two.tar.gz", "b/three.tar.gz"}) {
		t.Fatalf("versions before the delete: %v", got)
	}
	if err := c.DeleteObject(ctx, bucket, "a/one.tar.gz"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteObject(ctx, bucket, "a/one.tar.gz"); err != nil {
		t.Fatalf("deleting a key that is gone: %v", err)
	}
	if got := keysIn(ctx, t, c, bucket); !slices.Equal(got, []string{"a/two.tar.gz", "b/three.tar.gz"}) {
		t.Fatalf("versions after DeleteObject: %v", got)
	}
	if err := c.DeleteObjectsUnder(ctx, bucket, "a/", nil); err != nil {
		t.Fatal(err)
	}
	if got := keysIn(ctx, t, c, bucket); !slices.Equal(got, []string{"b/three.tar.gz"}) {
		t.Fatalf("versions after DeleteObjectsUnder a/: %v", got)
	}
	if err := c.DeleteObjectsUnder(ctx, bucket, "b/", func(k string) bool { return k != "b/three.tar.gz" }); err != nil {
		t.Fatal(err)
	}
	if got := keysIn(ctx, t, c, bucket); !slices.Equal(got, []string{"b/three.tar.gz"}) {
		t.Fatalf("DeleteObjectsUnder deleted a key its filter kept: %v", got)
	}
	if err := c.PutObject(ctx, "no-such-bucket", "k", body, ""); !IsNotFound(err) || !strings.Contains(err.Error(), "PutObject") {
		t.Fatalf("PutObject to a missing bucket: want a mapped NoSuchBucket, got %v", err)
	}
}

// PutBucketPolicy stores the document OSS reads back, and a malformed one is the service's
// error, mapped.
func TestBucketPolicyThroughEmulator(t *testing.T) {
	c, _ := startEmulator(t)
	ctx := testCtx(t)
	const bucket = "policy-test"
	if err := c.CreateBucket(ctx, BucketInput{Name: bucket}); err != nil {
		t.Fatal(err)
	}
	policy := `{"Version":"1","Statement":[{"Effect":"Allow","Action":["oss:GetObject"],` +
		`"Principal":["arn:sts::1:assumed-role/reader/*"],"Resource":["acs:oss:*:*:` + bucket + `/x/*"]}]}`
	if err := c.PutBucketPolicy(ctx, bucket, policy); err != nil {
		t.Fatal(err)
	}
	var got string
	err := c.OSS(ctx, "GetBucketPolicy", func(ctx context.Context, cl *oss.Client) error {
		res, err := cl.GetBucketPolicy(ctx, &oss.GetBucketPolicyRequest{Bucket: oss.Ptr(bucket)})
		if err == nil {
			got = res.Body
		}
		return err
	})
	if err != nil || got != policy {
		t.Fatalf("policy read back: %q, %v", got, err)
	}
	err = c.PutBucketPolicy(ctx, bucket, `{"Version":"1","Statement":[{"Effect":"Maybe"}]}`)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Action != "PutBucketPolicy" || apiErr.Code == "" {
		t.Fatalf("malformed policy: want the service's error, got %v", err)
	}
}
