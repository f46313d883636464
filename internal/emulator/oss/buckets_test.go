package oss_test

import (
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

func TestBucketCreateInfoDelete(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	before := time.Now().Add(-time.Second)

	_, err := c.PutBucket(e.ctx, &oss.PutBucketRequest{
		Bucket: oss.Ptr("cold-data-1"),
		Acl:    oss.BucketACLPublicRead,
		CreateBucketConfiguration: &oss.CreateBucketConfiguration{
			StorageClass: oss.StorageClassIA,
		},
	})
	mustOK(t, err)

	info, err := c.GetBucketInfo(e.ctx, &oss.GetBucketInfoRequest{Bucket: oss.Ptr("cold-data-1")})
	mustOK(t, err)
	b := info.BucketInfo
	if got := oss.ToString(b.Name); got != "cold-data-1" {
		t.Errorf("name %q", got)
	}
	if got := oss.ToString(b.Location); got != "oss-"+region {
		t.Errorf("location %q", got)
	}
	if got := oss.ToString(b.StorageClass); got != "IA" {
		t.Errorf("storage class %q", got)
	}
	if got := oss.ToString(b.ACL); got != "public-read" {
		t.Errorf("acl %q", got)
	}
	if got := oss.ToString(b.DataRedundancyType); got != "LRS" {
		t.Errorf("redundancy %q", got)
	}
	if b.CreationDate == nil || b.CreationDate.Before(before) {
		t.Errorf("creation date %v", b.CreationDate)
	}
	if got := oss.ToString(b.SseRule.SSEAlgorithm); got != "" {
		t.Errorf("sse algorithm %q, want none", got)
	}
	if info.Headers.Get("x-oss-request-id") == "" {
		t.Error("no x-oss-request-id header")
	}

	_, err = c.PutBucket(e.ctx, &oss.PutBucketRequest{Bucket: oss.Ptr("cold-data-1")})
	wantServiceError(t, err, 409, "BucketAlreadyExists")

	_, err = c.PutBucket(e.ctx, &oss.PutBucketRequest{
		Bucket:                    oss.Ptr("bad-class"),
		CreateBucketConfiguration: &oss.CreateBucketConfiguration{StorageClass: "Glacier"},
	})
	wantServiceError(t, err, 400, "InvalidArgument")

	loc, err := c.GetBucketLocation(e.ctx, &oss.GetBucketLocationRequest{Bucket: oss.Ptr("cold-data-1")})
	mustOK(t, err)
	if got := oss.ToString(loc.LocationConstraint); got != "oss-"+region {
		t.Errorf("location constraint %q", got)
	}

	// A bucket with an object cannot be deleted.
	_, err = c.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: oss.Ptr("cold-data-1"), Key: oss.Ptr("x"), Body: strings.NewReader("1")})
	mustOK(t, err)
	_, err = c.DeleteBucket(e.ctx, &oss.DeleteBucketRequest{Bucket: oss.Ptr("cold-data-1")})
	wantServiceError(t, err, 409, "BucketNotEmpty")
	if got := e.h.Buckets(); len(got) != 1 || got[0]["object_count"] != 1 || got[0]["acl"] != "public-read" {
		t.Errorf("Buckets() = %v", got)
	}

	_, err = c.DeleteObject(e.ctx, &oss.DeleteObjectRequest{Bucket: oss.Ptr("cold-data-1"), Key: oss.Ptr("x")})
	mustOK(t, err)
	_, err = c.DeleteBucket(e.ctx, &oss.DeleteBucketRequest{Bucket: oss.Ptr("cold-data-1")})
	mustOK(t, err)

	_, err = c.GetBucketInfo(e.ctx, &oss.GetBucketInfoRequest{Bucket: oss.Ptr("cold-data-1")})
	wantServiceError(t, err, 404, "NoSuchBucket")
	_, err = c.DeleteBucket(e.ctx, &oss.DeleteBucketRequest{Bucket: oss.Ptr("cold-data-1")})
	wantServiceError(t, err, 404, "NoSuchBucket")
	if got := e.h.Buckets(); len(got) != 0 {
		t.Errorf("Buckets() after delete = %v", got)
	}
}

func TestListBuckets(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	for _, n := range []string{"bkt-c", "bkt-a", "other", "bkt-b"} {
		createBucket(t, c, n)
	}
	res, err := c.ListBuckets(e.ctx, &oss.ListBucketsRequest{Prefix: oss.Ptr("bkt-"), MaxKeys: 2})
	mustOK(t, err)
	if len(res.Buckets) != 2 || oss.ToString(res.Buckets[0].Name) != "bkt-a" || !res.IsTruncated {
		t.Fatalf("page 1: %+v truncated=%v", res.Buckets, res.IsTruncated)
	}
	if oss.ToString(res.Buckets[0].Region) != region {
		t.Errorf("region %q", oss.ToString(res.Buckets[0].Region))
	}
	res, err = c.ListBuckets(e.ctx, &oss.ListBucketsRequest{Prefix: oss.Ptr("bkt-"), Marker: res.NextMarker})
	mustOK(t, err)
	if len(res.Buckets) != 1 || oss.ToString(res.Buckets[0].Name) != "bkt-c" || res.IsTruncated {
		t.Fatalf("page 2: %+v", res.Buckets)
	}

	// The SDK paginator drives the marker loop itself.
	var names []string
	p := c.NewListBucketsPaginator(&oss.ListBucketsRequest{MaxKeys: 1})
	for p.HasNext() {
		page, err := p.NextPage(e.ctx)
		mustOK(t, err)
		for _, b := range page.Buckets {
			names = append(names, oss.ToString(b.Name))
		}
	}
	if strings.Join(names, ",") != "bkt-a,bkt-b,bkt-c,other" {
		t.Errorf("paginated names %v", names)
	}
}

