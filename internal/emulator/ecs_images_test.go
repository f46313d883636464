package emulator

import (
	"encoding/base64"
	"slices"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

const imageTestBoot = 300 * time.Millisecond

// describeImages lists the images of region the way internal/cloud does when status is "all",
// or with the vendor's default Status when it is "".
func (e *env) describeImages(region, status string, set func(*ecs.DescribeImagesRequest)) []ecs.Image {
	e.t.Helper()
	r := ecs.CreateDescribeImagesRequest()
	r.RegionId = region
	r.ImageOwnerAlias = "self"
	if status == "all" {
		status = "Creating,Waiting,Available,UnAvailable,CreateFailed,Deprecated"
	}
	r.Status = status
	r.PageSize = requests.NewInteger(100)
	if set != nil {
		set(r)
	}
	resp, err := e.ecs.DescribeImages(r)
	must(e.t, err)
	return resp.Images.Image
}

func (e *env) findImage(region, id string) *ecs.Image {
	e.t.Helper()
	for _, img := range e.describeImages(region, "all", func(r *ecs.DescribeImagesRequest) { r.ImageId = id }) {
		if img.ImageId == id {
			return &img
		}
	}
	return nil
}

func (e *env) waitImage(region, id string) ecs.Image {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		img := e.findImage(region, id)
		if img == nil {
			e.t.Fatalf("image %s vanished", id)
		}
		if img.Status == "Available" {
			return *img
		}
		if img.Status != "Creating" {
			e.t.Fatalf("image %s is %s", id, img.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("image %s never became Available", id)
	return ecs.Image{}
}

func (e *env) createImage(instance, name, token string, tags map[string]string) (string, error) {
	r := ecs.CreateCreateImageRequest()
	r.RegionId = testRegion
	r.InstanceId = instance
	r.ImageName = name
	r.ImageFamily = "gpu-node"
	r.ClientToken = token
	ts := []ecs.CreateImageTag{}
	for k, v := range tags {
		ts = append(ts, ecs.CreateImageTag{Key: k, Value: v})
	}
	r.Tag = &ts
	resp, err := e.ecs.CreateImage(r)
	if err != nil {
		return "", err
	}
	return resp.ImageId, nil
}

func (e *env) deleteImage(region, id string, force bool) error {
	r := ecs.CreateDeleteImageRequest()
	r.RegionId = region
	r.ImageId = id
	r.Force = requests.NewBoolean(force)
	_, err := e.ecs.DeleteImage(r)
	return err
}

// A custom image through the real SDK: made of a builder instance, Creating then Available after
// the image time, hidden by DescribeImages' default Status while Creating, found by its tags, the
// same image for the same client token, copied to another region, launched from, and deleted
// only once no instance runs from it (or with Force).
func TestCustomImageLifecycle(t *testing.T) {
	e := newEnv(t, Config{BootTime: imageTestBoot})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	userData := base64.StdEncoding.EncodeToString([]byte("#!/bin/sh\necho baked\n"))
	builder := e.runOne(f, params{"UserData": userData})

	// Pending: not yet Running or Stopped.
	_, err := e.createImage(builder, "gpu-node-1", "", nil)
	wantCode(t, err, "IncorrectInstanceStatus")
	for st := e.describe([]string{builder})[0].Status; st != "Running"; st = e.nextStatus(builder, st) {
	}
	_, err = e.createImage("i-nosuch", "gpu-node-1", "", nil)
	wantCode(t, err, "InvalidInstanceId.NotFound")
	_, err = e.createImage(builder, "1-starts-with-a-digit", "", nil)
	wantCode(t, err, "InvalidImageName.Malformed")

	tags := map[string]string{"gpucluster:node-image": "gpu-node-1"}
	id, err := e.createImage(builder, "gpu-node-1", "token-1", tags)
	must(t, err)
	again, err := e.createImage(builder, "gpu-node-1", "token-1", tags)
	must(t, err)
	if again != id {
		t.Fatalf("the same client token made a second image: %s, then %s", id, again)
	}
	_, err = e.createImage(builder, "gpu-node-1", "token-2", nil)
	wantCode(t, err, "InvalidImageName.Duplicated")

	img := e.findImage(testRegion, id)
	if img == nil || img.Status != "Creating" || img.ImageOwnerAlias != "self" || img.IsPublic || img.Progress == "100%" {
		t.Fatalf("new image: %+v", img)
	}
	if got := e.describeImages(testRegion, "", nil); len(got) != 0 {
		t.Fatalf("the default Status (Available) shows a Creating image: %+v", got)
	}
	byTag := func(k, v string) []ecs.Image {
		return e.describeImages(testRegion, "all", func(r *ecs.DescribeImagesRequest) {
			r.Tag = &[]ecs.DescribeImagesTag{{Key: k, Value: v}}
		})
	}
	if got := byTag("gpucluster:node-image", "gpu-node-1"); len(got) != 1 || got[0].ImageId != id {
		t.Fatalf("by its tag: %+v", got)
	}
	if got := byTag("gpucluster:node-image", "other"); len(got) != 0 {
		t.Fatalf("by another tag value: %+v", got)
	}
	// A Creating image cannot be copied, deleted or launched from.
	cp := ecs.CreateCopyImageRequest()
	cp.RegionId, cp.ImageId, cp.DestinationRegionId, cp.DestinationImageName = testRegion, id, "cn-beijing", "gpu-node-1"
	_, err = e.ecs.CopyImage(cp)
	wantCode(t, err, "IncorrectImageStatus")
	wantCode(t, e.deleteImage(testRegion, id, false), "ImageIsCreating")
	r := e.runReq(f, "ecs.gn6i-c4g1.xlarge", 1)
	r.ImageId = id
	_, err = e.ecs.RunInstances(r)
	wantCode(t, err, "OperationDenied.ImageNotValid")

	ready := e.waitImage(testRegion, id)
	if ready.Progress != "100%" || len(ready.Tags.Tag) != 1 || ready.Tags.Tag[0].TagKey != "gpucluster:node-image" ||
		ready.ImageFamily != "gpu-node" || ready.Usage != "none" {
		t.Fatalf("available image: %+v", ready)
	}
	if got := e.describeImages(testRegion, "", nil); len(got) != 1 || got[0].ImageId != id {
		t.Fatalf("the default Status lists the Available image: %+v", got)
	}
	// ImageOwnerAlias system lists public images only, "" both.
	sys := e.describeImages(testRegion, "", func(r *ecs.DescribeImagesRequest) { r.ImageOwnerAlias = "system" })
	all := e.describeImages(testRegion, "", func(r *ecs.DescribeImagesRequest) { r.ImageOwnerAlias = "" })
	if slices.ContainsFunc(sys, func(i ecs.Image) bool { return i.ImageId == id }) || len(all) != len(sys)+1 {
		t.Fatalf("system %d images, all %d", len(sys), len(all))
	}
	if got := e.describeImages(testRegion, "all", func(r *ecs.DescribeImagesRequest) { r.ImageId = "m-nosuch" }); len(got) != 0 {
		t.Fatalf("an unknown custom id: %+v", got)
	}

	// Copied to another region: a new image there, Creating then Available, recording its source.
	cp.Tag = &[]ecs.CopyImageTag{{Key: "gpucluster:node-image-role", Value: "copy"}}
	out, err := e.ecs.CopyImage(cp)
	must(t, err)
	if c := e.findImage("cn-beijing", out.ImageId); c == nil || c.Status != "Creating" || !c.IsCopied || len(c.Tags.Tag) != 1 {
		t.Fatalf("copy: %+v", c)
	}
	if e.findImage(testRegion, out.ImageId) != nil {
		t.Fatal("the copy is listed in the source region")
	}
	wantCode(t, e.deleteImage(testRegion, id, false), "OperationDenied.ImageCopying")
	e.waitImage("cn-beijing", out.ImageId)
	cp.DestinationRegionId = testRegion
	_, err = e.ecs.CopyImage(cp)
	wantCode(t, err, "IncorrectDestinationRegion")
	cp.DestinationRegionId = "xx-nowhere"
	_, err = e.ecs.CopyImage(cp)
	wantCode(t, err, "DestinationRegion.NotFound")

	// Launched from; DescribeInstances names it; DeleteImage refuses while the instance runs
	// from it, takes it with Force or once the instance is gone.
	r.ImageId = id
	run, err := e.ecs.RunInstances(r)
	must(t, err)
	node := run.InstanceIdSets.InstanceIdSet[0]
	if got := e.describe([]string{node}); len(got) != 1 || got[0].ImageId != id {
		t.Fatalf("instance from the image: %+v", got)
	}
	if u := e.findImage(testRegion, id); u.Usage != "instance" {
		t.Fatalf("Usage of an image in use: %q", u.Usage)
	}
	wantCode(t, e.deleteImage(testRegion, id, false), "ImageUsingByInstance")

	v := e.s.View()
	var seen bool
	for _, iv := range v.Images {
		if iv.ID == id {
			seen = iv.SourceInstanceID == builder && iv.SourceUserData == userData && iv.SourceImageID == "ubuntu_22_04_x64_20G_alibase_20240101.vhd" &&
				iv.Region == testRegion && iv.Status == "Available"
		}
	}
	for _, in := range v.Instances {
		if in.ID == node && in.ImageID != id {
			t.Fatalf("View instance %s runs from %q", node, in.ImageID)
		}
	}
	if !seen {
		t.Fatalf("View.Images: %+v", v.Images)
	}

	del := ecs.CreateDeleteInstancesRequest()
	del.RegionId, del.InstanceId, del.Force = testRegion, &[]string{node}, requests.NewBoolean(true)
	_, err = e.ecs.DeleteInstances(del)
	must(t, err)
	must(t, e.deleteImage(testRegion, id, false))
	if e.findImage(testRegion, id) != nil {
		t.Fatal("a deleted image is still listed")
	}
	wantCode(t, e.deleteImage(testRegion, id, false), "InvalidImageId.NotFound")

	// Force takes an image in use.
	id2, err := e.createImage(builder, "gpu-node-2", "", nil)
	must(t, err)
	e.waitImage(testRegion, id2)
	r.ImageId = id2
	_, err = e.ecs.RunInstances(r)
	must(t, err)
	wantCode(t, e.deleteImage(testRegion, id2, false), "ImageUsingByInstance")
	must(t, e.deleteImage(testRegion, id2, true))
	must(t, e.deleteImage("cn-beijing", out.ImageId, false))
}

// Images are taggable through the ECS tag API (ResourceType image).
func TestCustomImageTags(t *testing.T) {
	e := newEnv(t, Config{BootTime: imageTestBoot})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	in := e.runOne(f)
	for st := e.describe([]string{in})[0].Status; st != "Running"; st = e.nextStatus(in, st) {
	}
	id, err := e.createImage(in, "tagged", "", nil)
	must(t, err)
	wantAnswer(t, e.ecsCall("TagResources", params{"ResourceType": "image", "ResourceId.1": id, "Tag.1.Key": "team", "Tag.1.Value": "ml"}), 200, "")
	a := e.ecsCall("ListTagResources", params{"ResourceType": "image", "Tag.1.Key": "team", "Tag.1.Value": "ml"})
	var out struct {
		TagResources struct {
			TagResource []struct{ ResourceId, ResourceType string }
		}
	}
	decodeInto(t, a, &out)
	if len(out.TagResources.TagResource) != 1 || out.TagResources.TagResource[0].ResourceId != id {
		t.Fatalf("ListTagResources: %+v", out)
	}
	if img := e.findImage(testRegion, id); img == nil || len(img.Tags.Tag) != 1 || img.Tags.Tag[0].TagValue != "ml" {
		t.Fatalf("DescribeImages after TagResources: %+v", img)
	}
	wantAnswer(t, e.ecsCall("UntagResources", params{"ResourceType": "image", "ResourceId.1": id, "TagKey.1": "team"}), 200, "")
	if img := e.findImage(testRegion, id); img == nil || len(img.Tags.Tag) != 0 {
		t.Fatalf("DescribeImages after UntagResources: %+v", img)
	}
}
