package storage

// The cold tier: an OSS bucket, private, versioned, public access blocked, with one lifecycle
// rule. Bucket names are global, so the tier's name is also the bucket's and its id.

import (
	"context"
	"fmt"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/storageplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// LifecycleRuleID names the one lifecycle rule the provider manages on a tier's bucket.
const LifecycleRuleID = "gpucluster-tiering"

// The settings every bucket is held to (cloud.ApplyBucketSettings); changed outside Terraform,
// they show in the next plan (bucket_acl, bucket_versioning, bucket_block_public_access) and the
// apply restores them.
const (
	BucketACL        = "private"
	BucketVersioning = "Enabled"
)

// BucketSpec is a cold tier's bucket as the plan has it.
type BucketSpec struct {
	// Name is the tier's and the bucket's.
	Name      string
	Encrypted bool
	UserTags  map[string]string
	// Lifecycle is the bucket's one lifecycle rule; nil or zero: none.
	Lifecycle *storageplan.Lifecycle
}

// LifecycleRule is the bucket's rule for l; nil (no rule) when l is nil or zero.
func LifecycleRule(l *storageplan.Lifecycle) *cloud.LifecycleRule {
	if l == nil || l.IsZero() {
		return nil
	}
	rule := &cloud.LifecycleRule{ID: LifecycleRuleID, Transitions: map[string]int{}, ExpireDays: l.ExpireAfterDays}
	for _, t := range l.Transitions() {
		rule.Transitions[t.StorageClass] = t.Days
	}
	return rule
}

// Bucket is what CreateBucket made or adopted.
type Bucket struct {
	// Exists: the bucket is there and is the tier's (its id belongs in the state), also when a
	// later step failed.
	Exists bool
	// Adopted: the bucket was left by an earlier, interrupted apply and taken over.
	Adopted bool
}

// CreateBucket makes the tier's bucket, tagged and at the provider's settings, or adopts one an
// interrupted apply left (adoptBucket), then puts its lifecycle rule. It returns the failed step
// with the error.
func CreateBucket(ctx context.Context, c *cloud.Client, spec BucketSpec) (Bucket, string, error) {
	adopted, err := adoptBucket(ctx, c, spec)
	if err != nil {
		return Bucket{}, "", err
	}
	if !adopted {
		err := c.CreateBucket(ctx, cloud.BucketInput{Name: spec.Name, Encrypted: spec.Encrypted, Tags: Tags(spec.Name, spec.UserTags)})
		if err != nil {
			return Bucket{}, "", err
		}
	}
	out := Bucket{Exists: true, Adopted: adopted}
	if err := c.PutLifecycleRule(ctx, spec.Name, LifecycleRule(spec.Lifecycle)); err != nil {
		return out, StepLifecycle, err
	}
	return out, "", nil
}

// adoptBucket looks for the tier's bucket before creating it: bucket names are global, so the
// deterministic name is the finder. A bucket this account can read that carries the tier's tags,
// or that is untagged and empty (an apply interrupted between PutBucket and PutBucketTags), is
// adopted: tagged and brought to the tier's settings; it reports true. Anything else under the
// name is refused rather than taken over.
func adoptBucket(ctx context.Context, c *cloud.Client, spec BucketSpec) (bool, error) {
	name := spec.Name
	_, err := c.FindBucket(ctx, name)
	if cloud.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking for an existing bucket %s: %w", name, err)
	}
	have, err := c.BucketTags(ctx, name)
	if err != nil {
		return false, err
	}
	if have[tagging.ManagedBy] != tagging.ManagedByVal || have[tagging.StorageTier] != name {
		some, err := c.ListObjectVersions(ctx, name, 1)
		if err != nil {
			return false, err
		}
		if len(some) > 0 {
			return false, fmt.Errorf("bucket %s already exists in this account, holds objects (for example %q) and does not carry "+
				"the tags %s = %s and %s = %s that mark a bucket made by gpucluster_storage_tier, so it was not taken over: "+
				"import it (terraform import gpucluster_storage_tier.<name> %s) or choose another name",
				name, some[0].Key, tagging.ManagedBy, tagging.ManagedByVal, tagging.StorageTier, name, name)
		}
	}
	if err := c.SetBucketTags(ctx, name, Tags(name, spec.UserTags)); err != nil {
		return false, err
	}
	if err := c.ApplyBucketSettings(ctx, name, spec.Encrypted); err != nil {
		return false, err
	}
	return true, nil
}