func TestBucketACL(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "acl-bucket")

	got, err := c.GetBucketAcl(e.ctx, &oss.GetBucketAclRequest{Bucket: oss.Ptr("acl-bucket")})
	mustOK(t, err)
	if oss.ToString(got.ACL) != "private" || oss.ToString(got.Owner.ID) == "" {
		t.Errorf("default acl %q owner %+v", oss.ToString(got.ACL), got.Owner)
	}
	_, err = c.PutBucketAcl(e.ctx, &oss.PutBucketAclRequest{Bucket: oss.Ptr("acl-bucket"), Acl: oss.BucketACLPublicReadWrite})
	mustOK(t, err)
	got, err = c.GetBucketAcl(e.ctx, &oss.GetBucketAclRequest{Bucket: oss.Ptr("acl-bucket")})
	mustOK(t, err)
	if oss.ToString(got.ACL) != "public-read-write" {
		t.Errorf("acl %q", oss.ToString(got.ACL))
	}
	_, err = c.PutBucketAcl(e.ctx, &oss.PutBucketAclRequest{Bucket: oss.Ptr("acl-bucket"), Acl: "world-writable"})
	wantServiceError(t, err, 400, "InvalidArgument")
	_, err = c.GetBucketAcl(e.ctx, &oss.GetBucketAclRequest{Bucket: oss.Ptr("no-such-bucket")})
	wantServiceError(t, err, 404, "NoSuchBucket")
}

func TestBucketVersioning(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "ver-bucket")

	got, err := c.GetBucketVersioning(e.ctx, &oss.GetBucketVersioningRequest{Bucket: oss.Ptr("ver-bucket")})
	mustOK(t, err)
	if got.VersionStatus != nil {
		t.Errorf("fresh bucket versioning %q, want unset", *got.VersionStatus)
	}
	for _, status := range []oss.VersioningStatusType{oss.VersionEnabled, oss.VersionSuspended} {
		_, err = c.PutBucketVersioning(e.ctx, &oss.PutBucketVersioningRequest{
			Bucket:                  oss.Ptr("ver-bucket"),
			VersioningConfiguration: &oss.VersioningConfiguration{Status: status},
		})
		mustOK(t, err)
		got, err = c.GetBucketVersioning(e.ctx, &oss.GetBucketVersioningRequest{Bucket: oss.Ptr("ver-bucket")})
		mustOK(t, err)
		if oss.ToString(got.VersionStatus) != string(status) {
			t.Errorf("versioning %q, want %q", oss.ToString(got.VersionStatus), status)
		}
	}
	info, err := c.GetBucketInfo(e.ctx, &oss.GetBucketInfoRequest{Bucket: oss.Ptr("ver-bucket")})
	mustOK(t, err)
	if oss.ToString(info.BucketInfo.Versioning) != "Suspended" {
		t.Errorf("bucket info versioning %q", oss.ToString(info.BucketInfo.Versioning))
	}
	_, err = c.PutBucketVersioning(e.ctx, &oss.PutBucketVersioningRequest{
		Bucket:                  oss.Ptr("ver-bucket"),
		VersioningConfiguration: &oss.VersioningConfiguration{Status: "Maybe"},
	})
	wantServiceError(t, err, 400, "MalformedXML")
}

