package storage

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/storageplan"
)

// coldSpec is a cold tier's bucket with a two-step lifecycle.
func coldSpec() BucketSpec {
	return BucketSpec{Name: "cold-archive-test", Encrypted: true, UserTags: map[string]string{"team": "ml"},
		Lifecycle: &storageplan.Lifecycle{IAAfterDays: 30, ArchiveAfterDays: 90}}
}

// putObject puts one object into the bucket, as a user of the tier would.
func putObject(ctx context.Context, t *testing.T, c *cloud.Client, bucket, key string) {
	t.Helper()
	err := c.OSS(ctx, "PutObject", func(ctx context.Context, cl *oss.Client) error {
		_, err := cl.PutObject(ctx, &oss.PutObjectRequest{Bucket: oss.Ptr(bucket), Key: oss.Ptr(key), Body: strings.NewReader("data")})
		return err
	})
	if err != nil {
		t.Fatalf("putting %s into %s: %v", key, bucket, err)
	}
}

// checkTierBucket fails unless the bucket is at the tier's settings, tags and lifecycle rule.
func checkTierBucket(ctx context.Context, t *testing.T, c *cloud.Client, spec BucketSpec) {
	t.Helper()
	st, err := ReadBucket(ctx, c, spec.Name, true)
	if err != nil {
		t.Fatalf("ReadBucket: %v", err)
	}
	if s := st.Settings; s.ACL != BucketACL || s.Versioning != BucketVersioning || !s.BlockPublicAccess || s.Encrypted != spec.Encrypted {
		t.Errorf("bucket settings %+v; want %s, %s, public access blocked, encrypted %v", s, BucketACL, BucketVersioning, spec.Encrypted)
	}
	for k, v := range Tags(spec.Name, spec.UserTags) {
		if st.Tags[k] != v {
			t.Errorf("bucket tag %s = %q, want %q", k, st.Tags[k], v)
		}
	}
	want := LifecycleRule(spec.Lifecycle)
	if r := st.Lifecycle; r == nil || r.ID != LifecycleRuleID || len(r.Transitions) != len(want.Transitions) ||
		r.Transitions[storageplan.ClassIA] != 30 || r.Transitions[storageplan.ClassArchive] != 90 {
		t.Errorf("lifecycle rule %+v; want %+v", r, want)
	}
}

