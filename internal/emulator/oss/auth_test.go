package oss_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss/credentials"
	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss/signer"

	emu "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/oss"
)

func httpGet(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	mustOK(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func TestWrongSecretIsSignatureDoesNotMatch(t *testing.T) {
	e := newEnv(t)
	_, err := e.client(testAK, "not-the-secret").ListBuckets(e.ctx, &oss.ListBucketsRequest{})
	se := serviceError(t, err, 403, "SignatureDoesNotMatch")
	body := string(se.Snapshot)
	// The server's StringToSign is in the body so a client can diff it.
	sts := stringToSign(t, se)
	if !strings.HasPrefix(sts, "OSS4-HMAC-SHA256\n") || !strings.Contains(sts, "/"+region+"/oss/aliyun_v4_request\n") {
		t.Errorf("error body lacks the StringToSign:\n%s", body)
	}
	if strings.Contains(body, "not-the-secret") || strings.Contains(body, testSecret) {
		t.Error("error body leaks a secret")
	}
}

// stringToSign pulls the server's StringToSign out of an error body.
func stringToSign(t *testing.T, se *oss.ServiceError) string {
	t.Helper()
	var body struct {
		StringToSign string `xml:"StringToSign"`
	}
	mustOK(t, xml.Unmarshal(se.Snapshot, &body))
	return body.StringToSign
}

func TestUnknownAccessKey(t *testing.T) {
	e := newEnv(t)
	_, err := e.client("nobody", "whatever").PutBucket(e.ctx, &oss.PutBucketRequest{Bucket: oss.Ptr("b-1")})
	wantServiceError(t, err, 403, "InvalidAccessKeyId")
	if len(e.h.Buckets()) != 0 {
		t.Error("bucket created with an unknown key")
	}
}

func TestSecurityToken(t *testing.T) {
	e := newEnv(t)
	c := e.client("", "", func(cfg *oss.Config) {
		cfg.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(stsAK, stsSecret, "sts-token-value"))
	})
	createBucket(t, c, "sts-bucket")
	_, err := c.GetBucketInfo(e.ctx, &oss.GetBucketInfoRequest{Bucket: oss.Ptr("sts-bucket")})
	mustOK(t, err)
}

func TestClockSkew(t *testing.T) {
	h := emu.NewHandler(emu.Config{Credentials: keyStore, Now: func() time.Time { return time.Now().Add(time.Hour) }})
	e := newEnv(t)
	e.srv.Config.Handler = h
	_, err := e.defaultClient().ListBuckets(e.ctx, &oss.ListBucketsRequest{})
	wantServiceError(t, err, 403, "RequestTimeTooSkewed")
}

func TestAnonymousAccess(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "private-bucket")
	_, err := c.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: oss.Ptr("private-bucket"), Key: oss.Ptr("k"), Body: strings.NewReader("v")})
	mustOK(t, err)
	if s := httpGet(t, e.srv.URL+"/private-bucket/k"); s != 403 {
		t.Errorf("anonymous get of private object: %d", s)
	}
	if s := httpGet(t, e.srv.URL+"/"); s != 403 {
		t.Errorf("anonymous ListBuckets: %d", s)
	}
	if s := httpGet(t, e.srv.URL+"/private-bucket/?bucketInfo"); s != 403 {
		t.Errorf("anonymous GetBucketInfo: %d", s)
	}
}

func TestPresignedURLs(t *testing.T) {
	e := newEnv(t)
	for name, v := range map[string]oss.SignatureVersionType{"presign-v4": oss.SignatureVersionV4, "presign-v1": oss.SignatureVersionV1} {
		c := e.client(testAK, testSecret, func(cfg *oss.Config) { cfg.WithSignatureVersion(v) })
		createBucket(t, c, name)
		_, err := c.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: oss.Ptr(name), Key: oss.Ptr("a b.txt"), Body: strings.NewReader("v")})
		mustOK(t, err)
		res, err := c.Presign(e.ctx, &oss.GetObjectRequest{Bucket: oss.Ptr(name), Key: oss.Ptr("a b.txt")})
		mustOK(t, err)
		if s := httpGet(t, res.URL); s != 200 {
			t.Errorf("%v presigned GET: %d (%s)", v, s, res.URL)
		}
		if s := httpGet(t, strings.Replace(res.URL, "a%20b.txt", "other.txt", 1)); s != 403 {
			t.Errorf("%v presigned URL reused for another key: %d", v, s)
		}
	}
}

