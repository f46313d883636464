package cloud

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

// Custom images: what a baked node image is on the cloud. CreateImage makes one from an
// instance's disks, CopyImage copies it to another region, DeleteImage removes it; DescribeImages
// reads them. The states and the default filter are the vendor's
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-describeimages): an image is
// Creating or Waiting, then Available, or CreateFailed; UnAvailable and Deprecated are the
// states of an image that can no longer be used. DescribeImages returns only Available images
// unless Status names others, so every read here names them all.
const (
	ImageStatusCreating     = "Creating"
	ImageStatusWaiting      = "Waiting"
	ImageStatusAvailable    = "Available"
	ImageStatusUnAvailable  = "UnAvailable"
	ImageStatusCreateFailed = "CreateFailed"
	ImageStatusDeprecated   = "Deprecated"
)

// imageStatusesAll is the Status filter that shows an image in any state.
var imageStatusesAll = strings.Join([]string{ImageStatusCreating, ImageStatusWaiting, ImageStatusAvailable,
	ImageStatusUnAvailable, ImageStatusCreateFailed, ImageStatusDeprecated}, ",")

// Image is the part of a custom image the node image workflow keeps.
type Image struct {
	ID     string
	Name   string
	Family string
	Region string
	Status string
	// Progress is the vendor's percentage while the image is made, such as "42%".
	Progress     string
	CreationTime string
	Tags         map[string]string
}

func imageFromSDK(region string, in *ecs.Image) Image {
	img := Image{ID: in.ImageId, Name: in.ImageName, Family: in.ImageFamily, Region: region, Status: in.Status,
		Progress: in.Progress, CreationTime: in.CreationTime}
	if len(in.Tags.Tag) > 0 {
		img.Tags = make(map[string]string, len(in.Tags.Tag))
		for _, t := range in.Tags.Tag {
			img.Tags[t.TagKey] = t.TagValue
		}
	}
	return img
}

// CreateImageInput is one CreateImage call: an image of InstanceID's disks.
type CreateImageInput struct {
	InstanceID  string
	Name        string
	Family      string
	Description string
	Tags        map[string]string
	// ClientToken makes the call idempotent: the same token answers with the same image, so a
	// call whose answer was lost (a dropped connection) is retried without making a second one.
	ClientToken string
}

// CreateImage asks for an image of an instance's disks and returns its id; the image is Creating
// until WaitImageAvailable.
func (c *Client) CreateImage(ctx context.Context, in CreateImageInput) (string, error) {
	req := ecs.CreateCreateImageRequest()
	req.RegionId = c.region
	req.InstanceId = in.InstanceID
	req.ImageName = in.Name
	req.ImageFamily = in.Family
	req.Description = in.Description
	req.ClientToken = in.ClientToken
	tags := make([]ecs.CreateImageTag, 0, len(in.Tags))
	for _, k := range sortedKeys(in.Tags) {
		tags = append(tags, ecs.CreateImageTag{Key: k, Value: in.Tags[k]})
	}
	req.Tag = &tags
	resp := ecs.CreateCreateImageResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return "", err
	}
	return resp.ImageId, nil
}

// FindImage reads a custom image in region ("" is the client's) in any state; a not-found error
// (IsNotFound) when there is none.
func (c *Client) FindImage(ctx context.Context, region, id string) (*Image, error) {
	images, err := c.describeImages(ctx, region, func(req *ecs.DescribeImagesRequest) { req.ImageId = id })
	if err != nil {
		return nil, err
	}
	for i := range images {
		if images[i].ID == id {
			return &images[i], nil
		}
	}
	return nil, notFound(ProductECS, "DescribeImages", "InvalidImageId.NotFound", "image "+id)
}