// An apply killed between PutBucket and PutBucketTags leaves an untagged, empty bucket under the
// tier's name: the next apply adopts it (tags, settings, lifecycle) instead of failing on a name
// taken. Run again, it finds its own tags and adopts again, harmlessly.
func TestCreateBucketAdoptsAfterInterruptedCreate(t *testing.T) {
	ctx := cloudtest.Context(t)
	c := cloudtest.Start(t, 3).Client
	spec := coldSpec()
	err := c.OSS(ctx, "PutBucket", func(ctx context.Context, cl *oss.Client) error {
		_, err := cl.PutBucket(ctx, &oss.PutBucketRequest{Bucket: oss.Ptr(spec.Name)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		b, step, err := CreateBucket(ctx, c, spec)
		if err != nil {
			t.Fatalf("CreateBucket #%d: %s: %v", i+1, step, err)
		}
		if !b.Exists || !b.Adopted {
			t.Errorf("CreateBucket #%d = %+v; want the bucket adopted", i+1, b)
		}
	}
	checkTierBucket(ctx, t, c, spec)
}

// A bucket under the tier's name that is not the tier's (untagged) and holds data is refused, and
// left as it was: untagged, its lifecycle untouched.
func TestCreateBucketRefusesSomeoneElsesBucket(t *testing.T) {
	ctx := cloudtest.Context(t)
	c := cloudtest.Start(t, 3).Client
	spec := coldSpec()
	if err := c.CreateBucket(ctx, cloud.BucketInput{Name: spec.Name}); err != nil {
		t.Fatal(err)
	}
	putObject(ctx, t, c, spec.Name, "someone-elses.csv")
	b, _, err := CreateBucket(ctx, c, spec)
	if err == nil || b.Exists || !strings.Contains(err.Error(), "someone-elses.csv") {
		t.Fatalf("CreateBucket over someone else's bucket = %+v, %v; want refused, naming an object", b, err)
	}
	st, err := ReadBucket(ctx, c, spec.Name, true)
	if err != nil || len(st.Tags) != 0 || st.Lifecycle != nil {
		t.Errorf("the refused bucket: %+v, %v; want it untagged, without lifecycle", st, err)
	}
}

// Delete refuses a bucket holding objects unless forced, and then empties and deletes it; twice
// over is harmless, and nothing is left.
func TestDeleteBucketLeavesNothing(t *testing.T) {
	ctx := cloudtest.Context(t)
	tc := cloudtest.Start(t, 3)
	c, spec := tc.Client, coldSpec()
	if _, step, err := CreateBucket(ctx, c, spec); err != nil {
		t.Fatalf("CreateBucket: %s: %v", step, err)
	}
	putObject(ctx, t, c, spec.Name, "ckpt/step-100")
	putObject(ctx, t, c, spec.Name, "ckpt/step-100") // a second version

	var full *NotEmptyError
	if err := DeleteBucket(ctx, c, spec.Name, false); !errors.As(err, &full) || full.Key != "ckpt/step-100" {
		t.Fatalf("DeleteBucket without force = %v; want a *NotEmptyError naming ckpt/step-100", err)
	}
	if _, err := ReadBucket(ctx, c, spec.Name, false); err != nil {
		t.Fatalf("the refused delete removed something: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := DeleteBucket(ctx, c, spec.Name, true); err != nil {
			t.Fatalf("DeleteBucket with force #%d: %v", i+1, err)
		}
	}
	if _, err := ReadBucket(ctx, c, spec.Name, false); !errors.Is(err, cloud.ErrNotFound) {
		t.Errorf("ReadBucket after delete: %v; want not found", err)
	}
	if b := tc.Emulator.Resources().Buckets; len(b) != 0 {
		t.Errorf("left after DeleteBucket: %v", b)
	}
}

// Throttled OSS calls are retried: the bucket ends at the tier's settings.
func TestCreateBucketUnderThrottling(t *testing.T) {
	ctx := cloudtest.Context(t)
	tc := cloudtest.Start(t, 8)
	spec := coldSpec()
	tc.Emulator.SetFaults(emulator.Faults{ThrottleRate: 0.3})
	_, step, err := CreateBucket(ctx, tc.Client, spec)
	tc.Emulator.SetFaults(emulator.Faults{})
	if err != nil {
		t.Fatalf("CreateBucket under throttling: %s: %v", step, err)
	}
	checkTierBucket(ctx, t, tc.Client, spec)
	if tc.Errors("Throttling.User") == 0 {
		t.Error("no call was throttled: the test proved nothing")
	}
}

// An update restores drifted settings, moves the lifecycle rule and the tags.
func TestUpdateBucketRestoresDriftAndMovesLifecycle(t *testing.T) {
	ctx := cloudtest.Context(t)
	c := cloudtest.Start(t, 3).Client
	spec := coldSpec()
	if _, step, err := CreateBucket(ctx, c, spec); err != nil {
		t.Fatalf("CreateBucket: %s: %v", step, err)
	}
	// Versioning suspended outside Terraform.
	err := c.OSS(ctx, "PutBucketVersioning", func(ctx context.Context, cl *oss.Client) error {
		_, err := cl.PutBucketVersioning(ctx, &oss.PutBucketVersioningRequest{Bucket: oss.Ptr(spec.Name),
			VersioningConfiguration: &oss.VersioningConfiguration{Status: oss.VersionSuspended}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	spec.Lifecycle = &storageplan.Lifecycle{IAAfterDays: 30, ArchiveAfterDays: 90, ExpireAfterDays: 3650}
	spec.UserTags = map[string]string{"team": "infra"}
	err = UpdateBucket(ctx, c, BucketChange{BucketSpec: spec, SettingsDrifted: true, LifecycleChanged: true, TagsChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	checkTierBucket(ctx, t, c, spec)
	if st, _ := ReadBucket(ctx, c, spec.Name, false); st.Lifecycle == nil || st.Lifecycle.ExpireDays != 3650 {
		t.Errorf("lifecycle after the update: %+v; want expiry after 3650 days", st.Lifecycle)
	}
}
