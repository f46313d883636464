package oss_test

import (
	"strings"
	"testing"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

// An object keeps the encryption it was put with, asked for or the bucket's default at the time,
// and answers it in the SDK's result fields.
func TestObjectServerSideEncryption(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "sse")
	put := func(key, alg, keyID string) (*oss.PutObjectResult, error) {
		req := &oss.PutObjectRequest{Bucket: oss.Ptr("sse"), Key: oss.Ptr(key), Body: strings.NewReader("x")}
		if alg != "" {
			req.ServerSideEncryption = oss.Ptr(alg)
		}
		if keyID != "" {
			req.ServerSideEncryptionKeyId = oss.Ptr(keyID)
		}
		return c.PutObject(e.ctx, req)
	}
	head := func(key string) (alg, keyID string) {
		t.Helper()
		r, err := c.HeadObject(e.ctx, &oss.HeadObjectRequest{Bucket: oss.Ptr("sse"), Key: oss.Ptr(key)})
		mustOK(t, err)
		return oss.ToString(r.ServerSideEncryption), oss.ToString(r.ServerSideEncryptionKeyId)
	}

	r, err := put("kms", "KMS", "key-1")
	mustOK(t, err)
	// PutObjectResult has no field for them: the headers.
	if alg, id := r.Headers.Get("x-oss-server-side-encryption"), r.Headers.Get("x-oss-server-side-encryption-key-id"); alg != "KMS" || id != "key-1" {
		t.Errorf("PutObject answered %q %q", alg, id)
	}
	if alg, id := head("kms"); alg != "KMS" || id != "key-1" {
		t.Errorf("HeadObject of a KMS object: %q %q", alg, id)
	}
	g, err := c.GetObject(e.ctx, &oss.GetObjectRequest{Bucket: oss.Ptr("sse"), Key: oss.Ptr("kms")})
	mustOK(t, err)
	_ = g.Body.Close()
	if oss.ToString(g.ServerSideEncryption) != "KMS" || oss.ToString(g.ServerSideEncryptionKeyId) != "key-1" {
		t.Errorf("GetObject of a KMS object: %q %q", oss.ToString(g.ServerSideEncryption), oss.ToString(g.ServerSideEncryptionKeyId))
	}
	_, err = put("plain", "", "")
	mustOK(t, err)
	if alg, _ := head("plain"); alg != "" {
		t.Errorf("an object put without encryption answers %q", alg)
	}
	_, err = put("bad", "AES256", "key-1")
	wantServiceError(t, err, 400, "InvalidArgument")
	_, err = put("bad", "DES", "")
	wantServiceError(t, err, 400, "InvalidArgument")

	_, err = c.PutBucketEncryption(e.ctx, &oss.PutBucketEncryptionRequest{Bucket: oss.Ptr("sse"),
		ServerSideEncryptionRule: &oss.ServerSideEncryptionRule{ApplyServerSideEncryptionByDefault: &oss.ApplyServerSideEncryptionByDefault{
			SSEAlgorithm: oss.Ptr("KMS"), KMSMasterKeyID: oss.Ptr("bucket-key")}}})
	mustOK(t, err)
	_, err = put("later", "", "")
	mustOK(t, err)
	if alg, id := head("later"); alg != "KMS" || id != "bucket-key" {
		t.Errorf("an object put under the bucket's KMS default: %q %q", alg, id)
	}
	if alg, _ := head("plain"); alg != "" {
		t.Errorf("an object put before the default was set answers %q", alg)
	}
}
