package provider

// The hot and warm tiers: a NAS or CPFS file system with one mount target in the network's
// vSwitch.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/network"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/storageplan"
)

type fileSystemStore struct {
	client  *cloud.Client
	backend storageplan.Backend
}

func (s fileSystemStore) create(ctx context.Context, plan *storageTierModel, user map[string]string, state *tfsdk.State, diags *diag.Diagnostics) bool {
	backend, name := s.backend, plan.Name.ValueString()
	net, err := resolveStorageNetwork(ctx, s.client, plan.NetworkID.ValueString(), plan.VpcID.ValueString(), plan.VSwitchID.ValueString())
	if err != nil {
		diags.AddError(fmt.Sprintf("Creating storage tier %s: resolving its network", name), err.Error())
		return false
	}
	in := cloud.FileSystemInput{
		FileSystemType: backend.FileSystemType, StorageType: backend.StorageType, ProtocolType: backend.ProtocolType,
		ZoneID: net.ZoneID, VpcID: net.VpcID, VSwitchID: net.VSwitchID, Description: name,
		Encrypted: plan.Encryption.ValueBool(),
	}
	if backend.SendsCapacity {
		in.CapacityGiB = plan.ProvisionedCapacityTiB.ValueInt64() * storageplan.GiBPerTiB
	}
	id, haveTags, adopted, err := s.createOrAdopt(ctx, plan.Tier.ValueString(), in)
	if err != nil {
		diags.AddError(fmt.Sprintf("Creating storage tier %s (%s file system)", name, backend.Title), err.Error())
		return false
	}
	if adopted {
		diags.AddWarning(fmt.Sprintf("Storage tier %s: adopted file system %s", name, id),
			fmt.Sprintf("File system %s carries the tags %s = %s and %s = %s and matches this configuration: it was left by an "+
				"earlier apply that was interrupted before it saved the state, and was adopted instead of creating another.",
				id, tagManagedBy, managedByVal, tagStorageTier, name))
	}
	diags.Append(state.SetAttribute(ctx, path.Root("id"), id)...)
	// Tags first, while nothing else can have failed yet: from here on a later run can find it.
	if err := s.client.SyncTags(ctx, cloud.KindFileSystem, []string{id}, haveTags, storageTags(name, user)); err != nil {
		diags.AddError(fmt.Sprintf("Creating storage tier %s (%s): tags", name, id), err.Error())
		return false
	}
	fs, err := s.client.WaitFileSystemRunning(ctx, id)
	if err != nil {
		diags.AddError(fmt.Sprintf("Creating storage tier %s (%s)", name, id), err.Error())
		return false
	}
	if adopted {
		if fs.Description != name {
			if err := s.client.SetFileSystemDescription(ctx, id, name); err != nil {
				diags.AddError(fmt.Sprintf("Creating storage tier %s (%s)", name, id), err.Error())
				return false
			}
		}
		if backend.SendsCapacity && fs.CapacityGiB < in.CapacityGiB {
			if err := s.client.UpgradeFileSystem(ctx, id, in.CapacityGiB, upgradeClientToken(id, in.CapacityGiB)); err != nil {
				diags.AddError(fmt.Sprintf("Creating storage tier %s (%s)", name, id), err.Error())
				return false
			}
		}
	}
	domain, err := s.mountTargetIn(ctx, id, net)
	if err != nil {
		diags.AddError(fmt.Sprintf("Creating storage tier %s (%s): mount target", name, id), err.Error())
		return false
	}
	diags.Append(state.SetAttribute(ctx, path.Root("mount_target"), domain)...)
	if _, err := s.client.WaitMountTargetActive(ctx, id, domain); err != nil {
		diags.AddError(fmt.Sprintf("Creating storage tier %s (%s): mount target", name, id), err.Error())
		return false
	}
	plan.ID = types.StringValue(id)
	plan.FileSystemID = types.StringValue(id)
	plan.VpcID = types.StringValue(net.VpcID)
	plan.VSwitchID = types.StringValue(net.VSwitchID)
	plan.ZoneID = types.StringValue(net.ZoneID)
	plan.MountTarget = types.StringValue(domain)
	plan.setMount(backend)
	return true
}

