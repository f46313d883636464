package provider

// The hot and warm tiers: a NAS or CPFS file system with one mount target in the network's
// vSwitch. The cloud steps are internal/storage's (filesystem.go); here the plan becomes its spec
// and its results state and diagnostics.

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/storage"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/storageplan"
)

type fileSystemStore struct {
	client  *cloud.Client
	backend storageplan.Backend
}

func (s fileSystemStore) create(ctx context.Context, plan *storageTierModel, user map[string]string, state *tfsdk.State, diags *diag.Diagnostics) bool {
	backend, name := s.backend, plan.Name.ValueString()
	net, err := storage.ResolveNetwork(ctx, s.client, plan.NetworkID.ValueString(), plan.VpcID.ValueString(), plan.VSwitchID.ValueString())
	if err != nil {
		diags.AddError(fmt.Sprintf("Creating storage tier %s: resolving its network", name), err.Error())
		return false
	}
	fs, step, err := storage.CreateFileSystem(ctx, s.client, storage.FileSystemSpec{
		Name: name, Tier: plan.Tier.ValueString(), Backend: backend, Network: net,
		CapacityGiB: plan.ProvisionedCapacityTiB.ValueInt64() * storageplan.GiBPerTiB,
		Encrypted:   plan.Encryption.ValueBool(), UserTags: user,
	})
	if fs.Adopted {
		diags.AddWarning(fmt.Sprintf("Storage tier %s: adopted file system %s", name, fs.ID),
			fmt.Sprintf("File system %s carries the tags %s = %s and %s = %s and matches this configuration: it was left by an "+
				"earlier apply that was interrupted before it saved the state, and was adopted instead of creating another.",
				fs.ID, tagManagedBy, managedByVal, tagStorageTier, name))
	}
	// The ids go to the state even when a later step failed, so a failure leaves a tainted
	// resource rather than a leaked file system.
	if fs.ID != "" {
		diags.Append(state.SetAttribute(ctx, path.Root("id"), fs.ID)...)
	}
	if fs.MountTarget != "" {
		diags.Append(state.SetAttribute(ctx, path.Root("mount_target"), fs.MountTarget)...)
	}
	if err != nil {
		summary := fmt.Sprintf("Creating storage tier %s (%s file system)", name, backend.Title)
		if fs.ID != "" {
			summary = stepSummary(fmt.Sprintf("Creating storage tier %s (%s)", name, fs.ID), step)
		}
		diags.AddError(summary, err.Error())
		return false
	}
	plan.ID = types.StringValue(fs.ID)
	plan.FileSystemID = types.StringValue(fs.ID)
	plan.VpcID = types.StringValue(net.VpcID)
	plan.VSwitchID = types.StringValue(net.VSwitchID)
	plan.ZoneID = types.StringValue(net.ZoneID)
	plan.MountTarget = types.StringValue(fs.MountTarget)
	plan.setMount(backend)
	return true
}

// stepSummary is a diagnostic's summary naming the workflow step that failed, when there is one.
func stepSummary(summary, step string) string {
	if step == "" {
		return summary
	}
	return summary + ": " + step
}