// BucketState is a tier's bucket as the cloud has it.
type BucketState struct {
	// Settings carry the ACL, versioning and public access with the bucket info: drift costs no
	// extra call.
	Settings  cloud.Bucket
	Lifecycle *cloud.LifecycleRule
	// Tags are all the bucket's tags, read only when asked for.
	Tags map[string]string
}

// ReadBucket reads the bucket, its lifecycle rule and, withTags, its tags. A bucket deleted
// outside answers an error matching cloud.ErrNotFound.
func ReadBucket(ctx context.Context, c *cloud.Client, name string, withTags bool) (BucketState, error) {
	info, err := c.FindBucket(ctx, name)
	if err != nil {
		return BucketState{}, err
	}
	out := BucketState{Settings: *info}
	if out.Lifecycle, err = c.FindLifecycleRule(ctx, name, LifecycleRuleID); err != nil {
		return out, err
	}
	if withTags {
		if out.Tags, err = c.BucketTags(ctx, name); err != nil {
			return out, err
		}
	}
	return out, nil
}

// BucketChange is an update of a tier's bucket: the spec, and which parts of it differ from the
// state. Each part is brought to the spec only when it differs.
type BucketChange struct {
	BucketSpec
	// SettingsDrifted: the ACL, versioning or public access block was changed outside Terraform.
	SettingsDrifted                                  bool
	LifecycleChanged, EncryptionChanged, TagsChanged bool
}

// UpdateBucket brings what changed of the bucket to the spec.
func UpdateBucket(ctx context.Context, c *cloud.Client, ch BucketChange) error {
	name := ch.Name
	if ch.SettingsDrifted {
		// Changed outside Terraform: back to private, versioned, public access blocked.
		if err := c.ApplyBucketSettings(ctx, name, ch.Encrypted); err != nil {
			return err
		}
	}
	if ch.LifecycleChanged {
		if err := c.PutLifecycleRule(ctx, name, LifecycleRule(ch.Lifecycle)); err != nil {
			return err
		}
	}
	if ch.EncryptionChanged {
		if err := c.SetBucketEncryption(ctx, name, ch.Encrypted); err != nil {
			return err
		}
	}
	if ch.TagsChanged {
		return c.SetBucketTags(ctx, name, Tags(name, ch.UserTags))
	}
	return nil
}

// NotEmptyError is DeleteBucket's answer for a bucket that still holds objects when not forced:
// nothing was deleted.
type NotEmptyError struct {
	Bucket string
	// Key is one object the bucket holds, for the message.
	Key string
}

func (e *NotEmptyError) Error() string {
	return fmt.Sprintf("bucket %s still holds objects (for example %q)", e.Bucket, e.Key)
}

// DeleteBucket deletes the bucket and waits until it is gone; one already gone counts as
// deleted. force empties it first (every object version); without force, a bucket that holds
// objects is a *NotEmptyError and nothing is deleted.
func DeleteBucket(ctx context.Context, c *cloud.Client, name string, force bool) error {
	if !force {
		some, err := c.ListObjectVersions(ctx, name, 1)
		if cloud.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(some) > 0 {
			return &NotEmptyError{Bucket: name, Key: some[0].Key}
		}
	} else if err := c.EmptyBucket(ctx, name); err != nil && !cloud.IsNotFound(err) {
		return err
	}
	return c.DeleteBucket(ctx, name)
}