// createOrAdopt returns the tier's file system: one found by the tier's tags that matches the
// configuration (left by an interrupted apply), else one created with a ClientToken derived from
// the configuration (cloud.CreateOrAdopt), so that a create whose answer was lost is answered
// with the same file system when run again. haveTags are the tags it carries now.
func (s fileSystemStore) createOrAdopt(ctx context.Context, tier string, in cloud.FileSystemInput) (id string, haveTags map[string]string, adopted bool, err error) {
	b := s.backend
	found, err := s.client.FindFileSystemsByTags(ctx, storageSystemTags(in.Description))
	if err != nil {
		return "", nil, false, err
	}
	var match []string
	for _, fs := range found {
		if fs.Type != b.FileSystemType || fs.StorageType != b.StorageType ||
			(fs.ZoneID != "" && fs.ZoneID != in.ZoneID) || (fs.VPCID != "" && fs.VPCID != in.VpcID) ||
			fs.Encrypted != in.Encrypted || (b.SendsCapacity && fs.CapacityGiB > in.CapacityGiB) {
			continue
		}
		match = append(match, fs.ID)
		id, haveTags = fs.ID, fs.Tags
	}
	switch {
	case len(match) > 1:
		return "", nil, false, fmt.Errorf("file systems %s all carry %s = %s and match this configuration, so which one "+
			"belongs to it is ambiguous: delete the extra ones, or import the right one", strings.Join(match, ", "), tagStorageTier, in.Description)
	case len(match) == 1:
		return id, haveTags, true, nil
	}
	parts := []string{"storage-tier", in.Description, tier, b.Name, in.FileSystemType, in.StorageType, in.ProtocolType,
		in.ZoneID, in.VpcID, in.VSwitchID, strconv.FormatInt(in.CapacityGiB, 10), strconv.FormatBool(in.Encrypted)}
	id, err = cloud.CreateOrAdopt("file system "+in.Description, parts,
		func(token string) (string, error) {
			in.ClientToken = token
			return s.client.CreateFileSystem(ctx, in)
		},
		func(id string) error {
			fs, err := s.client.FindFileSystem(ctx, id)
			if err == nil {
				haveTags = fs.Tags
			}
			return err
		})
	return id, haveTags, false, err
}

// mountTargetIn returns the file system's mount target in the network's vSwitch, creating it
// when there is none: CreateMountTarget takes no ClientToken, so one left by an interrupted
// apply is found by listing, and the call is made only when the list has none. It does not
// wait.
func (s fileSystemStore) mountTargetIn(ctx context.Context, fsID string, net storageNetwork) (string, error) {
	targets, err := s.client.FindMountTargets(ctx, fsID)
	if err != nil {
		return "", err
	}
	for _, t := range targets {
		if t.VSwitchID == net.VSwitchID && t.VPCID == net.VpcID {
			return t.Domain, nil
		}
	}
	return s.client.CreateMountTarget(ctx, fsID, net.VpcID, net.VSwitchID)
}

// upgradeClientToken is the ClientToken of growing one file system to one size: a retried or
// re-run upgrade to the same size is the same request.
func upgradeClientToken(id string, capacityGiB int64) string {
	return cloud.ClientToken(0, "storage-tier-upgrade", id, strconv.FormatInt(capacityGiB, 10))
}

// storageNetwork is where a file system's mount target goes.
type storageNetwork struct{ VpcID, VSwitchID, ZoneID string }