// ListImagesByTags lists the account's own images in region ("" is the client's) that carry
// every tag, in any state, oldest first.
func (c *Client) ListImagesByTags(ctx context.Context, region string, tags map[string]string) ([]Image, error) {
	filter := make([]ecs.DescribeImagesTag, 0, len(tags))
	for _, k := range sortedKeys(tags) {
		filter = append(filter, ecs.DescribeImagesTag{Key: k, Value: tags[k]})
	}
	images, err := c.describeImages(ctx, region, func(req *ecs.DescribeImagesRequest) { req.Tag = &filter })
	if err != nil {
		return nil, err
	}
	// The filter is the server's; a server that ignores it must not hand back other images.
	images = slices.DeleteFunc(images, func(img Image) bool {
		for k, v := range tags {
			if img.Tags[k] != v {
				return true
			}
		}
		return false
	})
	sort.SliceStable(images, func(i, j int) bool { return images[i].CreationTime < images[j].CreationTime })
	return images, nil
}

// describeImages pages through DescribeImages for the account's own images in every state.
func (c *Client) describeImages(ctx context.Context, region string, set func(*ecs.DescribeImagesRequest)) ([]Image, error) {
	if region == "" {
		region = c.region
	}
	return pageNumbers("images", 100, 0, func(page int) ([]Image, int, int, error) {
		req := ecs.CreateDescribeImagesRequest()
		req.RegionId = region
		req.ImageOwnerAlias = "self"
		req.Status = imageStatusesAll
		req.PageNumber = requests.NewInteger(page)
		req.PageSize = requests.NewInteger(100)
		set(req)
		resp := ecs.CreateDescribeImagesResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, 0, 0, err
		}
		out := make([]Image, 0, len(resp.Images.Image))
		for i := range resp.Images.Image {
			out = append(out, imageFromSDK(region, &resp.Images.Image[i]))
		}
		return out, len(resp.Images.Image), resp.TotalCount, nil
	})
}

// WaitImageAvailable waits until the image in region ("" is the client's) is Available; a
// CreateFailed, UnAvailable or Deprecated image ends the wait at once (a *StateError). Not found
// is waited out: an image asked for a moment ago may not be listed yet.
func (c *Client) WaitImageAvailable(ctx context.Context, region, id string) (*Image, error) {
	return waitFor(ctx, waiter[*Image]{
		what:    "image " + id,
		refresh: refreshStatus(func() (*Image, error) { return c.FindImage(ctx, region, id) }, func(img *Image) string { return img.Status }),
		pending: []string{ImageStatusCreating, ImageStatusWaiting}, target: []string{ImageStatusAvailable},
		failed:   []string{ImageStatusCreateFailed, ImageStatusUnAvailable, ImageStatusDeprecated},
		notFound: notFoundPending,
		lastSeen: func(img *Image, state string) string {
			if img == nil || img.Progress == "" {
				return state
			}
			return fmt.Sprintf("%s, %s", state, img.Progress)
		},
	})
}

// CopyImage copies an image of the client's region to destRegion, with the name and tags given
// there, and returns the copy's id (in destRegion, Creating until it is Available). CopyImage
// takes no client token: a caller that may have lost an answer looks for the copy by its tags
// before asking again.
func (c *Client) CopyImage(ctx context.Context, id, destRegion, name string, tags map[string]string) (string, error) {
	req := ecs.CreateCopyImageRequest()
	req.RegionId = c.region
	req.ImageId = id
	req.DestinationRegionId = destRegion
	req.DestinationImageName = name
	ts := make([]ecs.CopyImageTag, 0, len(tags))
	for _, k := range sortedKeys(tags) {
		ts = append(ts, ecs.CopyImageTag{Key: k, Value: tags[k]})
	}
	req.Tag = &ts
	resp := ecs.CreateCopyImageResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return "", err
	}
	return resp.ImageId, nil
}

// DeleteImage deletes an image in region ("" is the client's); not found counts as done. Without
// force the vendor refuses an image that instances still run from, which is what a caller that
// has not moved every pool off it wants.
func (c *Client) DeleteImage(ctx context.Context, region, id string, force bool) error {
	if region == "" {
		region = c.region
	}
	req := ecs.CreateDeleteImageRequest()
	req.RegionId = region
	req.ImageId = id
	req.Force = requests.NewBoolean(force)
	err := c.Call(ctx, req, ecs.CreateDeleteImageResponse())
	if IsNotFound(err) {
		return nil
	}
	return err
}

