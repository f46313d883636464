package oss_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

func days(n int32) *int32 { return &n }

func transition(class oss.StorageClassType, d int32) oss.LifecycleRuleTransition {
	return oss.LifecycleRuleTransition{StorageClass: class, Days: days(d)}
}

func TestBucketLifecycle(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "tiered")
	bucket := oss.Ptr("tiered")

	_, err := c.GetBucketLifecycle(e.ctx, &oss.GetBucketLifecycleRequest{Bucket: bucket})
	wantServiceError(t, err, 404, "NoSuchLifecycle")

	rules := []oss.LifecycleRule{
		{
			ID:     oss.Ptr("cold-tiering"),
			Prefix: oss.Ptr("checkpoints/"),
			Status: oss.Ptr("Enabled"),
			Transitions: []oss.LifecycleRuleTransition{
				transition(oss.StorageClassArchive, 60), // out of order on purpose: order is by class
				transition(oss.StorageClassIA, 30),
				transition(oss.StorageClassColdArchive, 180),
				transition(oss.StorageClassDeepColdArchive, 360),
			},
			Expiration: &oss.LifecycleRuleExpiration{Days: days(720)},
		},
		{
			ID:                   oss.Ptr("access-ia"),
			Prefix:               oss.Ptr("datasets/"),
			Status:               oss.Ptr("Disabled"),
			Transitions:          []oss.LifecycleRuleTransition{{StorageClass: oss.StorageClassIA, Days: days(30), IsAccessTime: oss.Ptr(true), ReturnToStdWhenVisit: oss.Ptr(true)}},
			AbortMultipartUpload: &oss.LifecycleRuleAbortMultipartUpload{Days: days(7)},
			Tags:                 []oss.Tag{{Key: oss.Ptr("tier"), Value: oss.Ptr("hot")}},
		},
	}
	_, err = c.PutBucketLifecycle(e.ctx, &oss.PutBucketLifecycleRequest{
		Bucket:                 bucket,
		LifecycleConfiguration: &oss.LifecycleConfiguration{Rules: rules},
	})
	mustOK(t, err)

	got, err := c.GetBucketLifecycle(e.ctx, &oss.GetBucketLifecycleRequest{Bucket: bucket})
	mustOK(t, err)
	if !reflect.DeepEqual(got.LifecycleConfiguration.Rules, rules) {
		t.Errorf("rules changed on the round trip:\n got %+v\nwant %+v", got.LifecycleConfiguration.Rules, rules)
	}
	if b := e.h.Buckets(); b[0]["lifecycle_rules"] != 2 {
		t.Errorf("Buckets() lifecycle_rules = %v", b[0]["lifecycle_rules"])
	}

	// A rule without an ID gets one, as on OSS.
	_, err = c.PutBucketLifecycle(e.ctx, &oss.PutBucketLifecycleRequest{
		Bucket: bucket,
		LifecycleConfiguration: &oss.LifecycleConfiguration{Rules: []oss.LifecycleRule{
			{Prefix: oss.Ptr("logs/"), Status: oss.Ptr("Enabled"), Expiration: &oss.LifecycleRuleExpiration{Days: days(30)}},
		}},
	})
	mustOK(t, err)
	got, err = c.GetBucketLifecycle(e.ctx, &oss.GetBucketLifecycleRequest{Bucket: bucket})
	mustOK(t, err)
	if r := got.LifecycleConfiguration.Rules; len(r) != 1 || oss.ToString(r[0].ID) == "" {
		t.Errorf("rules after replace: %+v", r)
	}

	_, err = c.DeleteBucketLifecycle(e.ctx, &oss.DeleteBucketLifecycleRequest{Bucket: bucket})
	mustOK(t, err)
	_, err = c.GetBucketLifecycle(e.ctx, &oss.GetBucketLifecycleRequest{Bucket: bucket})
	wantServiceError(t, err, 404, "NoSuchLifecycle")
	_, err = c.GetBucketLifecycle(e.ctx, &oss.GetBucketLifecycleRequest{Bucket: oss.Ptr("missing-bucket")})
	wantServiceError(t, err, 404, "NoSuchBucket")
}