// read refreshes a hot or warm tier; gone reports a file system deleted outside.
func (s fileSystemStore) read(ctx context.Context, id string, m *storageTierModel) (gone bool, diags diag.Diagnostics) {
	fs, err := s.client.FindFileSystem(ctx, id)
	if cloud.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		diags.AddError(fmt.Sprintf("Reading storage tier %s (%s)", m.Name.ValueString(), id), err.Error())
		return false, diags
	}
	name := storageplan.BackendFor(fs.Type, fs.StorageType)
	b, ok := storageplan.LookupBackend(name)
	if !ok {
		diags.AddError(fmt.Sprintf("Reading storage tier (%s)", id),
			fmt.Sprintf("File system %s is %s/%s, which no backend of this resource creates: import a file system made by gpucluster_storage_tier.", id, fs.Type, fs.StorageType))
		return false, diags
	}
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
	targets, err := s.client.FindMountTargets(ctx, id)
	if err != nil && !cloud.IsNotFound(err) {
		diags.AddError(fmt.Sprintf("Reading storage tier %s (%s): mount targets", m.Name.ValueString(), id), err.Error())
		return false, diags
	}
	var mt *struct{ domain, vpc, vsw string }
	for _, t := range targets {
		if mt == nil || t.Domain == m.MountTarget.ValueString() {
			mt = &struct{ domain, vpc, vsw string }{t.Domain, t.VPCID, t.VSwitchID}
		}
	}
	if mt != nil {
		m.MountTarget, m.VpcID, m.VSwitchID = types.StringValue(mt.domain), types.StringValue(mt.vpc), types.StringValue(mt.vsw)
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

// resolveStorageNetwork finds the VPC, vSwitch and zone from vswitch_id when given, else from the
// gpucluster_rdma_network (network.Lookup): the first of its vSwitches by zone is used.
func resolveStorageNetwork(ctx context.Context, c *cloud.Client, networkID, vpcID, vswitchID string) (storageNetwork, error) {
	if vswitchID != "" {
		sw, err := c.FindVSwitch(ctx, vswitchID)
		if err != nil {
			return storageNetwork{}, fmt.Errorf("vswitch_id %s: %w", vswitchID, err)
		}
		if vpcID != "" && sw.VPCID != vpcID {
			return storageNetwork{}, fmt.Errorf("vSwitch %s is in VPC %s, not in vpc_id %s: fix vpc_id or leave it out", vswitchID, sw.VPCID, vpcID)
		}
		return storageNetwork{VpcID: sw.VPCID, VSwitchID: sw.ID, ZoneID: sw.ZoneID}, nil
	}
	if networkID == "" {
		return storageNetwork{}, fmt.Errorf("no network_id and no vswitch_id: a file system needs a vSwitch for its mount target")
	}
	n, err := network.Lookup(ctx, c, networkID, vpcID)
	if err != nil {
		return storageNetwork{}, err
	}
	sw := n.VSwitches[0]
	return storageNetwork{VpcID: n.VPCID, VSwitchID: sw.ID, ZoneID: sw.ZoneID}, nil
}

func (s fileSystemStore) update(ctx context.Context, plan, prior *storageTierModel, oldTags, newTags map[string]string, tagsChanged bool, diags *diag.Diagnostics) {
	id := prior.ID.ValueString()
	what := fmt.Sprintf("Updating storage tier %s (%s)", plan.Name.ValueString(), id)
	if !plan.Name.Equal(prior.Name) {
		if err := s.client.SetFileSystemDescription(ctx, id, plan.Name.ValueString()); err != nil {
			diags.AddError(what, err.Error())
			return
		}
	}
	if want := plan.ProvisionedCapacityTiB.ValueInt64(); s.backend.SendsCapacity && want > prior.ProvisionedCapacityTiB.ValueInt64() {
		if err := s.client.UpgradeFileSystem(ctx, id, want*storageplan.GiBPerTiB, upgradeClientToken(id, want*storageplan.GiBPerTiB)); err != nil {
			diags.AddError(what, err.Error())
			return
		}
	}
	if tagsChanged || !plan.Name.Equal(prior.Name) {
		// The name rides on the gpucluster:storage-tier tag too.
		err := s.client.SyncTags(ctx, cloud.KindFileSystem, []string{id}, storageTags(prior.Name.ValueString(), oldTags), storageTags(plan.Name.ValueString(), newTags))
		if err != nil {
			diags.AddError(what, err.Error())
			return
		}
	}
	plan.setMount(s.backend)
}

// delete removes the mount targets, then the file system.
func (s fileSystemStore) delete(ctx context.Context, state *storageTierModel, diags *diag.Diagnostics) {
	if err := s.client.DeleteFileSystem(ctx, state.ID.ValueString()); err != nil {
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
