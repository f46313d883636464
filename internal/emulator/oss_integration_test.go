package emulator

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/sts"
	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
	osscred "github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss/credentials"
)

func ossClient(url, ak, sk, token string) *oss.Client {
	cfg := oss.LoadDefaultConfig().
		WithCredentialsProvider(osscred.NewStaticCredentialsProvider(ak, sk, token)).
		WithRegion(testRegion).
		WithEndpoint(url).
		WithUsePathStyle(true).
		WithRetryMaxAttempts(1).
		WithConnectTimeout(5 * time.Second)
	return oss.NewClient(cfg)
}

// TestOSSThroughTopLevelHandler checks the routing rule (no Action -> OSS),
// shared credentials, stats, resources, faults and persistence for OSS.
func TestOSSThroughTopLevelHandler(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, err := New(Config{StateFile: path})
	must(t, err)
	url, err := s.Start("127.0.0.1:0")
	must(t, err)
	ctx := context.Background()
	c := ossClient(url, "emulator", "emulator-secret", "")
	_, err = c.PutBucket(ctx, &oss.PutBucketRequest{Bucket: oss.Ptr("gpu-datasets")})
	must(t, err)
	if b := s.Resources().Buckets; len(b) != 1 {
		t.Fatalf("buckets: %v", b)
	}
	st := s.Stats()
	if st.Total < 1 {
		t.Fatalf("OSS calls not counted: %+v", st)
	}
	// STS keys issued by the RPC side work for OSS too.
	e := &env{t: t, s: s, host: url[len("http://"):]}
	e.ecs, e.vpc, e.nas, e.sts = e.clients(nil)
	a := sts.CreateAssumeRoleRequest()
	a.RoleArn, a.RoleSessionName = "acs:ram::1:role/r", "oss-test"
	cr, err := e.sts.AssumeRole(a)
	must(t, err)
	tc := ossClient(url, cr.Credentials.AccessKeyId, cr.Credentials.AccessKeySecret, cr.Credentials.SecurityToken)
	_, err = tc.GetBucketInfo(ctx, &oss.GetBucketInfoRequest{Bucket: oss.Ptr("gpu-datasets")})
	must(t, err)
	// Faults apply to OSS as well.
	s.SetFaults(Faults{ThrottleRate: 1})
	_, err = c.GetBucketInfo(ctx, &oss.GetBucketInfoRequest{Bucket: oss.Ptr("gpu-datasets")})
	var se *oss.ServiceError
	if !errors.As(err, &se) || se.Code != "Throttling.User" {
		t.Fatalf("want Throttling.User from OSS, got %v", err)
	}
	s.SetFaults(Faults{})
	must(t, s.Close())
	s2, err := New(Config{StateFile: path})
	must(t, err)
	defer func() { _ = s2.Close() }()
	if b := s2.Resources().Buckets; len(b) != 1 {
		t.Fatalf("bucket lost across restart: %v", b)
	}
}
