package provider

// The cold tier: an OSS bucket, private, versioned, public access blocked, with one lifecycle
// rule. Bucket names are global, so the tier's name is also the bucket's and its id. The cloud
// steps are internal/storage's (bucket.go); here the plan becomes its spec and its results state
// and diagnostics.

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/storage"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/storageplan"
)

type bucketStore struct {
	client *cloud.Client
}

func (s bucketStore) create(ctx context.Context, plan *storageTierModel, user map[string]string, state *tfsdk.State, diags *diag.Diagnostics) bool {
	name := plan.Name.ValueString()
	what := fmt.Sprintf("Creating storage tier %s (bucket %s)", name, name)
	lifecycle, _ := lifecycleOf(ctx, plan.ObjectLifecycle, diags)
	b, step, err := storage.CreateBucket(ctx, s.client, storage.BucketSpec{Name: name, Encrypted: plan.Encryption.ValueBool(),
		UserTags: user, Lifecycle: lifecycle})
	if b.Adopted {
		diags.AddWarning(fmt.Sprintf("Storage tier %s: adopted bucket %s", name, name),
			"The bucket already existed, left by an earlier apply that was interrupted before it saved the state; it was "+
				"adopted and brought to this configuration instead of being created again.")
	}
	// The id goes to the state even when a later step failed, so a failure leaves a tainted
	// resource, not a leaked bucket.
	if b.Exists {
		diags.Append(state.SetAttribute(ctx, path.Root("id"), name)...)
	}
	if err != nil {
		diags.AddError(stepSummary(what, step), err.Error())
		return false
	}
	plan.ID = types.StringValue(name)
	plan.Bucket = types.StringValue(name)
	return true
}

func (s bucketStore) read(ctx context.Context, bucket string, m *storageTierModel) (gone bool, diags diag.Diagnostics) {
	// Tags are read only when the configuration sets them: one call less per refresh in the
	// common case. Tags added outside Terraform to an untagged tier are therefore not reported.
	st, err := storage.ReadBucket(ctx, s.client, bucket, !m.Tags.IsNull())
	if cloud.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		diags.AddError(fmt.Sprintf("Reading storage tier %s (bucket %s)", bucket, bucket), err.Error())
		return false, diags
	}
	info := st.Settings
	m.ID = types.StringValue(bucket)
	m.Bucket = types.StringValue(bucket)
	m.Name = types.StringValue(bucket)
	m.Backend = types.StringValue(storageplan.BackendOSS)
	m.Tier = types.StringValue(storageplan.TierCold)
	m.Encryption = types.BoolValue(info.Encrypted)
	m.BucketACL = types.StringValue(info.ACL)
	m.BucketVersioning = types.StringValue(info.Versioning)
	m.BucketBlockPublic = types.BoolValue(info.BlockPublicAccess)
	for _, s := range []*types.String{&m.FileSystemID, &m.MountTarget, &m.MountCommand, &m.FstabLine, &m.ZoneID} {
		*s = types.StringNull()
	}
	m.ObjectLifecycle = lifecycleValue(st.Lifecycle)
	if !m.Tags.IsNull() {
		m.Tags = stringMap(userTags(st.Tags))
	}
	if m.CapacityTiB.IsNull() { // import: OSS has no size to read back
		m.CapacityTiB = types.Int64Value(1)
	}
	return false, diags
}

func (s bucketStore) update(ctx context.Context, plan, prior *storageTierModel, _, newTags map[string]string, tagsChanged bool, diags *diag.Diagnostics) {
	id := prior.ID.ValueString()
	lifecycle, _ := lifecycleOf(ctx, plan.ObjectLifecycle, diags)
	err := storage.UpdateBucket(ctx, s.client, storage.BucketChange{
		BucketSpec: storage.BucketSpec{Name: id, Encrypted: plan.Encryption.ValueBool(), UserTags: newTags, Lifecycle: lifecycle},
		SettingsDrifted: !plan.BucketACL.Equal(prior.BucketACL) || !plan.BucketVersioning.Equal(prior.BucketVersioning) ||
			!plan.BucketBlockPublic.Equal(prior.BucketBlockPublic),
		LifecycleChanged:  !plan.ObjectLifecycle.Equal(prior.ObjectLifecycle),
		EncryptionChanged: !plan.Encryption.Equal(prior.Encryption),
		TagsChanged:       tagsChanged,
	})
	if err != nil {
		diags.AddError(fmt.Sprintf("Updating storage tier %s (%s)", plan.Name.ValueString(), id), err.Error())
	}
}

// delete empties the bucket first with force_destroy; without it, a bucket that holds objects
// is an error and nothing is deleted.
func (s bucketStore) delete(ctx context.Context, state *storageTierModel, diags *diag.Diagnostics) {
	id := state.ID.ValueString()
	what := fmt.Sprintf("Deleting storage tier %s (%s)", state.Name.ValueString(), id)
	err := storage.DeleteBucket(ctx, s.client, id, state.ForceDestroy.ValueBool())
	var full *storage.NotEmptyError
	switch {
	case errors.As(err, &full):
		diags.AddError(what+": the bucket is not empty",
			fmt.Sprintf("Bucket %s still holds objects (for example %q), and force_destroy is false, so nothing was deleted. "+
				"Move or delete the data first, or set force_destroy = true and apply before destroying to delete every object "+
				"version with the bucket.", id, full.Key))
	case err != nil:
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
	plan.BucketACL = types.StringValue(storage.BucketACL)
	plan.BucketVersioning = types.StringValue(storage.BucketVersioning)
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
