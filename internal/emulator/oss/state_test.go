package oss_test

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

func TestStateRoundTrip(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	_, err := c.PutBucket(e.ctx, &oss.PutBucketRequest{Bucket: oss.Ptr("persisted"), Acl: oss.BucketACLPublicRead,
		CreateBucketConfiguration: &oss.CreateBucketConfiguration{StorageClass: oss.StorageClassArchive}})
	mustOK(t, err)
	bucket := oss.Ptr("persisted")
	_, err = c.PutBucketLifecycle(e.ctx, &oss.PutBucketLifecycleRequest{Bucket: bucket,
		LifecycleConfiguration: &oss.LifecycleConfiguration{Rules: []oss.LifecycleRule{{
			ID: oss.Ptr("r"), Status: oss.Ptr("Enabled"), Prefix: oss.Ptr("x/"),
			Transitions: []oss.LifecycleRuleTransition{transition(oss.StorageClassColdArchive, 200)},
		}}}})
	mustOK(t, err)
	_, err = c.PutBucketEncryption(e.ctx, &oss.PutBucketEncryptionRequest{Bucket: bucket,
		ServerSideEncryptionRule: &oss.ServerSideEncryptionRule{ApplyServerSideEncryptionByDefault: &oss.ApplyServerSideEncryptionByDefault{SSEAlgorithm: oss.Ptr("SM4")}}})
	mustOK(t, err)
	_, err = c.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: bucket, Key: oss.Ptr("x/blob"), Body: strings.NewReader("\x00binary\xff")})
	mustOK(t, err)
	// Tags and an older version (versioning turned on after the first write) persist too.
	mustOK(t, putTags(e, c, "persisted", "team", "md"))
	setVersioning(t, e, c, "persisted", oss.VersionEnabled)
	putObj(t, e, c, "persisted", "x/versioned", "old")
	putObj(t, e, c, "persisted", "x/versioned", "new")

	data, err := e.h.MarshalState()
	mustOK(t, err)
	before := e.h.Buckets()

	// Reset empties everything; loading the saved state brings it back.
	e.h.Reset()
	if len(e.h.Buckets()) != 0 {
		t.Fatal("Reset left buckets")
	}
	mustOK(t, e.h.UnmarshalState(data))

	after := e.h.Buckets()
	if len(after) != 1 || len(before) != 1 {
		t.Fatalf("buckets before %v after %v", before, after)
	}
	for k, v := range before[0] {
		if !reflect.DeepEqual(after[0][k], v) {
			t.Errorf("%s: %v before, %v after", k, v, after[0][k])
		}
	}
	lc, err := c.GetBucketLifecycle(e.ctx, &oss.GetBucketLifecycleRequest{Bucket: bucket})
	mustOK(t, err)
	if r := lc.LifecycleConfiguration.Rules; len(r) != 1 || r[0].Transitions[0].StorageClass != oss.StorageClassColdArchive {
		t.Errorf("lifecycle after reload %+v", r)
	}
	get, err := c.GetObject(e.ctx, &oss.GetObjectRequest{Bucket: bucket, Key: oss.Ptr("x/blob")})
	mustOK(t, err)
	body, err := io.ReadAll(get.Body)
	get.Body.Close()
	mustOK(t, err)
	if string(body) != "\x00binary\xff" || oss.ToString(get.StorageClass) != "Archive" {
		t.Errorf("object after reload %q class %q", body, oss.ToString(get.StorageClass))
	}

	if err := e.h.UnmarshalState([]byte(`{"version": 99}`)); err == nil {
		t.Error("accepted a state file of another version")
	}
	if err := e.h.UnmarshalState([]byte(`not json`)); err == nil {
		t.Error("accepted garbage")
	}
	if len(e.h.Buckets()) != 1 {
		t.Error("a failed load changed the state")
	}
	mustOK(t, e.h.UnmarshalState(nil))
	if len(e.h.Buckets()) != 0 {
		t.Error("empty state did not clear")
	}
}