// TestSignatureV1 drives the bucket and object operations through a client
// configured for the older HMAC-SHA1 signature.
func TestSignatureV1(t *testing.T) {
	e := newEnv(t)
	c := e.client(testAK, testSecret, func(cfg *oss.Config) { cfg.WithSignatureVersion(oss.SignatureVersionV1) })
	bucket := oss.Ptr("v1-bucket")
	createBucket(t, c, "v1-bucket")
	_, err := c.GetBucketInfo(e.ctx, &oss.GetBucketInfoRequest{Bucket: bucket})
	mustOK(t, err)
	_, err = c.PutBucketLifecycle(e.ctx, &oss.PutBucketLifecycleRequest{Bucket: bucket,
		LifecycleConfiguration: &oss.LifecycleConfiguration{Rules: []oss.LifecycleRule{{
			ID: oss.Ptr("r"), Status: oss.Ptr("Enabled"), Prefix: oss.Ptr(""),
			Transitions: []oss.LifecycleRuleTransition{transition(oss.StorageClassIA, 30)},
		}}}})
	mustOK(t, err)
	_, err = c.GetBucketLifecycle(e.ctx, &oss.GetBucketLifecycleRequest{Bucket: bucket})
	mustOK(t, err)
	_, err = c.PutBucketEncryption(e.ctx, &oss.PutBucketEncryptionRequest{Bucket: bucket,
		ServerSideEncryptionRule: &oss.ServerSideEncryptionRule{ApplyServerSideEncryptionByDefault: &oss.ApplyServerSideEncryptionByDefault{SSEAlgorithm: oss.Ptr("AES256")}}})
	mustOK(t, err)
	_, err = c.PutBucketVersioning(e.ctx, &oss.PutBucketVersioningRequest{Bucket: bucket,
		VersioningConfiguration: &oss.VersioningConfiguration{Status: oss.VersionEnabled}})
	mustOK(t, err)
	_, err = c.PutBucketAcl(e.ctx, &oss.PutBucketAclRequest{Bucket: bucket, Acl: oss.BucketACLPrivate})
	mustOK(t, err)
	_, err = c.GetBucketPublicAccessBlock(e.ctx, &oss.GetBucketPublicAccessBlockRequest{Bucket: bucket})
	mustOK(t, err)
	put, err := c.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: bucket, Key: oss.Ptr("k/é x"), Body: strings.NewReader("v1"),
		Metadata: map[string]string{"a": "b"}})
	mustOK(t, err)
	if oss.ToString(put.VersionId) == "" {
		t.Error("versioned bucket returned no version id")
	}
	_, err = c.ListObjectsV2(e.ctx, &oss.ListObjectsV2Request{Bucket: bucket, ContinuationToken: oss.Ptr("aw"), Prefix: oss.Ptr("k/")})
	mustOK(t, err)
	_, err = c.GetObject(e.ctx, &oss.GetObjectRequest{Bucket: bucket, Key: oss.Ptr("k/é x")})
	mustOK(t, err)
	// The bucket is versioned: deleting the version itself (versionId is a signed
	// sub-resource in V1) empties it.
	_, err = c.DeleteObject(e.ctx, &oss.DeleteObjectRequest{Bucket: bucket, Key: oss.Ptr("k/é x"), VersionId: put.VersionId})
	mustOK(t, err)
	_, err = c.DeleteBucket(e.ctx, &oss.DeleteBucketRequest{Bucket: bucket})
	mustOK(t, err)

	_, err = e.client(testAK, "wrong", func(cfg *oss.Config) { cfg.WithSignatureVersion(oss.SignatureVersionV1) }).
		ListBuckets(e.ctx, &oss.ListBucketsRequest{})
	se := serviceError(t, err, 403, "SignatureDoesNotMatch")
	if sts := stringToSign(t, se); !strings.HasPrefix(sts, "GET\n") || !strings.HasSuffix(sts, "\n/") {
		t.Errorf("V1 error body lacks the StringToSign:\n%s", se.Snapshot)
	}
}

