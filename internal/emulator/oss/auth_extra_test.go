package oss_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"

	emu "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/oss"
)

// TestAdditionalSignedHeaders: V4 lets the client sign extra headers and
// list them in AdditionalHeaders; the server must include them too.
func TestAdditionalSignedHeaders(t *testing.T) {
	e := newEnv(t)
	c := e.client(testAK, testSecret, func(cfg *oss.Config) {
		cfg.WithAdditionalHeaders([]string{"User-Agent", "Cache-Control"})
	})
	createBucket(t, c, "extra-headers")
	_, err := c.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: oss.Ptr("extra-headers"), Key: oss.Ptr("k"),
		Body: strings.NewReader("v"), CacheControl: oss.Ptr("no-cache")})
	mustOK(t, err)
	get, err := c.GetObject(e.ctx, &oss.GetObjectRequest{Bucket: oss.Ptr("extra-headers"), Key: oss.Ptr("k")})
	mustOK(t, err)
	get.Body.Close()
	if get.Headers.Get("Cache-Control") != "no-cache" {
		t.Errorf("cache control %q", get.Headers.Get("Cache-Control"))
	}
}

func TestContentMD5Mismatch(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "digest")
	_, err := c.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: oss.Ptr("digest"), Key: oss.Ptr("k"),
		Body: strings.NewReader("data"), ContentMD5: oss.Ptr("1B2M2Y8AsgTpgAmY7PhCfg==")})
	wantServiceError(t, err, 400, "InvalidDigest")
}

func TestAnonymousWriteNeedsPublicReadWrite(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "drop-box")
	put := func() int {
		req, _ := http.NewRequest(http.MethodPut, e.srv.URL+"/drop-box/anon.txt", strings.NewReader("hi"))
		resp, err := http.DefaultClient.Do(req)
		mustOK(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := put(); s != 403 {
		t.Errorf("anonymous put into private bucket: %d", s)
	}
	_, err := c.PutBucketAcl(e.ctx, &oss.PutBucketAclRequest{Bucket: oss.Ptr("drop-box"), Acl: oss.BucketACLPublicReadWrite})
	mustOK(t, err)
	if s := put(); s != 200 {
		t.Errorf("anonymous put into public-read-write bucket: %d", s)
	}
	if n := e.h.Buckets()[0]["object_count"]; n != 1 {
		t.Errorf("object_count %v", n)
	}
}

func TestExpiredPresignedURL(t *testing.T) {
	e := newEnv(t)
	createBucket(t, e.defaultClient(), "expiring")
	res, err := e.defaultClient().Presign(e.ctx, &oss.GetObjectRequest{Bucket: oss.Ptr("expiring"), Key: oss.Ptr("k")},
		oss.PresignExpires(time.Minute))
	mustOK(t, err)
	if s := httpGet(t, res.URL); s != 404 { // valid signature, missing key
		t.Fatalf("fresh presigned URL: %d", s)
	}
	e.srv.Config.Handler = emu.NewHandler(emu.Config{Credentials: keyStore,
		Now: func() time.Time { return time.Now().Add(2 * time.Minute) }})
	if s := httpGet(t, res.URL); s != 403 {
		t.Errorf("expired presigned URL: %d", s)
	}
}
