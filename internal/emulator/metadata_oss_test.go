package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
	osscred "github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss/credentials"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// instanceOSSClient is what a program on the instance builds: an OSS client whose keys come from
// the instance's metadata service (hardened mode: a token first), fetched again when they near
// their expiry. It may retry once: after the test moves the emulator's clock, the SDK corrects its
// own on RequestTimeTooSkewed, as it does against OSS.
func (e *env) instanceOSSClient(instance string) *oss.Client {
	base := e.srv.URL + MetadataPath + "/" + instance + "/latest/"
	fetch := osscred.CredentialsFetcherFunc(func(ctx context.Context) (osscred.Credentials, error) {
		get := func(method, item string, hdr http.Header) (string, error) {
			req, err := http.NewRequestWithContext(ctx, method, base+item, nil)
			if err != nil {
				return "", err
			}
			req.Header = hdr
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return "", err
			}
			defer func() { _ = resp.Body.Close() }()
			body, err := io.ReadAll(resp.Body)
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("%s %s: %d", method, item, resp.StatusCode)
			}
			return string(body), err
		}
		tok, err := get(http.MethodPut, "api/token", http.Header{metadataTTLHeader: {"21600"}})
		if err != nil {
			return osscred.Credentials{}, err
		}
		withToken := http.Header{metadataTokenHeader: {tok}}
		role, err := get(http.MethodGet, "meta-data/ram/security-credentials/", withToken)
		if err != nil {
			return osscred.Credentials{}, err
		}
		body, err := get(http.MethodGet, "meta-data/ram/security-credentials/"+role, withToken)
		if err != nil {
			return osscred.Credentials{}, err
		}
		var c struct {
			AccessKeyId, AccessKeySecret, SecurityToken, Code string
			Expiration                                        time.Time
		}
		if err := json.Unmarshal([]byte(body), &c); err != nil || c.Code != "Success" {
			return osscred.Credentials{}, fmt.Errorf("role keys %q: %v", body, err)
		}
		return osscred.Credentials{AccessKeyID: c.AccessKeyId, AccessKeySecret: c.AccessKeySecret,
			SecurityToken: c.SecurityToken, Expires: &c.Expiration}, nil
	})
	cfg := oss.LoadDefaultConfig().
		WithCredentialsProvider(osscred.NewCredentialsFetcherProvider(fetch)).
		WithRegion(testRegion).WithEndpoint(e.srv.URL).WithUsePathStyle(true).
		WithRetryMaxAttempts(2).WithConnectTimeout(5 * time.Second)
	return oss.NewClient(cfg)
}

func ossGet(c *oss.Client, bucket, key string) error {
	r, err := c.GetObject(context.Background(), &oss.GetObjectRequest{Bucket: oss.Ptr(bucket), Key: oss.Ptr(key)})
	if err == nil {
		_ = r.Body.Close()
	}
	return err
}

func wantOSSCode(t *testing.T, err error, code string) {
	t.Helper()
	var se *oss.ServiceError
	if !errors.As(err, &se) || se.Code != code {
		t.Fatalf("want OSS error %s, got %v", code, err)
	}
}

// policyBuckets makes two buckets, each holding bootstrap/bundle.tar.gz and admin/kubeconfig
// (each object's content is its key), whose policies let one role read bootstrap/*: boot lets
// gpucluster-node, other-team someone-else. It answers the owner's client.
func policyBuckets(t *testing.T, e *env) *oss.Client {
	t.Helper()
	owner := ossClient(e.srv.URL, "emulator", "emulator-secret", "")
	ctx := context.Background()
	for bucket, role := range map[string]string{"boot": "gpucluster-node", "other-team": "someone-else"} {
		_, err := owner.PutBucket(ctx, &oss.PutBucketRequest{Bucket: oss.Ptr(bucket)})
		must(t, err)
		for _, key := range []string{"bootstrap/bundle.tar.gz", "admin/kubeconfig"} {
			_, err = owner.PutObject(ctx, &oss.PutObjectRequest{Bucket: oss.Ptr(bucket), Key: oss.Ptr(key), Body: strings.NewReader(key)})
			must(t, err)
		}
		policy := `{"Version":"1","Statement":[{"Effect":"Allow","Action":["oss:GetObject"],` +
			`"Principal":["arn:sts::` + core.AccountID + `:assumed-role/` + role + `/*"],"Resource":["acs:oss:*:*:` + bucket + `/bootstrap/*"]}]}`
		_, err = owner.PutBucketPolicy(ctx, &oss.PutBucketPolicyRequest{Bucket: oss.Ptr(bucket), Body: strings.NewReader(policy)})
		must(t, err)
	}
	return owner
}

// A node fetches its bootstrap bundle with its instance role: the bucket policy lets the role
// read the bundle and nothing else, a bucket whose policy names another role refuses it, the
// keys are refused once they expire, and an instance without a role has no keys to use.
func TestInstanceRoleReadsWhatTheBucketPolicyAllows(t *testing.T) {
	e, node, bare := newRoleEnv(t)
	owner := policyBuckets(t, e)
	ctx := context.Background()

	c := e.instanceOSSClient(node)
	must(t, ossGet(c, "boot", "bootstrap/bundle.tar.gz"))
	wantOSSCode(t, ossGet(c, "boot", "admin/kubeconfig"), "AccessDenied")
	wantOSSCode(t, ossGet(c, "other-team", "bootstrap/bundle.tar.gz"), "AccessDenied")
	wantOSSCode(t, ossGet(c, "other-team", "admin/kubeconfig"), "AccessDenied")
	must(t, ossGet(owner, "boot", "admin/kubeconfig")) // the owner's key, as before

	e.advance(roleKeyLife + time.Minute) // the client's cached keys are past their Expiration
	wantOSSCode(t, ossGet(c, "boot", "bootstrap/bundle.tar.gz"), "SecurityTokenExpired")
	must(t, ossGet(e.instanceOSSClient(node), "boot", "bootstrap/bundle.tar.gz")) // fresh keys from the metadata service

	if _, err := osscred.NewCredentialsFetcherProvider(osscred.CredentialsFetcherFunc(func(ctx context.Context) (osscred.Credentials, error) {
		status, body := e.metadataGet(bare, "meta-data/ram/security-credentials/", "")
		return osscred.Credentials{}, fmt.Errorf("%d %s", status, body)
	})).GetCredentials(ctx); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("an instance without a role: %v, want its metadata service's 404", err)
	}
}
