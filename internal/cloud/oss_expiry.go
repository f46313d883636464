package cloud

import (
	"context"
	"sort"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

// PrefixExpiry is a lifecycle rule that deletes what is under Prefix after Days: an object Days
// after it was last written (in a versioned bucket it becomes a noncurrent version behind a
// delete marker), and a noncurrent version Days after it became one
// (Expiration and NoncurrentVersionExpiration, https://www.alibabacloud.com/help/en/oss/developer-reference/putbucketlifecycle;
// versioned buckets: https://www.alibabacloud.com/help/en/oss/user-guide/lifecycle-rules-based-on-the-last-modified-time-for-versioning-enabled-buckets).
type PrefixExpiry struct {
	ID     string
	Prefix string
	Days   int
}

// PutPrefixExpiries replaces the bucket's lifecycle configuration with these rules, one per
// prefix; none removes the configuration.
func (c *Client) PutPrefixExpiries(ctx context.Context, bucket string, rules []PrefixExpiry) error {
	out := make([]oss.LifecycleRule, 0, len(rules))
	for _, r := range rules {
		out = append(out, oss.LifecycleRule{ID: oss.Ptr(r.ID), Prefix: oss.Ptr(r.Prefix), Status: oss.Ptr("Enabled"),
			Expiration:                  &oss.LifecycleRuleExpiration{Days: oss.Ptr(int32(r.Days))},
			NoncurrentVersionExpiration: &oss.NoncurrentVersionExpiration{NoncurrentDays: oss.Ptr(int32(r.Days))}})
	}
	return c.putLifecycleRules(ctx, bucket, out)
}

// PrefixExpiries are the bucket's enabled lifecycle rules that are PrefixExpiry's: a prefix, an
// expiry in days and the same for noncurrent versions, nothing else. Sorted by prefix.
func (c *Client) PrefixExpiries(ctx context.Context, bucket string) ([]PrefixExpiry, error) {
	rules, err := c.lifecycleRules(ctx, bucket)
	if err != nil {
		return nil, err
	}
	var out []PrefixExpiry
	for _, r := range rules {
		e, nc := r.Expiration, r.NoncurrentVersionExpiration
		if oss.ToString(r.Status) != "Enabled" || e == nil || e.Days == nil || nc == nil || nc.NoncurrentDays == nil ||
			*e.Days != *nc.NoncurrentDays || len(r.Transitions) > 0 || len(r.NoncurrentVersionTransitions) > 0 {
			continue
		}
		out = append(out, PrefixExpiry{ID: oss.ToString(r.ID), Prefix: oss.ToString(r.Prefix), Days: int(*e.Days)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Prefix < out[j].Prefix })
	return out, nil
}
