package cloud

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

// Objects and bucket policies: what the node bootstrap bundle (internal/bundle, issue #31) needs
// of OSS. Every call goes through c.OSS, so it is retried and its errors mapped as the bucket
// calls are.

// PutObject uploads body as the object at key. The body is read again on every attempt, so a
// retried upload sends the whole object.
func (c *Client) PutObject(ctx context.Context, bucket, key string, body []byte, contentType string) error {
	err := c.OSS(ctx, "PutObject", func(ctx context.Context, cl *oss.Client) error {
		req := &oss.PutObjectRequest{Bucket: oss.Ptr(bucket), Key: oss.Ptr(key), Body: bytes.NewReader(body)}
		if contentType != "" {
			req.ContentType = oss.Ptr(contentType)
		}
		_, err := cl.PutObject(ctx, req)
		return err
	})
	if err != nil {
		return fmt.Errorf("uploading %s to bucket %s: %w", key, bucket, err)
	}
	return nil
}

// ObjectInfo is what HeadObject tells of an object.
type ObjectInfo struct {
	Key  string
	Size int64
	// ETag is OSS's, quotes removed.
	ETag string
}

// HeadObject returns the object's size and ETag, or an error matching ErrNotFound when the
// bucket has no such key (OSS answers a HEAD of a missing key 404 NoSuchKey).
func (c *Client) HeadObject(ctx context.Context, bucket, key string) (*ObjectInfo, error) {
	var out *ObjectInfo
	err := c.OSS(ctx, "HeadObject", func(ctx context.Context, cl *oss.Client) error {
		res, err := cl.HeadObject(ctx, &oss.HeadObjectRequest{Bucket: oss.Ptr(bucket), Key: oss.Ptr(key)})
		if err == nil {
			out = &ObjectInfo{Key: key, Size: res.ContentLength, ETag: strings.Trim(oss.ToString(res.ETag), `"`)}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s in bucket %s: %w", key, bucket, err)
	}
	return out, nil
}

// GetObject reads the object at key whole, with the provider's credentials (the bucket owner's,
// which a bucket policy does not narrow: https://www.alibabacloud.com/help/en/oss/user-guide/bucket-policy/).
// A missing key matches ErrNotFound (OSS answers 404 NoSuchKey).
func (c *Client) GetObject(ctx context.Context, bucket, key string) ([]byte, error) {
	var out []byte
	err := c.OSS(ctx, "GetObject", func(ctx context.Context, cl *oss.Client) error {
		res, err := cl.GetObject(ctx, &oss.GetObjectRequest{Bucket: oss.Ptr(bucket), Key: oss.Ptr(key)})
		if err != nil {
			return err
		}
		defer res.Body.Close()
		out, err = io.ReadAll(res.Body)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s in bucket %s: %w", key, bucket, err)
	}
	return out, nil
}

// DeleteObject deletes every version of the object at key, and its delete markers: in a
// versioned bucket (the provider's are) a plain DeleteObject only hides the object behind a
// delete marker and keeps its bytes
// (https://www.alibabacloud.com/help/en/oss/user-guide/delete-objects-18), which for a bootstrap
// bundle would keep the keys it holds. A key that does not exist is no error.
func (c *Client) DeleteObject(ctx context.Context, bucket, key string) error {
	return c.DeleteObjectsUnder(ctx, bucket, key, func(k string) bool { return k == key })
}

// ObjectKeysUnder lists the keys under prefix that have a version or a delete marker, each once,
// sorted.
func (c *Client) ObjectKeysUnder(ctx context.Context, bucket, prefix string) ([]string, error) {
	versions, err := c.listVersions(ctx, bucket, prefix, 0)
	if err != nil {
		return nil, fmt.Errorf("listing object versions under %s in bucket %s: %w", prefix, bucket, err)
	}
	keys := make([]string, 0, len(versions))
	for _, v := range versions {
		keys = append(keys, v.Key)
	}
	slices.Sort(keys)
	return slices.Compact(keys), nil
}

// DeleteObjectsUnder deletes every version and delete marker of the objects whose key starts
// with prefix and that del answers true for (del nil: all of them).
func (c *Client) DeleteObjectsUnder(ctx context.Context, bucket, prefix string, del func(key string) bool) error {
	versions, err := c.listVersions(ctx, bucket, prefix, 0)
	if err != nil {
		return fmt.Errorf("listing object versions under %s in bucket %s: %w", prefix, bucket, err)
	}
	if del == nil {
		del = func(string) bool { return true }
	}
	return c.deleteVersions(ctx, bucket, versions, del)
}

// deleteVersions deletes each version (or delete marker) whose key del answers true for; one
// already gone is no error.
func (c *Client) deleteVersions(ctx context.Context, bucket string, versions []ObjectVersion, del func(key string) bool) error {
	for _, v := range versions {
		if !del(v.Key) {
			continue
		}
		req := &oss.DeleteObjectRequest{Bucket: oss.Ptr(bucket), Key: oss.Ptr(v.Key)}
		if v.VersionID != "" {
			req.VersionId = oss.Ptr(v.VersionID)
		}
		err := c.OSS(ctx, "DeleteObject", func(ctx context.Context, cl *oss.Client) error {
			_, err := cl.DeleteObject(ctx, req)
			return err
		})
		if err != nil && !IsNotFound(err) {
			return fmt.Errorf("deleting %s from bucket %s: %w", v.Key, bucket, err)
		}
	}
	return nil
}

// listVersions lists up to limit (<= 0: all) versions and delete markers of the keys under
// prefix ("" for the whole bucket).
func (c *Client) listVersions(ctx context.Context, bucket, prefix string, limit int) ([]ObjectVersion, error) {
	// Version listing pages by two markers, both "" for the first page.
	type markers struct{ key, version string }
	return pageThrough("object versions of bucket "+bucket, markers{}, limit, func(m markers) ([]ObjectVersion, markers, bool, error) {
		var res *oss.ListObjectVersionsResult
		err := c.OSS(ctx, "ListObjectVersions", func(ctx context.Context, cl *oss.Client) error {
			var err error
			req := &oss.ListObjectVersionsRequest{Bucket: oss.Ptr(bucket)}
			if prefix != "" {
				req.Prefix = oss.Ptr(prefix)
			}
			if m != (markers{}) {
				req.KeyMarker, req.VersionIdMarker = oss.Ptr(m.key), oss.Ptr(m.version)
			}
			res, err = cl.ListObjectVersions(ctx, req)
			return err
		})
		if err != nil {
			return nil, m, false, err
		}
		page := make([]ObjectVersion, 0, len(res.ObjectVersions)+len(res.ObjectDeleteMarkers))
		for _, v := range res.ObjectVersions {
			page = append(page, ObjectVersion{Key: oss.ToString(v.Key), VersionID: oss.ToString(v.VersionId)})
		}
		for _, d := range res.ObjectDeleteMarkers {
			page = append(page, ObjectVersion{Key: oss.ToString(d.Key), VersionID: oss.ToString(d.VersionId)})
		}
		return page, markers{oss.ToString(res.NextKeyMarker), oss.ToString(res.NextVersionIdMarker)}, res.IsTruncated, nil
	})
}

// PutBucketPolicy replaces the bucket's policy with policy, a JSON policy document
// (https://www.alibabacloud.com/help/en/oss/developer-reference/putbucketpolicy).
func (c *Client) PutBucketPolicy(ctx context.Context, bucket, policy string) error {
	err := c.OSS(ctx, "PutBucketPolicy", func(ctx context.Context, cl *oss.Client) error {
		_, err := cl.PutBucketPolicy(ctx, &oss.PutBucketPolicyRequest{Bucket: oss.Ptr(bucket), Body: strings.NewReader(policy)})
		return err
	})
	if err != nil {
		return fmt.Errorf("setting the policy of bucket %s: %w", bucket, err)
	}
	return nil
}

// BucketPolicy is the bucket's policy document as OSS holds it; a bucket without one answers an
// error matching ErrNotFound (NoSuchBucketPolicy,
// https://www.alibabacloud.com/help/en/oss/developer-reference/getbucketpolicy).
func (c *Client) BucketPolicy(ctx context.Context, bucket string) (string, error) {
	var doc string
	err := c.OSS(ctx, "GetBucketPolicy", func(ctx context.Context, cl *oss.Client) error {
		res, err := cl.GetBucketPolicy(ctx, &oss.GetBucketPolicyRequest{Bucket: oss.Ptr(bucket)})
		if err == nil {
			doc = res.Body
		}
		return err
	})
	return doc, err
}
