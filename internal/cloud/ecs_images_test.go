package cloud

import (
	"testing"
)

// The image workflow's client calls end to end against the emulator: a builder instance is
// stopped, imaged with a client token, waited Available, found by its tags, copied to another
// region and waited there, launched from, refused deletion while in use and deleted after; the
// newest public image of a family is found for the builder.
func TestImagesAgainstEmulator(t *testing.T) {
	c, _ := startEmulator(t)
	ctx := testCtx(t)
	n := createTestNetwork(ctx, t, c, "10.0.1.0/24")
	sg, err := c.CreateSecurityGroup(ctx, SecurityGroupInput{VPCID: n.vpcID, Name: "images"})
	if err != nil {
		t.Fatal(err)
	}

	base, err := c.NewestPublicImage(ctx, "acs:ubuntu_22_04_x64")
	if err != nil {
		t.Fatalf("NewestPublicImage: %v", err)
	}
	if base.ID == "" || base.Status != ImageStatusAvailable {
		t.Fatalf("NewestPublicImage: %+v", base)
	}
	if _, err := c.NewestPublicImage(ctx, "no-such-family"); !IsNotFound(err) {
		t.Fatalf("NewestPublicImage of an unknown family: %v", err)
	}

	launch := func(token, image string) string {
		t.Helper()
		ids, err := c.RunInstances(ctx, RunInstancesInput{ClientToken: token, InstanceType: "ecs.g7.xlarge", ZoneID: testRegion + "-a",
			ImageID: image, SecurityGroupID: sg, VSwitchID: n.vswitches[0].ID, Amount: 1, MinAmount: 1,
			SystemDisk: Disk{Category: "cloud_essd", SizeGiB: 40}, UserData: "#!/bin/sh\necho bake\n"})
		if err != nil {
			t.Fatalf("RunInstances from %s: %v", image, err)
		}
		if _, err := c.WaitInstancesRunning(ctx, ids); err != nil {
			t.Fatal(err)
		}
		return ids[0]
	}
	builder := launch("builder", base.ID)
	if err := c.StopInstance(ctx, builder); err != nil {
		t.Fatalf("StopInstance: %v", err)
	}
	if in, err := c.WaitInstanceStopped(ctx, builder); err != nil || in.Status != "Stopped" {
		t.Fatalf("WaitInstanceStopped: %+v, %v", in, err)
	}
	if err := c.StopInstance(ctx, builder); err != nil {
		t.Fatalf("StopInstance of a Stopped instance: %v", err)
	}

	tags := map[string]string{"gpucluster:node-image": "gpu-node", "gpucluster:node-image-content": "abc"}
	in := CreateImageInput{InstanceID: builder, Name: "gpu-node", Family: "gpu-node", Description: "baked node image",
		Tags: tags, ClientToken: "create-gpu-node"}
	id, err := c.CreateImage(ctx, in)
	if err != nil {
		t.Fatalf("CreateImage: %v", err)
	}
	if again, err := c.CreateImage(ctx, in); err != nil || again != id {
		t.Fatalf("CreateImage with the same client token: %s, %v (first %s)", again, err, id)
	}
	img, err := c.FindImage(ctx, "", id)
	if err != nil || img.Status != ImageStatusCreating {
		t.Fatalf("FindImage right after CreateImage: %+v, %v", img, err)
	}
	img, err = c.WaitImageAvailable(ctx, "", id)
	if err != nil || img.Status != ImageStatusAvailable || img.Progress != "100%" || img.Tags["gpucluster:node-image"] != "gpu-node" {
		t.Fatalf("WaitImageAvailable: %+v, %v", img, err)
	}
	found, err := c.ListImagesByTags(ctx, "", tags)
	if err != nil || len(found) != 1 || found[0].ID != id {
		t.Fatalf("ListImagesByTags: %+v, %v", found, err)
	}
	if found, err := c.ListImagesByTags(ctx, "", map[string]string{"gpucluster:node-image": "other"}); err != nil || len(found) != 0 {
		t.Fatalf("ListImagesByTags of another name: %+v, %v", found, err)
	}

	const dest = "cn-beijing"
	copyTags := map[string]string{"gpucluster:node-image": "gpu-node", "gpucluster:node-image-role": "copy"}
	copyID, err := c.CopyImage(ctx, id, dest, "gpu-node", copyTags)
	if err != nil {
		t.Fatalf("CopyImage: %v", err)
	}
	if cp, err := c.WaitImageAvailable(ctx, dest, copyID); err != nil || cp.Region != dest {
		t.Fatalf("WaitImageAvailable in %s: %+v, %v", dest, cp, err)
	}
	if found, err := c.ListImagesByTags(ctx, dest, copyTags); err != nil || len(found) != 1 || found[0].ID != copyID {
		t.Fatalf("ListImagesByTags in %s: %+v, %v", dest, found, err)
	}
	if _, err := c.FindImage(ctx, "", copyID); !IsNotFound(err) {
		t.Fatalf("the copy found in the source region: %v", err)
	}

	node := launch("node", id)
	got, err := c.DescribeInstancesByID(ctx, []string{node})
	if err != nil || len(got) != 1 || got[0].ImageID != id {
		t.Fatalf("instance from the image: %+v, %v", got, err)
	}
	if err := c.DeleteImage(ctx, "", id, false); ErrorCode(err) != "ImageUsingByInstance" {
		t.Fatalf("DeleteImage of an image in use: %v", err)
	}
	if err := c.DeleteInstances(ctx, []string{node, builder}); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitInstancesGone(ctx, []string{node, builder}); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteImage(ctx, "", id, false); err != nil {
		t.Fatalf("DeleteImage: %v", err)
	}
	if _, err := c.FindImage(ctx, "", id); !IsNotFound(err) {
		t.Fatalf("FindImage after DeleteImage: %v", err)
	}
	if err := c.DeleteImage(ctx, "", id, false); err != nil {
		t.Fatalf("DeleteImage of a deleted image: %v", err)
	}
	if err := c.DeleteImage(ctx, dest, copyID, false); err != nil {
		t.Fatalf("DeleteImage in %s: %v", dest, err)
	}
}
