package provider

// The cold tier: an OSS bucket, private, versioned, public access blocked, with one lifecycle
// rule. Bucket names are global, so the tier's name is also the bucket's and its id.

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/storageplan"
)

// lifecycleRuleID names the one lifecycle rule the resource manages on its bucket.
const lifecycleRuleID = "gpucluster-tiering"

// The settings every bucket is held to; changed outside Terraform, they show in the next plan
// (bucket_acl, bucket_versioning, bucket_block_public_access) and the apply restores them.
const (
	bucketACLPrivate   = "private"
	bucketVersioningOn = "Enabled"
)

type bucketStore struct {
	client *cloud.Client
}

func (s bucketStore) create(ctx context.Context, plan *storageTierModel, user map[string]string, state *tfsdk.State, diags *diag.Diagnostics) bool {
	name := plan.Name.ValueString()
	what := fmt.Sprintf("Creating storage tier %s (bucket %s)", name, name)
	adopted, err := s.adoptBucket(ctx, name, user, plan.Encryption.ValueBool())
	if err != nil {
		diags.AddError(what, err.Error())
		return false
	}
	if adopted {
		diags.AddWarning(fmt.Sprintf("Storage tier %s: adopted bucket %s", name, name),
			"The bucket already existed, left by an earlier apply that was interrupted before it saved the state; it was "+
				"adopted and brought to this configuration instead of being created again.")
	} else if err := s.client.CreateBucket(ctx, cloud.BucketInput{Name: name, Encrypted: plan.Encryption.ValueBool(),
		Tags: storageTags(name, user)}); err != nil {
		diags.AddError(what, err.Error())
		return false
	}
	// The id goes to the state before anything else can fail, so a failure leaves a tainted
	// resource, not a leaked bucket.
	diags.Append(state.SetAttribute(ctx, path.Root("id"), name)...)
	if err := s.client.PutLifecycleRule(ctx, name, lifecycleRuleOf(ctx, plan.ObjectLifecycle, diags)); err != nil {
		diags.AddError(what+": lifecycle", err.Error())
		return false
	}
	plan.ID = types.StringValue(name)
	plan.Bucket = types.StringValue(name)
	return true
}

// adoptBucket looks for the tier's bucket before creating it: bucket names are global, so the
// deterministic name is the finder. A bucket this account can read that carries the tier's tags,
// or that is untagged and empty (an apply interrupted between PutBucket and PutBucketTags), is
// adopted: tagged and brought to the tier's settings; it reports true. Anything else under the
// name is refused rather than taken over.
func (s bucketStore) adoptBucket(ctx context.Context, name string, user map[string]string, encrypted bool) (bool, error) {
	_, err := s.client.FindBucket(ctx, name)
	if cloud.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking for an existing bucket %s: %w", name, err)
	}
	have, err := s.client.BucketTags(ctx, name)
	if err != nil {
		return false, err
	}
	if have[tagManagedBy] != managedByVal || have[tagStorageTier] != name {
		some, err := s.client.ListObjectVersions(ctx, name, 1)
		if err != nil {
			return false, err
		}
		if len(some) > 0 {
			return false, fmt.Errorf("bucket %s already exists in this account, holds objects (for example %q) and does not carry "+
				"the tags %s = %s and %s = %s that mark a bucket made by gpucluster_storage_tier, so it was not taken over: "+
				"import it (terraform import gpucluster_storage_tier.<name> %s) or choose another name",
				name, some[0].Key, tagManagedBy, managedByVal, tagStorageTier, name, name)
		}
	}
	if err := s.client.SetBucketTags(ctx, name, storageTags(name, user)); err != nil {
		return false, err
	}
	if err := s.client.ApplyBucketSettings(ctx, name, encrypted); err != nil {
		return false, err
	}
	return true, nil
}

func (s bucketStore) read(ctx context.Context, bucket string, m *storageTierModel) (gone bool, diags diag.Diagnostics) {
	what := fmt.Sprintf("Reading storage tier %s (bucket %s)", bucket, bucket)
	info, err := s.client.FindBucket(ctx, bucket)
	if cloud.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		diags.AddError(what, err.Error())
		return false, diags
	}
	m.ID = types.StringValue(bucket)
	m.Bucket = types.StringValue(bucket)
	m.Name = types.StringValue(bucket)
	m.Backend = types.StringValue(storageplan.BackendOSS)
	m.Tier = types.StringValue(storageplan.TierCold)
	m.Encryption = types.BoolValue(info.Encrypted)
	// ACL, versioning and public access come with the bucket info: drift costs no extra call.
	m.BucketACL = types.StringValue(info.ACL)
	m.BucketVersioning = types.StringValue(info.Versioning)
	m.BucketBlockPublic = types.BoolValue(info.BlockPublicAccess)
	for _, s := range []*types.String{&m.FileSystemID, &m.MountTarget, &m.MountCommand, &m.FstabLine, &m.ZoneID} {
		*s = types.StringNull()
	}
	rule, err := s.client.FindLifecycleRule(ctx, bucket, lifecycleRuleID)
	if err != nil {
		diags.AddError(what, err.Error())
		return false, diags
	}
	m.ObjectLifecycle = lifecycleValue(rule)
	// Tags are read only when the configuration sets them: one call less per refresh in the
	// common case. Tags added outside Terraform to an untagged tier are therefore not reported.
	if !m.Tags.IsNull() {
		tags, err := s.client.BucketTags(ctx, bucket)
		if err != nil {
			diags.AddError(what, err.Error())
			return false, diags
		}
		m.Tags = stringMap(userTags(tags))
	}
	if m.CapacityTiB.IsNull() { // import: OSS has no size to read back
		m.CapacityTiB = types.Int64Value(1)
	}
	return false, diags
}

