package oss_test

import (
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

func putObj(t *testing.T, e *env, c *oss.Client, bucket, key, body string) string {
	t.Helper()
	res, err := c.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: oss.Ptr(bucket), Key: oss.Ptr(key), Body: strings.NewReader(body)})
	mustOK(t, err)
	return oss.ToString(res.VersionId)
}

func setVersioning(t *testing.T, e *env, c *oss.Client, bucket string, status oss.VersioningStatusType) {
	t.Helper()
	_, err := c.PutBucketVersioning(e.ctx, &oss.PutBucketVersioningRequest{Bucket: oss.Ptr(bucket),
		VersioningConfiguration: &oss.VersioningConfiguration{Status: status}})
	mustOK(t, err)
}

// listVersions lists every version and delete marker with the given page size, as
// "key version latest kind" lines (kind v or dm).
func listVersions(t *testing.T, e *env, c *oss.Client, bucket string, pageSize int32) []string {
	t.Helper()
	var out []string
	var km, vm *string
	for range 100 {
		res, err := c.ListObjectVersions(e.ctx, &oss.ListObjectVersionsRequest{Bucket: oss.Ptr(bucket), MaxKeys: pageSize, KeyMarker: km, VersionIdMarker: vm, IsMix: true})
		mustOK(t, err)
		for _, v := range res.ObjectVersionsDeleteMarkers {
			kind := "v"
			if v.IsDeleteMarker() {
				kind = "dm"
			}
			out = append(out, fmt.Sprintf("%s %s %t %s", oss.ToString(v.Key), oss.ToString(v.VersionId), v.IsLatest, kind))
		}
		if !res.IsTruncated {
			return out
		}
		km, vm = res.NextKeyMarker, res.NextVersionIdMarker
	}
	t.Fatal("listing never ended")
	return nil
}

func getBody(t *testing.T, e *env, c *oss.Client, bucket, key, version string) string {
	t.Helper()
	req := &oss.GetObjectRequest{Bucket: oss.Ptr(bucket), Key: oss.Ptr(key)}
	if version != "" {
		req.VersionId = oss.Ptr(version)
	}
	res, err := c.GetObject(e.ctx, req)
	mustOK(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	mustOK(t, err)
	return string(b)
}

func TestObjectVersions(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "versioned")
	// Written before versioning: the "null" version.
	if v := putObj(t, e, c, "versioned", "a/one", "v0"); v != "" {
		t.Fatalf("unversioned put returned version %q", v)
	}
	setVersioning(t, e, c, "versioned", oss.VersionEnabled)
	v1 := putObj(t, e, c, "versioned", "a/one", "v1")
	v2 := putObj(t, e, c, "versioned", "a/one", "v2")
	w1 := putObj(t, e, c, "versioned", "b/two", "w1")
	if v1 == "" || v2 == "" || v1 == v2 {
		t.Fatalf("version ids %q %q", v1, v2)
	}
	if got := getBody(t, e, c, "versioned", "a/one", ""); got != "v2" {
		t.Fatalf("current a/one = %q", got)
	}
	if got := getBody(t, e, c, "versioned", "a/one", v1); got != "v1" {
		t.Fatalf("a/one@v1 = %q", got)
	}
	if got := getBody(t, e, c, "versioned", "a/one", "null"); got != "v0" {
		t.Fatalf("a/one@null = %q", got)
	}

	// Delete without a version id: a delete marker hides the key.
	del, err := c.DeleteObject(e.ctx, &oss.DeleteObjectRequest{Bucket: oss.Ptr("versioned"), Key: oss.Ptr("b/two")})
	mustOK(t, err)
	if !del.DeleteMarker || oss.ToString(del.VersionId) == "" {
		t.Fatalf("delete in a versioned bucket: marker %t version %q", del.DeleteMarker, oss.ToString(del.VersionId))
	}
	dm := oss.ToString(del.VersionId)
	_, err = c.GetObject(e.ctx, &oss.GetObjectRequest{Bucket: oss.Ptr("versioned"), Key: oss.Ptr("b/two")})
	wantServiceError(t, err, http.StatusNotFound, "NoSuchKey")
	_, err = c.GetObject(e.ctx, &oss.GetObjectRequest{Bucket: oss.Ptr("versioned"), Key: oss.Ptr("b/two"), VersionId: oss.Ptr(dm)})
	wantServiceError(t, err, http.StatusMethodNotAllowed, "MethodNotAllowed")
	_, err = c.GetObject(e.ctx, &oss.GetObjectRequest{Bucket: oss.Ptr("versioned"), Key: oss.Ptr("a/one"), VersionId: oss.Ptr("nope")})
	wantServiceError(t, err, http.StatusNotFound, "NoSuchVersion")
	plain, err := c.ListObjectsV2(e.ctx, &oss.ListObjectsV2Request{Bucket: oss.Ptr("versioned")})
	mustOK(t, err)
	if len(plain.Contents) != 1 || oss.ToString(plain.Contents[0].Key) != "a/one" {
		t.Fatalf("ListObjectsV2 shows %+v", plain.Contents)
	}

	want := []string{
		"a/one " + v2 + " true v",
		"a/one " + v1 + " false v",
		"a/one null false v",
		"b/two " + dm + " true dm",
		"b/two " + w1 + " false v",
	}
	for _, size := range []int32{1, 2, 3, 100} {
		if got := listVersions(t, e, c, "versioned", size); !reflect.DeepEqual(got, want) {
			t.Fatalf("ListObjectVersions (page %d):\n got %q\nwant %q", size, got, want)
		}
	}
	// Split mode puts versions and delete markers apart.
	res, err := c.ListObjectVersions(e.ctx, &oss.ListObjectVersionsRequest{Bucket: oss.Ptr("versioned"), Delimiter: oss.Ptr("/")})
	mustOK(t, err)
	if len(res.ObjectVersions)+len(res.ObjectDeleteMarkers) != 0 || len(res.CommonPrefixes) != 2 {
		t.Fatalf("delimiter listing: %+v", res)
	}
	res, err = c.ListObjectVersions(e.ctx, &oss.ListObjectVersionsRequest{Bucket: oss.Ptr("versioned"), Prefix: oss.Ptr("b/")})
	mustOK(t, err)
	if len(res.ObjectVersions) != 1 || len(res.ObjectDeleteMarkers) != 1 || !res.ObjectDeleteMarkers[0].IsLatest {
		t.Fatalf("prefix listing: %+v", res)
	}

	// A bucket holding only old versions and markers is not empty.
	_, err = c.DeleteObject(e.ctx, &oss.DeleteObjectRequest{Bucket: oss.Ptr("versioned"), Key: oss.Ptr("a/one")})
	mustOK(t, err)
	_, err = c.DeleteBucket(e.ctx, &oss.DeleteBucketRequest{Bucket: oss.Ptr("versioned")})
	wantServiceError(t, err, http.StatusConflict, "BucketNotEmpty")

	// Deleting the marker by its version id brings the previous version back.
	del, err = c.DeleteObject(e.ctx, &oss.DeleteObjectRequest{Bucket: oss.Ptr("versioned"), Key: oss.Ptr("b/two"), VersionId: oss.Ptr(dm)})
	mustOK(t, err)
	if !del.DeleteMarker || oss.ToString(del.VersionId) != dm {
		t.Fatalf("deleting the marker: %+v", del)
	}
	if got := getBody(t, e, c, "versioned", "b/two", ""); got != "w1" {
		t.Fatalf("b/two after removing its marker = %q", got)
	}

	// Emptying it the way a client does: delete every listed version by id.
	for _, line := range listVersions(t, e, c, "versioned", 2) {
		f := strings.Fields(line)
		_, err := c.DeleteObject(e.ctx, &oss.DeleteObjectRequest{Bucket: oss.Ptr("versioned"), Key: oss.Ptr(f[0]), VersionId: oss.Ptr(f[1])})
		mustOK(t, err)
	}
	if got := listVersions(t, e, c, "versioned", 10); len(got) != 0 {
		t.Fatalf("left after deleting every version: %q", got)
	}
	_, err = c.DeleteBucket(e.ctx, &oss.DeleteBucketRequest{Bucket: oss.Ptr("versioned")})
	mustOK(t, err)
}

