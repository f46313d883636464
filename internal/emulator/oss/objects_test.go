package oss_test

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

func TestObjects(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "objects")
	bucket := oss.Ptr("objects")

	put, err := c.PutObject(e.ctx, &oss.PutObjectRequest{
		Bucket:       bucket,
		Key:          oss.Ptr("dir/hello world.txt"),
		Body:         strings.NewReader("hello, gpu cluster"),
		ContentType:  oss.Ptr("text/plain"),
		StorageClass: oss.StorageClassIA,
		Metadata:     map[string]string{"owner": "md-team"},
	})
	mustOK(t, err) // the SDK checks the returned CRC64 against its own
	if oss.ToString(put.ETag) == "" || oss.ToString(put.HashCRC64) == "" {
		t.Errorf("put result %+v", put)
	}

	get, err := c.GetObject(e.ctx, &oss.GetObjectRequest{Bucket: bucket, Key: oss.Ptr("dir/hello world.txt")})
	mustOK(t, err)
	body, err := io.ReadAll(get.Body) // the SDK checks CRC64 of the download at EOF
	get.Body.Close()
	mustOK(t, err)
	if string(body) != "hello, gpu cluster" {
		t.Errorf("body %q", body)
	}
	if oss.ToString(get.ContentType) != "text/plain" || get.Metadata["owner"] != "md-team" ||
		oss.ToString(get.StorageClass) != "IA" || oss.ToString(get.ETag) != oss.ToString(put.ETag) {
		t.Errorf("get result type=%q meta=%v class=%q etag=%q", oss.ToString(get.ContentType), get.Metadata,
			oss.ToString(get.StorageClass), oss.ToString(get.ETag))
	}

	rng, err := c.GetObject(e.ctx, &oss.GetObjectRequest{Bucket: bucket, Key: oss.Ptr("dir/hello world.txt"), Range: oss.Ptr("bytes=0-4")})
	mustOK(t, err)
	part, _ := io.ReadAll(rng.Body)
	rng.Body.Close()
	if string(part) != "hello" {
		t.Errorf("range body %q", part)
	}

	head, err := c.HeadObject(e.ctx, &oss.HeadObjectRequest{Bucket: bucket, Key: oss.Ptr("dir/hello world.txt")})
	mustOK(t, err)
	if head.ContentLength != int64(len("hello, gpu cluster")) || head.Metadata["owner"] != "md-team" {
		t.Errorf("head %+v", head)
	}
	exists, err := c.IsObjectExist(e.ctx, "objects", "dir/hello world.txt")
	mustOK(t, err)
	if !exists {
		t.Error("IsObjectExist = false")
	}
	exists, err = c.IsObjectExist(e.ctx, "objects", "nope")
	mustOK(t, err)
	if exists {
		t.Error("IsObjectExist(nope) = true")
	}

	_, err = c.GetObject(e.ctx, &oss.GetObjectRequest{Bucket: bucket, Key: oss.Ptr("missing")})
	wantServiceError(t, err, 404, "NoSuchKey")
	_, err = c.HeadObject(e.ctx, &oss.HeadObjectRequest{Bucket: bucket, Key: oss.Ptr("missing")})
	wantServiceError(t, err, 404, "NoSuchKey") // decoded from the x-oss-err header
	_, err = c.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: oss.Ptr("no-bucket"), Key: oss.Ptr("k"), Body: strings.NewReader("")})
	wantServiceError(t, err, 404, "NoSuchBucket")

	_, err = c.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: bucket, Key: oss.Ptr("dir/hello world.txt"),
		Body: strings.NewReader("x"), ForbidOverwrite: oss.Ptr("true")})
	wantServiceError(t, err, 409, "FileAlreadyExists")

	_, err = c.DeleteObject(e.ctx, &oss.DeleteObjectRequest{Bucket: bucket, Key: oss.Ptr("dir/hello world.txt")})
	mustOK(t, err)
	_, err = c.DeleteObject(e.ctx, &oss.DeleteObjectRequest{Bucket: bucket, Key: oss.Ptr("dir/hello world.txt")})
	mustOK(t, err) // deleting a missing key succeeds
	_, err = c.GetObject(e.ctx, &oss.GetObjectRequest{Bucket: bucket, Key: oss.Ptr("dir/hello world.txt")})
	wantServiceError(t, err, 404, "NoSuchKey")
}