func TestBucketEncryption(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "enc-bucket")

	_, err := c.GetBucketEncryption(e.ctx, &oss.GetBucketEncryptionRequest{Bucket: oss.Ptr("enc-bucket")})
	wantServiceError(t, err, 404, "NoSuchServerSideEncryptionRule")

	_, err = c.PutBucketEncryption(e.ctx, &oss.PutBucketEncryptionRequest{
		Bucket: oss.Ptr("enc-bucket"),
		ServerSideEncryptionRule: &oss.ServerSideEncryptionRule{
			ApplyServerSideEncryptionByDefault: &oss.ApplyServerSideEncryptionByDefault{
				SSEAlgorithm:   oss.Ptr("KMS"),
				KMSMasterKeyID: oss.Ptr("key-1234"),
			},
		},
	})
	mustOK(t, err)
	got, err := c.GetBucketEncryption(e.ctx, &oss.GetBucketEncryptionRequest{Bucket: oss.Ptr("enc-bucket")})
	mustOK(t, err)
	def := got.ServerSideEncryptionRule.ApplyServerSideEncryptionByDefault
	if oss.ToString(def.SSEAlgorithm) != "KMS" || oss.ToString(def.KMSMasterKeyID) != "key-1234" {
		t.Errorf("encryption %+v", def)
	}
	info, err := c.GetBucketInfo(e.ctx, &oss.GetBucketInfoRequest{Bucket: oss.Ptr("enc-bucket")})
	mustOK(t, err)
	if oss.ToString(info.BucketInfo.SseRule.SSEAlgorithm) != "KMS" {
		t.Errorf("bucket info sse %+v", info.BucketInfo.SseRule)
	}

	// Objects written now report the bucket's default encryption.
	put, err := c.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: oss.Ptr("enc-bucket"), Key: oss.Ptr("k"), Body: strings.NewReader("v")})
	mustOK(t, err)
	if got := put.Headers.Get("x-oss-server-side-encryption"); got != "KMS" {
		t.Errorf("object sse %q", got)
	}
	head, err := c.HeadObject(e.ctx, &oss.HeadObjectRequest{Bucket: oss.Ptr("enc-bucket"), Key: oss.Ptr("k")})
	mustOK(t, err)
	if got := oss.ToString(head.ServerSideEncryption); got != "KMS" {
		t.Errorf("head sse %q", got)
	}

	// A key id only makes sense with KMS; unknown algorithms are refused.
	for _, def := range []*oss.ApplyServerSideEncryptionByDefault{
		{SSEAlgorithm: oss.Ptr("AES256"), KMSMasterKeyID: oss.Ptr("key")},
		{SSEAlgorithm: oss.Ptr("ROT13")},
	} {
		_, err = c.PutBucketEncryption(e.ctx, &oss.PutBucketEncryptionRequest{
			Bucket:                   oss.Ptr("enc-bucket"),
			ServerSideEncryptionRule: &oss.ServerSideEncryptionRule{ApplyServerSideEncryptionByDefault: def},
		})
		wantServiceError(t, err, 400, "InvalidArgument")
	}

	_, err = c.DeleteBucketEncryption(e.ctx, &oss.DeleteBucketEncryptionRequest{Bucket: oss.Ptr("enc-bucket")})
	mustOK(t, err)
	_, err = c.GetBucketEncryption(e.ctx, &oss.GetBucketEncryptionRequest{Bucket: oss.Ptr("enc-bucket")})
	wantServiceError(t, err, 404, "NoSuchServerSideEncryptionRule")
}

func TestBucketPublicAccessBlock(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "pab-bucket")
	bucket := oss.Ptr("pab-bucket")

	got, err := c.GetBucketPublicAccessBlock(e.ctx, &oss.GetBucketPublicAccessBlockRequest{Bucket: bucket})
	mustOK(t, err)
	if oss.ToBool(got.PublicAccessBlockConfiguration.BlockPublicAccess) {
		t.Error("fresh bucket blocks public access")
	}

	// Public-read bucket: anonymous reads work until access is blocked.
	_, err = c.PutBucketAcl(e.ctx, &oss.PutBucketAclRequest{Bucket: bucket, Acl: oss.BucketACLPublicRead})
	mustOK(t, err)
	_, err = c.PutObject(e.ctx, &oss.PutObjectRequest{Bucket: bucket, Key: oss.Ptr("pub.txt"), Body: strings.NewReader("hello")})
	mustOK(t, err)
	anon := e.srv.URL + "/pab-bucket/pub.txt"
	if status := httpGet(t, anon); status != 200 {
		t.Fatalf("anonymous get on public-read bucket: %d", status)
	}

	_, err = c.PutBucketPublicAccessBlock(e.ctx, &oss.PutBucketPublicAccessBlockRequest{
		Bucket:                         bucket,
		PublicAccessBlockConfiguration: &oss.PublicAccessBlockConfiguration{BlockPublicAccess: oss.Ptr(true)},
	})
	mustOK(t, err)
	got, err = c.GetBucketPublicAccessBlock(e.ctx, &oss.GetBucketPublicAccessBlockRequest{Bucket: bucket})
	mustOK(t, err)
	if !oss.ToBool(got.PublicAccessBlockConfiguration.BlockPublicAccess) {
		t.Error("block public access not reported")
	}
	if status := httpGet(t, anon); status != 403 {
		t.Errorf("anonymous get with access blocked: %d, want 403", status)
	}
	_, err = c.PutBucketAcl(e.ctx, &oss.PutBucketAclRequest{Bucket: bucket, Acl: oss.BucketACLPublicReadWrite})
	wantServiceError(t, err, 403, "AccessDenied")
	info, err := c.GetBucketInfo(e.ctx, &oss.GetBucketInfoRequest{Bucket: bucket})
	mustOK(t, err)
	if !oss.ToBool(info.BucketInfo.BlockPublicAccess) {
		t.Error("bucket info does not show block public access")
	}

	_, err = c.DeleteBucketPublicAccessBlock(e.ctx, &oss.DeleteBucketPublicAccessBlockRequest{Bucket: bucket})
	mustOK(t, err)
	if status := httpGet(t, anon); status != 200 {
		t.Errorf("anonymous get after unblocking: %d", status)
	}
}
