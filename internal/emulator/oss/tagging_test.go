package oss_test

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

func bucketTags(t *testing.T, e *env, c *oss.Client, bucket string) map[string]string {
	t.Helper()
	res, err := c.GetBucketTags(e.ctx, &oss.GetBucketTagsRequest{Bucket: oss.Ptr(bucket)})
	mustOK(t, err)
	out := map[string]string{}
	if res.Tagging != nil && res.Tagging.TagSet != nil {
		for _, tg := range res.Tagging.TagSet.Tags {
			out[oss.ToString(tg.Key)] = oss.ToString(tg.Value)
		}
	}
	return out
}

func putTags(e *env, c *oss.Client, bucket string, kv ...string) error {
	set := &oss.TagSet{}
	for i := 0; i+1 < len(kv); i += 2 {
		set.Tags = append(set.Tags, oss.Tag{Key: oss.Ptr(kv[i]), Value: oss.Ptr(kv[i+1])})
	}
	_, err := c.PutBucketTags(e.ctx, &oss.PutBucketTagsRequest{Bucket: oss.Ptr(bucket), Tagging: &oss.Tagging{TagSet: set}})
	return err
}

func TestBucketTags(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "tagged")
	if got := bucketTags(t, e, c, "tagged"); len(got) != 0 {
		t.Fatalf("new bucket has tags %v", got)
	}
	mustOK(t, putTags(e, c, "tagged", "gpucluster:managed-by", "gpucluster", "team", "md", "empty", ""))
	want := map[string]string{"gpucluster:managed-by": "gpucluster", "team": "md", "empty": ""}
	if got := bucketTags(t, e, c, "tagged"); !reflect.DeepEqual(got, want) {
		t.Fatalf("tags %v, want %v", got, want)
	}
	// Put replaces the whole set.
	mustOK(t, putTags(e, c, "tagged", "team", "cfd", "owner", "lab"))
	want = map[string]string{"team": "cfd", "owner": "lab"}
	if got := bucketTags(t, e, c, "tagged"); !reflect.DeepEqual(got, want) {
		t.Fatalf("after replace %v, want %v", got, want)
	}
	if b := e.h.Buckets(); !reflect.DeepEqual(b[0]["tags"], want) {
		t.Fatalf("resources view of tags: %v", b[0]["tags"])
	}
	// Delete named keys, then all.
	_, err := c.DeleteBucketTags(e.ctx, &oss.DeleteBucketTagsRequest{Bucket: oss.Ptr("tagged"), Tagging: oss.Ptr("owner,absent")})
	mustOK(t, err)
	if got := bucketTags(t, e, c, "tagged"); !reflect.DeepEqual(got, map[string]string{"team": "cfd"}) {
		t.Fatalf("after deleting owner: %v", got)
	}
	_, err = c.DeleteBucketTags(e.ctx, &oss.DeleteBucketTagsRequest{Bucket: oss.Ptr("tagged")})
	mustOK(t, err)
	if got := bucketTags(t, e, c, "tagged"); len(got) != 0 {
		t.Fatalf("after deleting all: %v", got)
	}

	// Vendor rules: refused calls change nothing.
	mustOK(t, putTags(e, c, "tagged", "keep", "1"))
	wantServiceError(t, putTags(e, c, "tagged", "Aliyun-x", "v"), http.StatusBadRequest, "InvalidTag")
	wantServiceError(t, putTags(e, c, "tagged", "https://x", "v"), http.StatusBadRequest, "InvalidTag")
	wantServiceError(t, putTags(e, c, "tagged", "k", "v", "k", "w"), http.StatusBadRequest, "InvalidTag")
	long := fmt.Sprintf("%065d", 0)
	wantServiceError(t, putTags(e, c, "tagged", long, "v"), http.StatusBadRequest, "InvalidTag")
	var many []string
	for i := range 21 {
		many = append(many, fmt.Sprintf("k%d", i), "v")
	}
	wantServiceError(t, putTags(e, c, "tagged", many...), http.StatusBadRequest, "InvalidTag")
	if got := bucketTags(t, e, c, "tagged"); !reflect.DeepEqual(got, map[string]string{"keep": "1"}) {
		t.Fatalf("refused calls changed tags: %v", got)
	}
	_, err = c.GetBucketTags(e.ctx, &oss.GetBucketTagsRequest{Bucket: oss.Ptr("missing")})
	wantServiceError(t, err, http.StatusNotFound, "NoSuchBucket")
}
