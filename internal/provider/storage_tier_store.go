package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/storageplan"
)

// tierStore is what a storage tier is made of in the cloud: a NAS or CPFS file system with a
// mount target (hot and warm tiers, fileSystemStore) or an OSS bucket (the cold tier,
// bucketStore). The resource's entry points pick one by backend and leave the rest to it.
type tierStore interface {
	// create makes (or adopts) the tier's objects and fills plan's computed values. It saves the
	// id to state as soon as there is one, so a later failure leaves a tainted resource rather
	// than a leaked object. It reports false after adding an error to diags.
	create(ctx context.Context, plan *storageTierModel, userTags map[string]string, state *tfsdk.State, diags *diag.Diagnostics) bool
	// read refreshes m from the cloud; gone reports objects deleted outside Terraform.
	read(ctx context.Context, id string, m *storageTierModel) (gone bool, diags diag.Diagnostics)
	// update brings the objects from prior to plan (tagsChanged: the user tags differ).
	update(ctx context.Context, plan, prior *storageTierModel, oldTags, newTags map[string]string, tagsChanged bool, diags *diag.Diagnostics)
	// delete removes the tier's objects.
	delete(ctx context.Context, state *storageTierModel, diags *diag.Diagnostics)
	// replacedBy lists the attributes whose change from prior to plan replaces the tier, beyond
	// what every store shares (backend, vpc_id, vswitch_id, a smaller capacity).
	replacedBy(plan, prior *storageTierModel) []path.Path
	// planComputed fills the computed values this store knows at plan time. fresh: the tier is
	// created (or replaced) by this plan.
	planComputed(plan, cfg *storageTierModel, prior *storageTierModel, fresh bool, cache *storageplan.Cache, cacheKnown bool)
}

// store returns the tierStore of a backend.
func (r *storageTierResource) store(b storageplan.Backend) tierStore {
	if b.Object {
		return bucketStore{client: r.client}
	}
	return fileSystemStore{client: r.client, backend: b}
}

var (
	_ tierStore = fileSystemStore{}
	_ tierStore = bucketStore{}
)