// StopInstance stops an instance (StopInstances with one id; a normal shutdown, not a forced one,
// so its disks are consistent for CreateImage). An instance still starting is waited for first
// (the vendor stops only a Running one); one already Stopping or Stopped (it powered itself off)
// is left as it is. WaitInstanceStopped tells when it is down.
func (c *Client) StopInstance(ctx context.Context, id string) error {
	in, err := waitFor(ctx, waiter[*Instance]{
		what: "instance " + id, goal: "be Running or stopped",
		refresh: refreshStatus(func() (*Instance, error) { return c.findInstance(ctx, id) }, func(in *Instance) string { return in.Status }),
		pending: []string{"Pending", "Starting"}, target: []string{"Running", "Stopping", "Stopped"},
		notFound: notFoundFails, interval: instancePollInterval,
	})
	if err != nil || in.Status != "Running" {
		return err
	}
	req := ecs.CreateStopInstancesRequest()
	req.RegionId = c.region
	req.InstanceId = &[]string{id}
	req.ForceStop = requests.NewBoolean(false)
	err = c.Call(ctx, req, ecs.CreateStopInstancesResponse())
	if ErrorCode(err) == "IncorrectInstanceStatus" {
		return nil // it stopped itself between the two calls
	}
	return err
}

// findInstance reads one instance; a not-found error when there is none.
func (c *Client) findInstance(ctx context.Context, id string) (*Instance, error) {
	got, err := c.DescribeInstancesByID(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	if len(got) == 0 {
		return nil, notFound(ProductECS, "DescribeInstances", "InvalidInstanceId.NotFound", "instance "+id)
	}
	return &got[0], nil
}

// WaitInstanceStopped waits until the instance is Stopped and returns it as last seen. Pending,
// Starting, Running and Stopping are waited through (an instance that powers itself off passes
// them all); a missing instance fails the wait.
func (c *Client) WaitInstanceStopped(ctx context.Context, id string) (*Instance, error) {
	return waitFor(ctx, waiter[*Instance]{
		what:    "instance " + id,
		refresh: refreshStatus(func() (*Instance, error) { return c.findInstance(ctx, id) }, func(in *Instance) string { return in.Status }),
		pending: []string{"Pending", "Starting", "Running", "Stopping"}, target: []string{"Stopped"},
		notFound: notFoundFails,
		interval: instancePollInterval,
	})
}

// UbuntuFamily is the image family of Alibaba Cloud's public Ubuntu 22.04 images, what the node
// bootstrap and an image builder need.
const UbuntuFamily = "acs:ubuntu_22_04_x64"

// NewestPublicImage answers the newest Available public image of an image family in the
// client's region (DescribeImages with ImageOwnerAlias system and ImageFamily; the default Status
// lists Available images only), or a not-found error when the family has none.
func (c *Client) NewestPublicImage(ctx context.Context, family string) (*Image, error) {
	images, err := pageNumbers("images", 100, 0, func(page int) ([]Image, int, int, error) {
		req := ecs.CreateDescribeImagesRequest()
		req.RegionId = c.region
		req.ImageOwnerAlias = "system"
		req.ImageFamily = family
		req.PageNumber = requests.NewInteger(page)
		req.PageSize = requests.NewInteger(100)
		resp := ecs.CreateDescribeImagesResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, 0, 0, err
		}
		out := make([]Image, 0, len(resp.Images.Image))
		for i := range resp.Images.Image {
			// The filter is the server's; a server that ignores it must not hand back another family.
			if img := imageFromSDK(c.region, &resp.Images.Image[i]); img.Family == family && img.Status == ImageStatusAvailable {
				out = append(out, img)
			}
		}
		return out, len(resp.Images.Image), resp.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	if len(images) == 0 {
		return nil, notFound(ProductECS, "DescribeImages", "InvalidImageFamily.NotFound", "public image of family "+family)
	}
	newest := images[0]
	for _, img := range images[1:] {
		if img.CreationTime > newest.CreationTime || (img.CreationTime == newest.CreationTime && img.ID > newest.ID) {
			newest = img
		}
	}
	return &newest, nil
}
