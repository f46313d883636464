package storage

import (
	"context"
	"errors"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/storageplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// startFileSystem starts the emulator with a network in one zone and answers a warm tier's spec
// on backend (2 TiB where the backend takes a capacity) in it.
func startFileSystem(t *testing.T, maxRetries int, backend string) (context.Context, *cloudtest.Cloud, FileSystemSpec) {
	t.Helper()
	ctx := cloudtest.Context(t)
	c := cloudtest.Start(t, maxRetries)
	n := c.CreateNetwork(ctx, t, cloudtest.Region+"-a")
	b, ok := storageplan.LookupBackend(backend)
	if !ok {
		t.Fatalf("no backend %s", backend)
	}
	sw := n.VSwitches[0]
	spec := FileSystemSpec{
		Name: "warm-data", Tier: storageplan.TierWarm, Backend: b,
		Network:     Network{VpcID: n.VPCID, VSwitchID: sw.ID, ZoneID: sw.ZoneID},
		CapacityGiB: 2 * storageplan.GiBPerTiB, Encrypted: true,
		UserTags: map[string]string{"team": "ml"},
	}
	return ctx, c, spec
}

// checkOneFileSystem fails unless the cloud holds exactly the file system id, with one mount
// target, carrying the tier's tags.
func checkOneFileSystem(ctx context.Context, t *testing.T, c *cloudtest.Cloud, spec FileSystemSpec, id string) {
	t.Helper()
	all := c.Emulator.Resources().FileSystems
	if len(all) != 1 || all[0]["id"] != id || all[0]["mount_targets"] != 1 {
		t.Fatalf("file systems %v; want only %s, with one mount target", all, id)
	}
	fs, err := c.Client.FindFileSystem(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range Tags(spec.Name, spec.UserTags) {
		if fs.Tags[k] != v {
			t.Errorf("file system %s: tag %s = %q, want %q", id, k, fs.Tags[k], v)
		}
	}
}

// An apply killed right after CreateFileSystem (the file system exists, untagged, without mount
// target, its id never saved) is picked up by the next one: the same ClientToken is answered
// with the same file system, which is then tagged and given its mount target. A third run finds
// it by its tags and makes nothing.
func TestCreateFileSystemAdoptsAfterInterruptedCreate(t *testing.T) {
	ctx, c, spec := startFileSystem(t, 3, storageplan.BackendNASCapacity)
	left, _, _, err := createOrAdopt(ctx, c.Client, spec, fileSystemInput(spec))
	if err != nil {
		t.Fatal(err)
	}
	for i, wantAdopted := range []bool{false, true} {
		fs, step, err := CreateFileSystem(ctx, c.Client, spec)
		if err != nil {
			t.Fatalf("CreateFileSystem #%d: %s: %v", i+1, step, err)
		}
		if fs.ID != left || fs.MountTarget == "" || fs.Adopted != wantAdopted {
			t.Errorf("CreateFileSystem #%d = %+v; want %s with a mount target, adopted %v", i+1, fs, left, wantAdopted)
		}
	}
	checkOneFileSystem(ctx, t, c, spec, left)
	if n := c.Calls("CreateMountTarget"); n != 1 {
		t.Errorf("CreateMountTarget called %d times, want 1: the second run must find the first's mount target", n)
	}
}

// A file system an earlier apply left tagged as the tier's, under another description and with
// less capacity (so under another ClientToken), is adopted rather than duplicated, and brought
// to the spec: renamed and grown. One that is the tier's by its tags but of another backend is
// left alone.
func TestCreateFileSystemAdoptsTaggedAndCompletesIt(t *testing.T) {
	ctx, c, spec := startFileSystem(t, 3, storageplan.BackendExtremeStd)
	older := spec
	older.Name, older.CapacityGiB = "warm-data-old", spec.CapacityGiB/2
	left, _, _, err := createOrAdopt(ctx, c.Client, older, fileSystemInput(older))
	if err != nil {
		t.Fatal(err)
	}
	other := spec
	other.Backend, _ = storageplan.LookupBackend(storageplan.BackendExtremeAdvance)
	otherID, _, _, err := createOrAdopt(ctx, c.Client, other, fileSystemInput(other))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{left, otherID} {
		if err := c.Client.SyncTags(ctx, cloud.KindFileSystem, []string{id}, nil, SystemTags(spec.Name)); err != nil {
			t.Fatal(err)
		}
	}

	fs, step, err := CreateFileSystem(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("CreateFileSystem: %s: %v", step, err)
	}
	if fs.ID != left || !fs.Adopted {
		t.Fatalf("CreateFileSystem = %+v; want %s adopted", fs, left)
	}
	got, err := c.Client.WaitFileSystemRunning(ctx, left)
	if err != nil {
		t.Fatal(err)
	}
	if got.Description != spec.Name || got.CapacityGiB != spec.CapacityGiB {
		t.Errorf("adopted file system is %q with %d GiB; want %q with %d GiB", got.Description, got.CapacityGiB, spec.Name, spec.CapacityGiB)
	}
	if n := len(c.Emulator.Resources().FileSystems); n != 2 {
		t.Errorf("%d file systems; want the adopted one and the other backend's", n)
	}
	st, step, err := ReadFileSystem(ctx, c.Client, left, "")
	if err != nil || st.Backend.Name != storageplan.BackendExtremeStd || st.MountTarget == nil || st.MountTarget.Domain != fs.MountTarget {
		t.Errorf("ReadFileSystem = %+v, %q, %v; want %s's backend and mount target %s", st, step, err, left, fs.MountTarget)
	}
}

// Delete removes the mount target and the file system, twice over (the second finds nothing),
// and a read then says not found.
func TestDeleteFileSystemLeavesNothing(t *testing.T) {
	ctx, c, spec := startFileSystem(t, 3, storageplan.BackendNASCapacity)
	fs, step, err := CreateFileSystem(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("CreateFileSystem: %s: %v", step, err)
	}
	for i := 0; i < 2; i++ {
		if err := DeleteFileSystem(ctx, c.Client, fs.ID); err != nil {
			t.Fatalf("DeleteFileSystem #%d: %v", i+1, err)
		}
	}
	if all := c.Emulator.Resources().FileSystems; len(all) != 0 {
		t.Errorf("left after DeleteFileSystem: %v", all)
	}
	if _, step, err := ReadFileSystem(ctx, c.Client, fs.ID, ""); step != "" || !errors.Is(err, cloud.ErrNotFound) {
		t.Errorf("ReadFileSystem after delete: %q, %v; want not found", step, err)
	}
}

// Throttled calls are retried: the tier ends with exactly one file system and one mount target.
func TestCreateFileSystemUnderThrottling(t *testing.T) {
	ctx, c, spec := startFileSystem(t, 8, storageplan.BackendNASCapacity)
	c.Emulator.SetFaults(emulator.Faults{ThrottleRate: 0.3})
	fs, step, err := CreateFileSystem(ctx, c.Client, spec)
	c.Emulator.SetFaults(emulator.Faults{})
	if err != nil {
		t.Fatalf("CreateFileSystem under throttling: %s: %v", step, err)
	}
	checkOneFileSystem(ctx, t, c, spec, fs.ID)
	if c.Errors("Throttling.User") == 0 {
		t.Error("no call was throttled: the test proved nothing")
	}
}

// Renaming moves the storage-tier tag with the description; growing upgrades the capacity.
func TestUpdateFileSystemRenamesRetagsAndGrows(t *testing.T) {
	ctx, c, spec := startFileSystem(t, 3, storageplan.BackendExtremeStd)
	fs, step, err := CreateFileSystem(ctx, c.Client, spec)
	if err != nil {
		t.Fatalf("CreateFileSystem: %s: %v", step, err)
	}
	err = UpdateFileSystem(ctx, c.Client, FileSystemChange{ID: fs.ID, Backend: spec.Backend,
		FromName: spec.Name, ToName: "warm-renamed", FromCapacityGiB: spec.CapacityGiB, ToCapacityGiB: 2 * spec.CapacityGiB,
		FromTags: spec.UserTags, ToTags: map[string]string{"team": "infra"}, TagsChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Client.WaitFileSystemRunning(ctx, fs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Description != "warm-renamed" || got.CapacityGiB != 2*spec.CapacityGiB ||
		got.Tags[tagging.StorageTier] != "warm-renamed" || got.Tags["team"] != "infra" {
		t.Errorf("after the update: %+v", got)
	}
}
