package storage

// The hot and warm tiers: a NAS or CPFS file system with one mount target in the network's
// vSwitch.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/storageplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// The steps a workflow names with its error, so the resource's diagnostic can say where it
// stopped; "" is the workflow's first step (finding or creating the file system or bucket).
const (
	StepTags         = "tags"
	StepMountTarget  = "mount target"
	StepMountTargets = "mount targets"
	StepBackend      = "backend"
	StepLifecycle    = "lifecycle"
)

// FileSystemSpec is a hot or warm tier's file system as the plan has it.
type FileSystemSpec struct {
	// Name is the tier's: the file system's description and its tagging.StorageTier tag.
	Name, Tier string
	Backend    storageplan.Backend
	Network    Network
	// CapacityGiB is the provisioned capacity, sent only to backends that take one
	// (Backend.SendsCapacity; general-purpose NAS is elastic).
	CapacityGiB int64
	Encrypted   bool
	UserTags    map[string]string
}

// FileSystem is what CreateFileSystem made or adopted. On an error it holds as much as exists:
// an ID once there is a file system, a MountTarget once there is one.
type FileSystem struct {
	ID, MountTarget string
	// Adopted: the file system was left by an earlier, interrupted apply and taken over.
	Adopted bool
}

// CreateFileSystem makes (or adopts) the tier's file system, tags it, waits for it to run,
// brings an adopted one to the spec (description, capacity), and makes (or finds) its mount
// target in the spec's vSwitch and waits for it. It returns the failed step with the error.
func CreateFileSystem(ctx context.Context, c *cloud.Client, spec FileSystemSpec) (FileSystem, string, error) {
	in := fileSystemInput(spec)
	id, haveTags, adopted, err := createOrAdopt(ctx, c, spec, in)
	if err != nil {
		return FileSystem{}, "", err
	}
	out := FileSystem{ID: id, Adopted: adopted}
	// Tags first, while nothing else can have failed yet: from here on a later run can find it.
	if err := c.SyncTags(ctx, cloud.KindFileSystem, []string{id}, haveTags, Tags(spec.Name, spec.UserTags)); err != nil {
		return out, StepTags, err
	}
	fs, err := c.WaitFileSystemRunning(ctx, id)
	if err != nil {
		return out, "", err
	}
	if adopted {
		if err := completeAdopted(ctx, c, spec, fs, in.CapacityGiB); err != nil {
			return out, "", err
		}
	}
	out.MountTarget, err = mountTargetIn(ctx, c, id, spec.Network)
	if err != nil {
		return out, StepMountTarget, err
	}
	if _, err := c.WaitMountTargetActive(ctx, id, out.MountTarget); err != nil {
		return out, StepMountTarget, err
	}
	return out, "", nil
}

func fileSystemInput(spec FileSystemSpec) cloud.FileSystemInput {
	b, net := spec.Backend, spec.Network
	in := cloud.FileSystemInput{
		FileSystemType: b.FileSystemType, StorageType: b.StorageType, ProtocolType: b.ProtocolType,
		ZoneID: net.ZoneID, VpcID: net.VpcID, VSwitchID: net.VSwitchID, Description: spec.Name,
		Encrypted: spec.Encrypted,
	}
	if b.SendsCapacity {
		in.CapacityGiB = spec.CapacityGiB
	}
	return in
}

// completeAdopted brings an adopted file system to the spec: an interrupted apply may have left
// it before a rename or with less capacity (adoption accepts no more than the spec's).
func completeAdopted(ctx context.Context, c *cloud.Client, spec FileSystemSpec, fs *cloud.FileSystem, capacityGiB int64) error {
	if fs.Description != spec.Name {
		if err := c.SetFileSystemDescription(ctx, fs.ID, spec.Name); err != nil {
			return err
		}
	}
	if spec.Backend.SendsCapacity && fs.CapacityGiB < capacityGiB {
		return c.UpgradeFileSystem(ctx, fs.ID, capacityGiB, upgradeClientToken(fs.ID, capacityGiB))
	}
	return nil
}