func TestBucketLifecycleRejectsBadRules(t *testing.T) {
	e := newEnv(t)
	c := e.defaultClient()
	createBucket(t, c, "tiered")

	rule := func(mod func(r *oss.LifecycleRule)) oss.LifecycleRule {
		r := oss.LifecycleRule{ID: oss.Ptr("r1"), Prefix: oss.Ptr("a/"), Status: oss.Ptr("Enabled")}
		mod(&r)
		return r
	}
	cases := map[string]struct {
		rules   []oss.LifecycleRule
		code    string
		message string
	}{
		"archive before IA": {rules: []oss.LifecycleRule{rule(func(r *oss.LifecycleRule) {
			r.Transitions = []oss.LifecycleRuleTransition{transition(oss.StorageClassIA, 90), transition(oss.StorageClassArchive, 30)}
		})}, code: "InvalidArgument", message: "must come after"},
		"same days": {rules: []oss.LifecycleRule{rule(func(r *oss.LifecycleRule) {
			r.Transitions = []oss.LifecycleRuleTransition{transition(oss.StorageClassColdArchive, 180), transition(oss.StorageClassDeepColdArchive, 180)}
		})}, code: "InvalidArgument", message: "must come after"},
		"standard is not a transition target": {rules: []oss.LifecycleRule{rule(func(r *oss.LifecycleRule) {
			r.Transitions = []oss.LifecycleRuleTransition{transition(oss.StorageClassStandard, 30)}
		})}, code: "InvalidArgument", message: "invalid"},
		"access time only to IA": {rules: []oss.LifecycleRule{rule(func(r *oss.LifecycleRule) {
			r.Transitions = []oss.LifecycleRuleTransition{{StorageClass: oss.StorageClassArchive, Days: days(60), IsAccessTime: oss.Ptr(true)}}
		})}, code: "InvalidArgument", message: "last access time"},
		"expiration before transition": {rules: []oss.LifecycleRule{rule(func(r *oss.LifecycleRule) {
			r.Transitions = []oss.LifecycleRuleTransition{transition(oss.StorageClassIA, 30)}
			r.Expiration = &oss.LifecycleRuleExpiration{Days: days(10)}
		})}, code: "InvalidArgument", message: "expiration"},
		"no action": {rules: []oss.LifecycleRule{rule(func(r *oss.LifecycleRule) {})}, code: "InvalidArgument", message: "no action"},
		"bad status": {rules: []oss.LifecycleRule{rule(func(r *oss.LifecycleRule) {
			r.Status = oss.Ptr("On")
			r.Expiration = &oss.LifecycleRuleExpiration{Days: days(1)}
		})}, code: "MalformedXML"},
		"duplicate id": {rules: []oss.LifecycleRule{
			rule(func(r *oss.LifecycleRule) { r.Expiration = &oss.LifecycleRuleExpiration{Days: days(1)} }),
			rule(func(r *oss.LifecycleRule) { r.Expiration = &oss.LifecycleRuleExpiration{Days: days(2)} }),
		}, code: "InvalidArgument", message: "twice"},
		"date not at midnight": {rules: []oss.LifecycleRule{rule(func(r *oss.LifecycleRule) {
			r.Transitions = []oss.LifecycleRuleTransition{{StorageClass: oss.StorageClassIA, CreatedBeforeDate: oss.Ptr("2024-01-01T12:00:00.000Z")}}
		})}, code: "InvalidArgument", message: "00:00:00"},
		"empty configuration": {rules: nil, code: "MalformedXML"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := c.PutBucketLifecycle(e.ctx, &oss.PutBucketLifecycleRequest{
				Bucket:                 oss.Ptr("tiered"),
				LifecycleConfiguration: &oss.LifecycleConfiguration{Rules: tc.rules},
			})
			se := serviceError(t, err, 400, tc.code)
			if !strings.Contains(se.Message, tc.message) {
				t.Errorf("message %q does not mention %q", se.Message, tc.message)
			}
		})
	}
	// Nothing was stored by the rejected requests.
	_, err := c.GetBucketLifecycle(e.ctx, &oss.GetBucketLifecycleRequest{Bucket: oss.Ptr("tiered")})
	wantServiceError(t, err, 404, "NoSuchLifecycle")

	// Date-based transitions: older objects go to colder classes.
	_, err = c.PutBucketLifecycle(e.ctx, &oss.PutBucketLifecycleRequest{
		Bucket: oss.Ptr("tiered"),
		LifecycleConfiguration: &oss.LifecycleConfiguration{Rules: []oss.LifecycleRule{rule(func(r *oss.LifecycleRule) {
			r.Transitions = []oss.LifecycleRuleTransition{
				{StorageClass: oss.StorageClassIA, CreatedBeforeDate: oss.Ptr("2024-06-01T00:00:00.000Z")},
				{StorageClass: oss.StorageClassArchive, CreatedBeforeDate: oss.Ptr("2024-01-01T00:00:00.000Z")},
			}
		})}},
	})
	mustOK(t, err)
}
