package oss_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss/credentials"

	emu "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/oss"
)

func (e *env) stsClient(token string) *oss.Client {
	return e.client("", "", func(cfg *oss.Config) {
		cfg.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(stsAK, stsSecret, token))
	})
}

func putPolicy(c *oss.Client, bucket, doc string) error {
	_, err := c.PutBucketPolicy(context.Background(), &oss.PutBucketPolicyRequest{Bucket: oss.Ptr(bucket), Body: strings.NewReader(doc)})
	return err
}

func putObject(t *testing.T, c *oss.Client, bucket, key string) {
	t.Helper()
	_, err := c.PutObject(context.Background(), &oss.PutObjectRequest{Bucket: oss.Ptr(bucket), Key: oss.Ptr(key), Body: strings.NewReader("data")})
	mustOK(t, err)
}

func getObject(c *oss.Client, bucket, key string) error {
	r, err := c.GetObject(context.Background(), &oss.GetObjectRequest{Bucket: oss.Ptr(bucket), Key: oss.Ptr(key)})
	if err == nil {
		_ = r.Body.Close()
	}
	return err
}

// The policy is stored as sent and answered back; a bucket without one answers
// NoSuchBucketPolicy; documents OSS refuses are refused.
func TestBucketPolicyPutGetDelete(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "pol")
	_, err := c.GetBucketPolicy(e.ctx, &oss.GetBucketPolicyRequest{Bucket: oss.Ptr("pol")})
	wantServiceError(t, err, 404, "NoSuchBucketPolicy")

	doc := `{"Version":"1","Statement":[{"Effect":"Allow","Action":"oss:GetObject","Principal":["*"],"Resource":"acs:oss:*:*:pol/*"}]}`
	mustOK(t, putPolicy(c, "pol", doc))
	got, err := c.GetBucketPolicy(e.ctx, &oss.GetBucketPolicyRequest{Bucket: oss.Ptr("pol")})
	mustOK(t, err)
	if got.Body != doc {
		t.Errorf("policy came back as %q", got.Body)
	}
	for name, bad := range map[string]string{
		"not JSON":          `{"Version":`,
		"numeric Version":   `{"Version":1,"Statement":[{"Effect":"Allow","Action":["oss:*"],"Principal":["*"],"Resource":["*"]}]}`,
		"Version 2":         `{"Version":"2","Statement":[{"Effect":"Allow","Action":["oss:*"],"Principal":["*"],"Resource":["*"]}]}`,
		"no statement":      `{"Version":"1","Statement":[]}`,
		"bad Effect":        `{"Version":"1","Statement":[{"Effect":"Maybe","Action":["oss:*"],"Principal":["*"],"Resource":["*"]}]}`,
		"no Principal":      `{"Version":"1","Statement":[{"Effect":"Allow","Action":["oss:*"],"Resource":["*"]}]}`,
		"no Resource":       `{"Version":"1","Statement":[{"Effect":"Allow","Action":["oss:*"],"Principal":["*"]}]}`,
		"larger than 16 KB": `{"Version":"1","Statement":[{"Effect":"Allow","Action":["oss:*"],"Principal":["*"],"Resource":["` + strings.Repeat("a", 16<<10) + `"]}]}`,
	} {
		t.Run(name, func(t *testing.T) { wantServiceError(t, putPolicy(c, "pol", bad), 400, "InvalidPolicyDocument") })
	}
	cond := `{"Version":"1","Statement":[{"Effect":"Deny","Action":["oss:*"],"Principal":["*"],"Resource":["*"],"Condition":{"IpAddress":{"acs:SourceIp":["10.0.0.0/8"]}}}]}`
	wantServiceError(t, putPolicy(c, "pol", cond), 501, "NotImplemented")

	_, err = c.DeleteBucketPolicy(e.ctx, &oss.DeleteBucketPolicyRequest{Bucket: oss.Ptr("pol")})
	mustOK(t, err)
	_, err = c.GetBucketPolicy(e.ctx, &oss.GetBucketPolicyRequest{Bucket: oss.Ptr("pol")})
	wantServiceError(t, err, 404, "NoSuchBucketPolicy")
}