// read refreshes a hot or warm tier; gone reports a file system deleted outside.
func (s fileSystemStore) read(ctx context.Context, id string, m *storageTierModel) (gone bool, diags diag.Diagnostics) {
	st, step, err := storage.ReadFileSystem(ctx, s.client, id, m.MountTarget.ValueString())
	switch {
	case step == "" && cloud.IsNotFound(err):
		return true, nil
	case step == storage.StepBackend:
		diags.AddError(fmt.Sprintf("Reading storage tier (%s)", id), err.Error())
		return false, diags
	case err != nil:
		diags.AddError(stepSummary(fmt.Sprintf("Reading storage tier %s (%s)", m.Name.ValueString(), id), step), err.Error())
		return false, diags
	}
	fs, b := st.FS, st.Backend
	m.ID = types.StringValue(fs.ID)
	m.FileSystemID = types.StringValue(fs.ID)
	m.Bucket = types.StringNull()
	m.Backend = types.StringValue(b.Name)
	if m.Tier.IsNull() {
		m.Tier = types.StringValue(storageplan.TierOf(b.Name))
	}
	m.Name = types.StringValue(fs.Description)
	m.Encryption = types.BoolValue(fs.Encrypted)
	m.ZoneID = types.StringValue(fs.ZoneID)
	if b.SendsCapacity {
		m.ProvisionedCapacityTiB = types.Int64Value(fs.CapacityGiB / storageplan.GiBPerTiB)
	}
	if m.CapacityTiB.IsNull() { // import
		m.CapacityTiB = m.ProvisionedCapacityTiB
	}
	if mt := st.MountTarget; mt != nil {
		m.MountTarget, m.VpcID, m.VSwitchID = types.StringValue(mt.Domain), types.StringValue(mt.VPCID), types.StringValue(mt.VSwitchID)
	} else {
		m.MountTarget = types.StringNull()
		if fs.VPCID != "" {
			m.VpcID = types.StringValue(fs.VPCID)
		}
	}
	m.setMount(b)
	if tags := userTags(fs.Tags); len(tags) > 0 || !m.Tags.IsNull() {
		m.Tags = stringMap(tags)
	}
	m.BucketACL, m.BucketVersioning, m.BucketBlockPublic = types.StringNull(), types.StringNull(), types.BoolNull()
	m.ObjectLifecycle = types.ObjectNull(lifecycleAttrTypes)
	m.AlluxioProperties = types.StringNull()
	return false, diags
}

func (s fileSystemStore) update(ctx context.Context, plan, prior *storageTierModel, oldTags, newTags map[string]string, tagsChanged bool, diags *diag.Diagnostics) {
	id := prior.ID.ValueString()
	err := storage.UpdateFileSystem(ctx, s.client, storage.FileSystemChange{
		ID: id, Backend: s.backend,
		FromName: prior.Name.ValueString(), ToName: plan.Name.ValueString(),
		FromCapacityGiB: prior.ProvisionedCapacityTiB.ValueInt64() * storageplan.GiBPerTiB,
		ToCapacityGiB:   plan.ProvisionedCapacityTiB.ValueInt64() * storageplan.GiBPerTiB,
		FromTags:        oldTags, ToTags: newTags, TagsChanged: tagsChanged,
	})
	if err != nil {
		diags.AddError(fmt.Sprintf("Updating storage tier %s (%s)", plan.Name.ValueString(), id), err.Error())
		return
	}
	plan.setMount(s.backend)
}

// delete removes the mount targets, then the file system.
func (s fileSystemStore) delete(ctx context.Context, state *storageTierModel, diags *diag.Diagnostics) {
	if err := storage.DeleteFileSystem(ctx, s.client, state.ID.ValueString()); err != nil {
		diags.AddError(fmt.Sprintf("Deleting storage tier %s (%s)", state.Name.ValueString(), state.ID.ValueString()), err.Error())
	}
}

// replacedBy: encryption is fixed when a file system is created.
func (s fileSystemStore) replacedBy(plan, prior *storageTierModel) []path.Path {
	if !plan.Encryption.Equal(prior.Encryption) {
		return []path.Path{path.Root("encryption")}
	}
	return nil
}

func (s fileSystemStore) planComputed(plan, cfg, prior *storageTierModel, fresh bool, _ *storageplan.Cache, _ bool) {
	plan.Bucket = types.StringNull()
	plan.AlluxioProperties = types.StringNull()
	if fresh {
		for _, s := range []*types.String{&plan.ID, &plan.FileSystemID, &plan.MountTarget, &plan.MountCommand, &plan.FstabLine, &plan.ZoneID} {
			*s = types.StringUnknown()
		}
		if cfg.VpcID.IsNull() {
			plan.VpcID = types.StringUnknown()
		}
		if cfg.VSwitchID.IsNull() {
			plan.VSwitchID = types.StringUnknown()
		}
		return
	}
	plan.ID, plan.FileSystemID, plan.MountTarget, plan.ZoneID = prior.ID, prior.FileSystemID, prior.MountTarget, prior.ZoneID
	plan.VpcID, plan.VSwitchID = prior.VpcID, prior.VSwitchID
	plan.setMount(s.backend)
}