func (s bucketStore) update(ctx context.Context, plan, prior *storageTierModel, _, newTags map[string]string, tagsChanged bool, diags *diag.Diagnostics) {
	id := prior.ID.ValueString()
	what := fmt.Sprintf("Updating storage tier %s (%s)", plan.Name.ValueString(), id)
	if !plan.BucketACL.Equal(prior.BucketACL) || !plan.BucketVersioning.Equal(prior.BucketVersioning) ||
		!plan.BucketBlockPublic.Equal(prior.BucketBlockPublic) {
		// Changed outside Terraform: back to private, versioned, public access blocked.
		if err := s.client.ApplyBucketSettings(ctx, id, plan.Encryption.ValueBool()); err != nil {
			diags.AddError(what, err.Error())
			return
		}
	}
	if !plan.ObjectLifecycle.Equal(prior.ObjectLifecycle) {
		if err := s.client.PutLifecycleRule(ctx, id, lifecycleRuleOf(ctx, plan.ObjectLifecycle, diags)); err != nil {
			diags.AddError(what, err.Error())
			return
		}
	}
	if !plan.Encryption.Equal(prior.Encryption) {
		if err := s.client.SetBucketEncryption(ctx, id, plan.Encryption.ValueBool()); err != nil {
			diags.AddError(what, err.Error())
			return
		}
	}
	if tagsChanged {
		if err := s.client.SetBucketTags(ctx, id, storageTags(plan.Name.ValueString(), newTags)); err != nil {
			diags.AddError(what, err.Error())
			return
		}
	}
}

// delete empties the bucket first with force_destroy; without it, a bucket that holds objects
// is an error and nothing is deleted.
func (s bucketStore) delete(ctx context.Context, state *storageTierModel, diags *diag.Diagnostics) {
	id := state.ID.ValueString()
	what := fmt.Sprintf("Deleting storage tier %s (%s)", state.Name.ValueString(), id)
	if !state.ForceDestroy.ValueBool() {
		some, err := s.client.ListObjectVersions(ctx, id, 1)
		if cloud.IsNotFound(err) {
			return
		}
		if err != nil {
			diags.AddError(what, err.Error())
			return
		}
		if len(some) > 0 {
			diags.AddError(what+": the bucket is not empty",
				fmt.Sprintf("Bucket %s still holds objects (for example %q), and force_destroy is false, so nothing was deleted. "+
					"Move or delete the data first, or set force_destroy = true and apply before destroying to delete every object "+
					"version with the bucket.", id, some[0].Key))
			return
		}
	} else if err := s.client.EmptyBucket(ctx, id); err != nil && !cloud.IsNotFound(err) {
		diags.AddError(what, err.Error())
		return
	}
	if err := s.client.DeleteBucket(ctx, id); err != nil {
		diags.AddError(what, err.Error())
	}
}

// replacedBy: the name is the bucket's, and bucket names cannot change.
func (s bucketStore) replacedBy(plan, prior *storageTierModel) []path.Path {
	if !plan.Name.Equal(prior.Name) {
		return []path.Path{path.Root("name")}
	}
	return nil
}

func (s bucketStore) planComputed(plan, cfg, _ *storageTierModel, _ bool, cache *storageplan.Cache, cacheKnown bool) {
	name := plan.Name.ValueString()
	plan.ID = types.StringValue(name)
	plan.Bucket = types.StringValue(name)
	plan.BucketACL = types.StringValue(bucketACLPrivate)
	plan.BucketVersioning = types.StringValue(bucketVersioningOn)
	plan.BucketBlockPublic = types.BoolValue(true)
	for _, s := range []*types.String{&plan.FileSystemID, &plan.MountTarget, &plan.MountCommand, &plan.FstabLine, &plan.ZoneID} {
		*s = types.StringNull()
	}
	if cfg.VpcID.IsNull() {
		plan.VpcID = types.StringNull()
	}
	if cfg.VSwitchID.IsNull() {
		plan.VSwitchID = types.StringNull()
	}
	plan.AlluxioProperties = types.StringNull()
	if cacheKnown && cache != nil {
		plan.AlluxioProperties = types.StringValue(storageplan.AlluxioProperties(name, s.region(), *cache))
	} else if !cacheKnown {
		plan.AlluxioProperties = types.StringUnknown()
	}
}

// region is the provider's region, or "" before the provider is configured.
func (s bucketStore) region() string {
	if s.client == nil {
		return ""
	}
	return s.client.Region()
}