// A role's session may do what a statement naming it allows on the resource, unless a Deny
// matches; the owner is not held to Allow statements; a bucket without a policy lets STS keys in.
func TestBucketPolicyAuthorizesAssumedRoles(t *testing.T) {
	e := newEnv(t)
	owner, role := e.defaultClient(), e.stsClient(stsToken)
	createBucket(t, owner, "boot")
	for _, k := range []string{"nodes/a.tar", "nodes/secret.key", "other/b"} {
		putObject(t, owner, "boot", k)
	}
	mustOK(t, getObject(role, "boot", "other/b")) // no policy yet
	mustOK(t, putPolicy(owner, "boot", `{"Version":"1","Statement":[
		{"Effect":"Allow","Action":["oss:GetObject"],"Principal":["arn:sts::1000000000000000:assumed-role/reader/*"],"Resource":["acs:oss:*:*:boot/nodes/*"]},
		{"Effect":"Deny","Action":"oss:Get*","Principal":["arn:sts::*:assumed-role/*/*"],"Resource":"acs:oss:*:*:boot/nodes/*.key"}]}`))
	mustOK(t, getObject(role, "boot", "nodes/a.tar"))
	_, err := role.HeadObject(e.ctx, &oss.HeadObjectRequest{Bucket: oss.Ptr("boot"), Key: oss.Ptr("nodes/a.tar")})
	mustOK(t, err) // HeadObject needs oss:GetObject
	wantServiceError(t, getObject(role, "boot", "nodes/secret.key"), 403, "AccessDenied")
	wantServiceError(t, getObject(role, "boot", "other/b"), 403, "AccessDenied")
	_, err = role.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: oss.Ptr("boot"), Key: oss.Ptr("nodes/new"), Body: strings.NewReader("x")})
	wantServiceError(t, err, 403, "AccessDenied")
	_, err = role.ListObjectsV2(e.ctx, &oss.ListObjectsV2Request{Bucket: oss.Ptr("boot")})
	wantServiceError(t, err, 403, "AccessDenied")
	mustOK(t, getObject(owner, "boot", "other/b"))

	// Another role's bucket: this session is named by nothing there.
	createBucket(t, owner, "theirs")
	putObject(t, owner, "theirs", "nodes/a.tar")
	mustOK(t, putPolicy(owner, "theirs", `{"Version":"1","Statement":[{"Effect":"Allow","Action":["oss:*"],
		"Principal":["arn:sts::1000000000000000:assumed-role/writer/*"],"Resource":["acs:oss:*:*:theirs","acs:oss:*:*:theirs/*"]}]}`))
	wantServiceError(t, getObject(role, "theirs", "nodes/a.tar"), 403, "AccessDenied")
	_, err = role.GetBucketPolicy(e.ctx, &oss.GetBucketPolicyRequest{Bucket: oss.Ptr("theirs")})
	wantServiceError(t, err, 403, "AccessDenied")

	// A Deny naming the account's id refuses the owner too.
	mustOK(t, putPolicy(owner, "theirs", `{"Version":"1","Statement":[{"Effect":"Deny","Action":["oss:GetObject"],
		"Principal":["1000000000000000"],"Resource":["acs:oss:*:*:theirs/*"]}]}`))
	wantServiceError(t, getObject(owner, "theirs", "nodes/a.tar"), 403, "AccessDenied")
}

// An STS key must bring its own security token, and is refused once it expired, whatever the
// request's clock says.
func TestSecurityTokenChecked(t *testing.T) {
	e := newEnv(t)
	createBucket(t, e.defaultClient(), "tok")
	_, err := e.stsClient("forged").GetBucketInfo(e.ctx, &oss.GetBucketInfoRequest{Bucket: oss.Ptr("tok")})
	wantServiceError(t, err, 403, "InvalidSecurityToken")
	_, err = e.stsClient("").GetBucketInfo(e.ctx, &oss.GetBucketInfoRequest{Bucket: oss.Ptr("tok")})
	wantServiceError(t, err, 403, "InvalidSecurityToken")
	e.srv.Config.Handler = emu.NewHandler(emu.Config{Credentials: keyStore,
		Now: func() time.Time { return stsExpires.Add(time.Hour) }})
	_, err = e.stsClient(stsToken).GetBucketInfo(e.ctx, &oss.GetBucketInfoRequest{Bucket: oss.Ptr("tok")})
	wantServiceError(t, err, 403, "SecurityTokenExpired")
}