func TestListObjects(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "listing")
	bucket := oss.Ptr("listing")
	keys := []string{"a.txt", "data/1.bin", "data/2.bin", "data/sub/3.bin", "logs/x", "z y+.txt"}
	for _, k := range keys {
		_, err := c.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: bucket, Key: oss.Ptr(k), Body: strings.NewReader(k)})
		mustOK(t, err)
	}

	v1, err := c.ListObjects(e.ctx, &oss.ListObjectsRequest{Bucket: bucket, Delimiter: oss.Ptr("/")})
	mustOK(t, err)
	var got []string
	for _, o := range v1.Contents {
		got = append(got, oss.ToString(o.Key))
	}
	for _, p := range v1.CommonPrefixes {
		got = append(got, oss.ToString(p.Prefix))
	}
	if strings.Join(got, ",") != "a.txt,z y+.txt,data/,logs/" {
		t.Errorf("v1 delimiter listing %v", got)
	}

	v1, err = c.ListObjects(e.ctx, &oss.ListObjectsRequest{Bucket: bucket, Prefix: oss.Ptr("data/"), MaxKeys: 2})
	mustOK(t, err)
	if len(v1.Contents) != 2 || !v1.IsTruncated || oss.ToString(v1.NextMarker) != "data/2.bin" {
		t.Errorf("v1 page: %d truncated=%v next=%q", len(v1.Contents), v1.IsTruncated, oss.ToString(v1.NextMarker))
	}

	// V2 with the SDK's paginator (continuation tokens) and url encoding,
	// which the SDK decodes.
	got = nil
	p := c.NewListObjectsV2Paginator(&oss.ListObjectsV2Request{Bucket: bucket, MaxKeys: 2, EncodingType: oss.Ptr("url")})
	for p.HasNext() {
		page, err := p.NextPage(e.ctx)
		mustOK(t, err)
		if page.KeyCount != len(page.Contents) {
			t.Errorf("KeyCount %d for %d keys", page.KeyCount, len(page.Contents))
		}
		for _, o := range page.Contents {
			got = append(got, oss.ToString(o.Key))
			if o.Size == 0 || oss.ToString(o.ETag) == "" || o.LastModified == nil {
				t.Errorf("listing entry %+v", o)
			}
		}
	}
	if strings.Join(got, ",") != strings.Join(keys, ",") {
		t.Errorf("v2 paginated keys %v", got)
	}

	v2, err := c.ListObjectsV2(e.ctx, &oss.ListObjectsV2Request{Bucket: bucket, Prefix: oss.Ptr("data/"),
		Delimiter: oss.Ptr("/"), StartAfter: oss.Ptr("data/1.bin")})
	mustOK(t, err)
	if len(v2.Contents) != 1 || oss.ToString(v2.Contents[0].Key) != "data/2.bin" ||
		len(v2.CommonPrefixes) != 1 || oss.ToString(v2.CommonPrefixes[0].Prefix) != "data/sub/" {
		t.Errorf("v2 start-after listing %+v %+v", v2.Contents, v2.CommonPrefixes)
	}
}

// TestConcurrentClients hammers one bucket from several goroutines; run with
// -race.
func TestConcurrentClients(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "busy")
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				key := oss.Ptr(fmt.Sprintf("w%d/%d", w, i))
				if _, err := c.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: oss.Ptr("busy"), Key: key, Body: strings.NewReader("data")}); err != nil {
					t.Error(err)
					return
				}
				if _, err := c.HeadObject(e.ctx, &oss.HeadObjectRequest{Bucket: oss.Ptr("busy"), Key: key}); err != nil {
					t.Error(err)
				}
				if _, err := c.ListObjectsV2(e.ctx, &oss.ListObjectsV2Request{Bucket: oss.Ptr("busy")}); err != nil {
					t.Error(err)
				}
				_ = e.h.Buckets()
				if _, err := e.h.MarshalState(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if n := e.h.Buckets()[0]["object_count"]; n != 80 {
		t.Errorf("object_count %v, want 80", n)
	}
}
