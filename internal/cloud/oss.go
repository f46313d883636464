package cloud

import (
	"context"
	"fmt"
	"sort"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

// BucketInput is how the provider creates a bucket: always private, versioned, with public
// access blocked; server-side encryption (AES256, OSS-managed keys) when Encrypted.
type BucketInput struct {
	Name      string
	Encrypted bool
	// Tags are put right after the bucket is made, before any other setting, so that an apply
	// interrupted later leaves a bucket a later run recognises as its own.
	Tags map[string]string
}

// CreateBucket creates a bucket, tags it and applies its settings. A bucket this account already
// owns (a retried apply) is adopted and brought to the same settings.
func (c *Client) CreateBucket(ctx context.Context, in BucketInput) error {
	err := c.OSS(ctx, "PutBucket", func(ctx context.Context, cl *oss.Client) error {
		_, err := cl.PutBucket(ctx, &oss.PutBucketRequest{
			Bucket: oss.Ptr(in.Name),
			Acl:    oss.BucketACLPrivate,
			CreateBucketConfiguration: &oss.CreateBucketConfiguration{
				StorageClass: oss.StorageClassStandard,
			},
		})
		return err
	})
	if err != nil && !IsCode(err, "BucketAlreadyOwnedByYou") {
		return fmt.Errorf("creating bucket %s: %w", in.Name, err)
	}
	if len(in.Tags) > 0 {
		if err := c.SetBucketTags(ctx, in.Name, in.Tags); err != nil {
			return err
		}
	}
	return c.ApplyBucketSettings(ctx, in.Name, in.Encrypted)
}

// ApplyBucketSettings brings a bucket to the provider's settings: private ACL, public access
// blocked, versioning on, and default encryption as asked. Each call is idempotent.
func (c *Client) ApplyBucketSettings(ctx context.Context, bucket string, encrypted bool) error {
	if err := c.SetBucketACL(ctx, bucket, string(oss.BucketACLPrivate)); err != nil {
		return err
	}
	if err := c.SetBucketPublicAccessBlock(ctx, bucket); err != nil {
		return err
	}
	if err := c.SetBucketVersioning(ctx, bucket); err != nil {
		return err
	}
	return c.SetBucketEncryption(ctx, bucket, encrypted)
}

// SetBucketACL sets the bucket's ACL (private, public-read, public-read-write).
func (c *Client) SetBucketACL(ctx context.Context, bucket string, acl string) error {
	err := c.OSS(ctx, "PutBucketAcl", func(ctx context.Context, cl *oss.Client) error {
		_, err := cl.PutBucketAcl(ctx, &oss.PutBucketAclRequest{Bucket: oss.Ptr(bucket), Acl: oss.BucketACLType(acl)})
		return err
	})
	if err != nil {
		return fmt.Errorf("setting the ACL of bucket %s to %s: %w", bucket, acl, err)
	}
	return nil
}

// SetBucketPublicAccessBlock blocks public access to the bucket.
func (c *Client) SetBucketPublicAccessBlock(ctx context.Context, bucket string) error {
	err := c.OSS(ctx, "PutBucketPublicAccessBlock", func(ctx context.Context, cl *oss.Client) error {
		_, err := cl.PutBucketPublicAccessBlock(ctx, &oss.PutBucketPublicAccessBlockRequest{
			Bucket:                         oss.Ptr(bucket),
			PublicAccessBlockConfiguration: &oss.PublicAccessBlockConfiguration{BlockPublicAccess: oss.Ptr(true)},
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("blocking public access to bucket %s: %w", bucket, err)
	}
	return nil
}

// SetBucketVersioning turns versioning on.
func (c *Client) SetBucketVersioning(ctx context.Context, bucket string) error {
	err := c.OSS(ctx, "PutBucketVersioning", func(ctx context.Context, cl *oss.Client) error {
		_, err := cl.PutBucketVersioning(ctx, &oss.PutBucketVersioningRequest{
			Bucket:                  oss.Ptr(bucket),
			VersioningConfiguration: &oss.VersioningConfiguration{Status: oss.VersionEnabled},
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("turning on versioning of bucket %s: %w", bucket, err)
	}
	return nil
}

// SetBucketEncryption sets (AES256) or removes default server-side encryption.
func (c *Client) SetBucketEncryption(ctx context.Context, bucket string, on bool) error {
	if on {
		return c.SetBucketEncryptionAlgorithm(ctx, bucket, "AES256")
	}
	err := c.OSS(ctx, "DeleteBucketEncryption", func(ctx context.Context, cl *oss.Client) error {
		_, err := cl.DeleteBucketEncryption(ctx, &oss.DeleteBucketEncryptionRequest{Bucket: oss.Ptr(bucket)})
		return err
	})
	if err != nil {
		return fmt.Errorf("setting the encryption of bucket %s: %w", bucket, err)
	}
	return nil
}

// SetBucketEncryptionAlgorithm sets the bucket's default server-side encryption to algorithm:
// AES256 or SM4 (keys OSS manages), or KMS with the key KMS manages for OSS in the region (no
// KMSMasterKeyID) (https://www.alibabacloud.com/help/en/oss/developer-reference/putbucketencryption).
func (c *Client) SetBucketEncryptionAlgorithm(ctx context.Context, bucket, algorithm string) error {
	err := c.OSS(ctx, "PutBucketEncryption", func(ctx context.Context, cl *oss.Client) error {
		_, err := cl.PutBucketEncryption(ctx, &oss.PutBucketEncryptionRequest{
			Bucket: oss.Ptr(bucket),
			ServerSideEncryptionRule: &oss.ServerSideEncryptionRule{
				ApplyServerSideEncryptionByDefault: &oss.ApplyServerSideEncryptionByDefault{SSEAlgorithm: oss.Ptr(algorithm)},
			},
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("setting the encryption of bucket %s to %s: %w", bucket, algorithm, err)
	}
	return nil
}

// Bucket is what the provider keeps of a bucket's settings.
type Bucket struct {
	Name string
	// ACL (private, public-read...) and Versioning (Enabled, Suspended, or "" when never set).
	ACL, Versioning   string
	BlockPublicAccess bool
	// Encrypted: default server-side encryption is on (any algorithm); SSEAlgorithm names it
	// (AES256, KMS, SM4, or "").
	Encrypted    bool
	SSEAlgorithm string
	// OwnerID is the id of the account that owns the bucket, the uid a bucket policy names it by
	// (https://www.alibabacloud.com/help/en/oss/developer-reference/getbucketinfo).
	OwnerID string
}

// FindBucket returns the bucket's settings, or an error matching ErrNotFound (NoSuchBucket).
func (c *Client) FindBucket(ctx context.Context, bucket string) (*Bucket, error) {
	var out *Bucket
	err := c.OSS(ctx, "GetBucketInfo", func(ctx context.Context, cl *oss.Client) error {
		res, err := cl.GetBucketInfo(ctx, &oss.GetBucketInfoRequest{Bucket: oss.Ptr(bucket)})
		if err == nil {
			info := res.BucketInfo
			sse := oss.ToString(info.SseRule.SSEAlgorithm)
			out = &Bucket{Name: bucket, ACL: oss.ToString(info.ACL), Versioning: oss.ToString(info.Versioning),
				BlockPublicAccess: info.BlockPublicAccess != nil && *info.BlockPublicAccess,
				Encrypted:         sse != "" && sse != "None", SSEAlgorithm: sse}
			if info.Owner != nil {
				out.OwnerID = oss.ToString(info.Owner.ID)
			}
		}
		return err
	})
	return out, err
}

// WaitBucketDeleted waits until FindBucket says not found.
func (c *Client) WaitBucketDeleted(ctx context.Context, bucket string) error {
	return waitGone(ctx, "bucket "+bucket, func() error { _, err := c.FindBucket(ctx, bucket); return err })
}

// LifecycleRule is the one lifecycle rule the provider manages on a bucket, over the whole
// bucket: transitions by days since last modification, and an optional expiry.
type LifecycleRule struct {
	ID          string
	Transitions map[string]int // storage class -> days
	ExpireDays  int
}

// FindLifecycleRule returns the bucket's lifecycle rule with this id, or nil when there is none.
func (c *Client) FindLifecycleRule(ctx context.Context, bucket, id string) (*LifecycleRule, error) {
	rules, err := c.lifecycleRules(ctx, bucket)
	if err != nil {
		return nil, err
	}
	for _, r := range rules {
		if oss.ToString(r.ID) != id || oss.ToString(r.Status) != "Enabled" {
			continue
		}
		out := &LifecycleRule{ID: id, Transitions: map[string]int{}}
		for _, t := range r.Transitions {
			if t.Days != nil {
				out.Transitions[string(t.StorageClass)] = int(*t.Days)
			}
		}
		if r.Expiration != nil && r.Expiration.Days != nil {
			out.ExpireDays = int(*r.Expiration.Days)
		}
		return out, nil
	}
	return nil, nil
}

// lifecycleRules are the bucket's lifecycle rules, none without a configuration.
func (c *Client) lifecycleRules(ctx context.Context, bucket string) ([]oss.LifecycleRule, error) {
	var rules []oss.LifecycleRule
	err := c.OSS(ctx, "GetBucketLifecycle", func(ctx context.Context, cl *oss.Client) error {
		res, err := cl.GetBucketLifecycle(ctx, &oss.GetBucketLifecycleRequest{Bucket: oss.Ptr(bucket)})
		if err == nil && res.LifecycleConfiguration != nil {
			rules = res.LifecycleConfiguration.Rules
		}
		return err
	})
	if IsCode(err, "NoSuchLifecycle") {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the lifecycle of bucket %s: %w", bucket, err)
	}
	return rules, nil
}

// PutLifecycleRule replaces the bucket's lifecycle configuration with this one rule; nil removes
// the configuration.
func (c *Client) PutLifecycleRule(ctx context.Context, bucket string, rule *LifecycleRule) error {
	if rule == nil {
		return c.putLifecycleRules(ctx, bucket, nil)
	}
	r := oss.LifecycleRule{ID: oss.Ptr(rule.ID), Prefix: oss.Ptr(""), Status: oss.Ptr("Enabled")}
	classes := make([]string, 0, len(rule.Transitions))
	for class := range rule.Transitions {
		classes = append(classes, class)
	}
	sort.Slice(classes, func(i, j int) bool { return rule.Transitions[classes[i]] < rule.Transitions[classes[j]] })
	for _, class := range classes {
		r.Transitions = append(r.Transitions, oss.LifecycleRuleTransition{
			Days: oss.Ptr(int32(rule.Transitions[class])), StorageClass: oss.StorageClassType(class)})
	}
	if rule.ExpireDays > 0 {
		r.Expiration = &oss.LifecycleRuleExpiration{Days: oss.Ptr(int32(rule.ExpireDays))}
	}
	return c.putLifecycleRules(ctx, bucket, []oss.LifecycleRule{r})
}

// putLifecycleRules replaces the bucket's lifecycle configuration with rules; none removes the
// configuration (PutBucketLifecycle takes at least one rule).
func (c *Client) putLifecycleRules(ctx context.Context, bucket string, rules []oss.LifecycleRule) error {
	if len(rules) == 0 {
		err := c.OSS(ctx, "DeleteBucketLifecycle", func(ctx context.Context, cl *oss.Client) error {
			_, err := cl.DeleteBucketLifecycle(ctx, &oss.DeleteBucketLifecycleRequest{Bucket: oss.Ptr(bucket)})
			return err
		})
		if err != nil && !IsNotFound(err) {
			return fmt.Errorf("removing the lifecycle of bucket %s: %w", bucket, err)
		}
		return nil
	}
	err := c.OSS(ctx, "PutBucketLifecycle", func(ctx context.Context, cl *oss.Client) error {
		_, err := cl.PutBucketLifecycle(ctx, &oss.PutBucketLifecycleRequest{
			Bucket: oss.Ptr(bucket), LifecycleConfiguration: &oss.LifecycleConfiguration{Rules: rules}})
		return err
	})
	if err != nil {
		return fmt.Errorf("setting the lifecycle of bucket %s: %w", bucket, err)
	}
	return nil
}

// BucketTags returns the bucket's tags.
func (c *Client) BucketTags(ctx context.Context, bucket string) (map[string]string, error) {
	out := map[string]string{}
	err := c.OSS(ctx, "GetBucketTags", func(ctx context.Context, cl *oss.Client) error {
		res, err := cl.GetBucketTags(ctx, &oss.GetBucketTagsRequest{Bucket: oss.Ptr(bucket)})
		if err == nil && res.Tagging != nil && res.Tagging.TagSet != nil {
			for _, t := range res.Tagging.TagSet.Tags {
				out[oss.ToString(t.Key)] = oss.ToString(t.Value)
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the tags of bucket %s: %w", bucket, err)
	}
	return out, nil
}

// SetBucketTags replaces the bucket's tags; an empty map removes them.
func (c *Client) SetBucketTags(ctx context.Context, bucket string, tags map[string]string) error {
	var err error
	if len(tags) == 0 {
		err = c.OSS(ctx, "DeleteBucketTags", func(ctx context.Context, cl *oss.Client) error {
			_, err := cl.DeleteBucketTags(ctx, &oss.DeleteBucketTagsRequest{Bucket: oss.Ptr(bucket)})
			return err
		})
	} else {
		keys := make([]string, 0, len(tags))
		for k := range tags {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		set := &oss.TagSet{}
		for _, k := range keys {
			set.Tags = append(set.Tags, oss.Tag{Key: oss.Ptr(k), Value: oss.Ptr(tags[k])})
		}
		err = c.OSS(ctx, "PutBucketTags", func(ctx context.Context, cl *oss.Client) error {
			_, err := cl.PutBucketTags(ctx, &oss.PutBucketTagsRequest{Bucket: oss.Ptr(bucket), Tagging: &oss.Tagging{TagSet: set}})
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("setting the tags of bucket %s: %w", bucket, err)
	}
	return nil
}

// ObjectVersion is one object version (or delete marker) in a bucket.
type ObjectVersion struct{ Key, VersionID string }

// ListObjectVersions lists up to limit object versions and delete markers (limit <= 0: all).
// A service that does not implement version listing (NotImplemented) is asked for the plain
// object list instead, each entry without a version id.
func (c *Client) ListObjectVersions(ctx context.Context, bucket string, limit int) ([]ObjectVersion, error) {
	out, err := c.listVersions(ctx, bucket, "", limit)
	if IsCode(err, "NotImplemented") {
		return c.listObjectsPlain(ctx, bucket, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("listing object versions of bucket %s: %w", bucket, err)
	}
	return out, nil
}

func (c *Client) listObjectsPlain(ctx context.Context, bucket string, limit int) ([]ObjectVersion, error) {
	out, err := pageThrough("objects of bucket "+bucket, "", limit, func(token string) ([]ObjectVersion, string, bool, error) {
		var res *oss.ListObjectsV2Result
		err := c.OSS(ctx, "ListObjectsV2", func(ctx context.Context, cl *oss.Client) error {
			var err error
			req := &oss.ListObjectsV2Request{Bucket: oss.Ptr(bucket)}
			if token != "" {
				req.ContinuationToken = oss.Ptr(token)
			}
			res, err = cl.ListObjectsV2(ctx, req)
			return err
		})
		if err != nil {
			return nil, token, false, err
		}
		page := make([]ObjectVersion, 0, len(res.Contents))
		for _, o := range res.Contents {
			page = append(page, ObjectVersion{Key: oss.ToString(o.Key)})
		}
		return page, oss.ToString(res.NextContinuationToken), res.IsTruncated, nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing objects of bucket %s: %w", bucket, err)
	}
	return out, nil
}

// EmptyBucket deletes every object version and delete marker in the bucket.
func (c *Client) EmptyBucket(ctx context.Context, bucket string) error {
	versions, err := c.ListObjectVersions(ctx, bucket, 0)
	if err != nil {
		return err
	}
	return c.deleteVersions(ctx, bucket, versions, func(string) bool { return true })
}

// DeleteBucket deletes an empty bucket and waits until it is gone; not found counts as done.
func (c *Client) DeleteBucket(ctx context.Context, bucket string) error {
	err := c.OSS(ctx, "DeleteBucket", func(ctx context.Context, cl *oss.Client) error {
		_, err := cl.DeleteBucket(ctx, &oss.DeleteBucketRequest{Bucket: oss.Ptr(bucket)})
		return err
	})
	if err != nil && !IsNotFound(err) {
		return fmt.Errorf("deleting bucket %s: %w", bucket, err)
	}
	return c.WaitBucketDeleted(ctx, bucket)
}