// createOrAdopt returns the tier's file system: one found by the tier's tags that matches the
// configuration (left by an interrupted apply), else one created with a ClientToken derived from
// the configuration (cloud.CreateOrAdopt), so that a create whose answer was lost is answered
// with the same file system when run again. haveTags are the tags it carries now.
func createOrAdopt(ctx context.Context, c *cloud.Client, spec FileSystemSpec, in cloud.FileSystemInput) (id string, haveTags map[string]string, adopted bool, err error) {
	b := spec.Backend
	found, err := c.FindFileSystemsByTags(ctx, SystemTags(in.Description))
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
			"belongs to it is ambiguous: delete the extra ones, or import the right one", strings.Join(match, ", "), tagging.StorageTier, in.Description)
	case len(match) == 1:
		return id, haveTags, true, nil
	}
	parts := []string{"storage-tier", in.Description, spec.Tier, b.Name, in.FileSystemType, in.StorageType, in.ProtocolType,
		in.ZoneID, in.VpcID, in.VSwitchID, strconv.FormatInt(in.CapacityGiB, 10), strconv.FormatBool(in.Encrypted)}
	id, err = cloud.CreateOrAdopt("file system "+in.Description, parts,
		func(token string) (string, error) {
			in.ClientToken = token
			return c.CreateFileSystem(ctx, in)
		},
		func(id string) error {
			fs, err := c.FindFileSystem(ctx, id)
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
func mountTargetIn(ctx context.Context, c *cloud.Client, fsID string, net Network) (string, error) {
	targets, err := c.FindMountTargets(ctx, fsID)
	if err != nil {
		return "", err
	}
	for _, t := range targets {
		if t.VSwitchID == net.VSwitchID && t.VPCID == net.VpcID {
			return t.Domain, nil
		}
	}
	return c.CreateMountTarget(ctx, fsID, net.VpcID, net.VSwitchID)
}

// upgradeClientToken is the ClientToken of growing one file system to one size: a retried or
// re-run upgrade to the same size is the same request.
func upgradeClientToken(id string, capacityGiB int64) string {
	return cloud.ClientToken(0, "storage-tier-upgrade", id, strconv.FormatInt(capacityGiB, 10))
}

// FileSystemState is a tier's file system as the cloud has it.
type FileSystemState struct {
	FS      cloud.FileSystem
	Backend storageplan.Backend
	// MountTarget is the one with the domain asked for, else the first listed; nil when the
	// file system has none.
	MountTarget *cloud.MountTarget
}

// ReadFileSystem reads the file system id, its backend and its mount target (preferring the one
// with domain mountTarget). A file system deleted outside answers an error matching
// cloud.ErrNotFound at step "". It returns the failed step with the error.
func ReadFileSystem(ctx context.Context, c *cloud.Client, id, mountTarget string) (FileSystemState, string, error) {
	fs, err := c.FindFileSystem(ctx, id)
	if err != nil {
		return FileSystemState{}, "", err
	}
	b, ok := storageplan.LookupBackend(storageplan.BackendFor(fs.Type, fs.StorageType))
	if !ok {
		return FileSystemState{}, StepBackend, fmt.Errorf("File system %s is %s/%s, which no backend of this resource creates: "+
			"import a file system made by gpucluster_storage_tier.", id, fs.Type, fs.StorageType)
	}
	out := FileSystemState{FS: *fs, Backend: b}
	targets, err := c.FindMountTargets(ctx, id)
	if err != nil && !cloud.IsNotFound(err) {
		return out, StepMountTargets, err
	}
	for i, t := range targets {
		if out.MountTarget == nil || t.Domain == mountTarget {
			out.MountTarget = &targets[i]
		}
	}
	return out, "", nil
}

// FileSystemChange is an update of a tier's file system from one plan to the next.
type FileSystemChange struct {
	ID                             string
	Backend                        storageplan.Backend
	FromName, ToName               string
	FromCapacityGiB, ToCapacityGiB int64
	// FromTags and ToTags are the user's tags; TagsChanged says they differ.
	FromTags, ToTags map[string]string
	TagsChanged      bool
}

// UpdateFileSystem renames the file system, grows it (a file system never shrinks: a smaller
// capacity replaces the tier) and moves its tags.
func UpdateFileSystem(ctx context.Context, c *cloud.Client, ch FileSystemChange) error {
	renamed := ch.FromName != ch.ToName
	if renamed {
		if err := c.SetFileSystemDescription(ctx, ch.ID, ch.ToName); err != nil {
			return err
		}
	}
	if ch.Backend.SendsCapacity && ch.ToCapacityGiB > ch.FromCapacityGiB {
		if err := c.UpgradeFileSystem(ctx, ch.ID, ch.ToCapacityGiB, upgradeClientToken(ch.ID, ch.ToCapacityGiB)); err != nil {
			return err
		}
	}
	if ch.TagsChanged || renamed {
		// The name rides on the gpucluster:storage-tier tag too.
		return c.SyncTags(ctx, cloud.KindFileSystem, []string{ch.ID}, Tags(ch.FromName, ch.FromTags), Tags(ch.ToName, ch.ToTags))
	}
	return nil
}

// DeleteFileSystem removes the mount targets, then the file system, and waits until it is gone;
// one already gone counts as deleted.
func DeleteFileSystem(ctx context.Context, c *cloud.Client, id string) error {
	return c.DeleteFileSystem(ctx, id)
}