// rawRequest signs a request with the SDK's V4 signer, for cases the SDK
// client refuses to send (it validates bucket names itself) or bodies it
// would never build.
func rawRequest(t *testing.T, e *env, method, path string, bucket *string, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, bytes.NewReader([]byte(body)))
	mustOK(t, err)
	if body != "" {
		sum := md5.Sum([]byte(body))
		req.Header.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
		req.Header.Set("Content-Type", "application/xml")
	}
	err = (&signer.SignerV4{}).Sign(context.Background(), &signer.SigningContext{
		Product:     oss.Ptr("oss"),
		Region:      oss.Ptr(region),
		Bucket:      bucket,
		Request:     req,
		Credentials: &credentials.Credentials{AccessKeyID: testAK, AccessKeySecret: testSecret},
	})
	mustOK(t, err)
	resp, err := http.DefaultClient.Do(req)
	mustOK(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func errorCode(t *testing.T, resp *http.Response) string {
	t.Helper()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	s := buf.String()
	i, j := strings.Index(s, "<Code>"), strings.Index(s, "</Code>")
	if i < 0 || j < i {
		t.Fatalf("no error code in %q", s)
	}
	return s[i+len("<Code>") : j]
}

func TestRawProtocolErrors(t *testing.T) {
	e := newEnv(t)
	createBucket(t, e.defaultClient(), "raw-bucket")

	for _, name := range []string{"Upper-Case", "ab", "-leading", "trailing-", "under_score"} {
		resp := rawRequest(t, e, http.MethodPut, "/"+name+"/", oss.Ptr(name), "")
		if resp.StatusCode != http.StatusBadRequest || errorCode(t, resp) != "InvalidBucketName" {
			t.Errorf("bucket %q: status %d", name, resp.StatusCode)
		}
	}

	resp := rawRequest(t, e, http.MethodPut, "/raw-bucket/?lifecycle", oss.Ptr("raw-bucket"), "<LifecycleConfiguration><Rule>")
	if resp.StatusCode != http.StatusBadRequest || errorCode(t, resp) != "MalformedXML" {
		t.Errorf("truncated lifecycle XML: %d", resp.StatusCode)
	}
	resp = rawRequest(t, e, http.MethodPut, "/raw-bucket/?encryption", oss.Ptr("raw-bucket"), "<VersioningConfiguration/>")
	if resp.StatusCode != http.StatusBadRequest || errorCode(t, resp) != "MalformedXML" {
		t.Errorf("wrong root element: %d", resp.StatusCode)
	}
	resp = rawRequest(t, e, http.MethodGet, "/raw-bucket/?cors", oss.Ptr("raw-bucket"), "")
	if resp.StatusCode != http.StatusNotImplemented || errorCode(t, resp) != "NotImplemented" {
		t.Errorf("unsupported sub-resource: %d", resp.StatusCode)
	}
	if resp.Header.Get("x-oss-request-id") == "" {
		t.Error("no x-oss-request-id on an error")
	}
}

func TestObserver(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "watched")
	_, _ = c.GetBucketLifecycle(e.ctx, &oss.GetBucketLifecycleRequest{Bucket: oss.Ptr("watched")})
	_, _ = e.client(testAK, "bad").GetBucketInfo(e.ctx, &oss.GetBucketInfoRequest{Bucket: oss.Ptr("watched")})
	_, _ = c.DeleteBucket(e.ctx, &oss.DeleteBucketRequest{Bucket: oss.Ptr("watched")})
	want := "PutBucket,GetBucketLifecycle:NoSuchLifecycle,GetBucketInfo:SignatureDoesNotMatch,DeleteBucket"
	if got := strings.Join(e.observed(), ","); got != want {
		t.Errorf("observed %s\nwant     %s", got, want)
	}
}