func TestObjectVersionsSuspended(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "suspended")
	setVersioning(t, e, c, "suspended", oss.VersionEnabled)
	v1 := putObj(t, e, c, "suspended", "k", "v1")
	setVersioning(t, e, c, "suspended", oss.VersionSuspended)
	// While suspended every write is the "null" version, replacing the previous one.
	if v := putObj(t, e, c, "suspended", "k", "n1"); v != "null" {
		t.Fatalf("suspended put version %q", v)
	}
	putObj(t, e, c, "suspended", "k", "n2")
	want := []string{"k null true v", "k " + v1 + " false v"}
	if got := listVersions(t, e, c, "suspended", 100); !reflect.DeepEqual(got, want) {
		t.Fatalf("suspended versions:\n got %q\nwant %q", got, want)
	}
	// Deleting makes a "null" delete marker, replacing the null object.
	del, err := c.DeleteObject(e.ctx, &oss.DeleteObjectRequest{Bucket: oss.Ptr("suspended"), Key: oss.Ptr("k")})
	mustOK(t, err)
	if !del.DeleteMarker || oss.ToString(del.VersionId) != "null" {
		t.Fatalf("suspended delete: %+v", del)
	}
	want = []string{"k null true dm", "k " + v1 + " false v"}
	if got := listVersions(t, e, c, "suspended", 100); !reflect.DeepEqual(got, want) {
		t.Fatalf("after suspended delete:\n got %q\nwant %q", got, want)
	}
}

func TestObjectVersionsUnversionedBucket(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "plain")
	putObj(t, e, c, "plain", "x y+z", "1")
	putObj(t, e, c, "plain", "x y+z", "2")
	// One copy per key, shown as the "null" version; keys come back url-decoded.
	if got, want := listVersions(t, e, c, "plain", 100), []string{"x y+z null true v"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("unversioned listing %q, want %q", got, want)
	}
	del, err := c.DeleteObject(e.ctx, &oss.DeleteObjectRequest{Bucket: oss.Ptr("plain"), Key: oss.Ptr("x y+z")})
	mustOK(t, err)
	if del.DeleteMarker {
		t.Fatal("delete marker in an unversioned bucket")
	}
	if got := listVersions(t, e, c, "plain", 100); len(got) != 0 {
		t.Fatalf("left: %q", got)
	}
	_, err = c.ListObjectVersions(e.ctx, &oss.ListObjectVersionsRequest{Bucket: oss.Ptr("missing")})
	wantServiceError(t, err, http.StatusNotFound, "NoSuchBucket")
}
