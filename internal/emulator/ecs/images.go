package ecs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// Custom images: CreateImage makes one of an instance's disks, CopyImage copies one to another
// region, DeleteImage removes one; DescribeImages lists them beside the public images and
// RunInstances launches from them. The vendor's pages the rules below rest on, named by their
// action where cited:
//
//   - CreateImage: https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-createimage
//   - DescribeImages: https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeimages
//   - CopyImage: https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-copyimage
//   - DeleteImage: https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-deleteimage
//   - RunInstances: https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-runinstances

func init() {
	// CreateImage and CopyImage both document ClientToken ("to ensure the idempotence of the
	// request", CreateImage and CopyImage pages), so the dispatcher answers a repeated token with
	// the first answer.
	core.Register(Version, "CreateImage", core.Route{Fn: handle(createImage), Write: true, Idem: true})
	core.Register(Version, "CopyImage", core.Route{Fn: handle(copyImage), Write: true, Idem: true})
	core.Register(Version, "DeleteImage", core.Route{Fn: handle(deleteImage), Write: true})
}

// The vendor's image states (DescribeImages, Status): an image is Creating until it is made,
// then Available. The emulator's images never fail, so CreateFailed, UnAvailable, Waiting and
// Deprecated are only names a Status filter may carry.
const (
	imageCreating  = "Creating"
	imageAvailable = "Available"
)

// imageStatuses are the values DescribeImages documents for Status.
var imageStatuses = []string{"Creating", "Waiting", "Available", "UnAvailable", "CreateFailed", "Deprecated"}

// image is one custom image. Its status is derived from Created and the image time (see
// status), as an instance's is from its phase, so nothing ticks images along.
type imageRecord struct {
	ID      string     `json:"id"`
	Seq     uint64     `json:"seq"`
	Region  string     `json:"region"`
	Name    string     `json:"name,omitempty"`
	Family  string     `json:"family,omitempty"`
	Desc    string     `json:"desc,omitempty"`
	Tags    []core.Tag `json:"tags,omitempty"`
	Created int64      `json:"created"` // unix nanoseconds; Creating until Created + the image time
	// Base is the public image at the root of the image's lineage (the source instance's image,
	// or that image's base when it was a custom image): what the image reports as its OS and
	// size.
	Base string `json:"base"`
	// SourceInstance is the instance CreateImage made the image of; SourceUserData is that
	// instance's user data (Base64, as RunInstances took it) and SourceImage the image it ran
	// from, both as they were at CreateImage: the image is the builder's disk, and the user data
	// says what the builder installed on it. A copy carries its source's three.
	SourceInstance string `json:"source_instance,omitempty"`
	SourceUserData string `json:"source_user_data,omitempty"`
	SourceImage    string `json:"source_image,omitempty"`
	// CopiedFrom is the image (in another region) CopyImage copied this one from.
	CopiedFrom string `json:"copied_from,omitempty"`
}

// imageTime is how long an image stays Creating: the Server's boot time, the emulator's one
// measure of how long an asynchronous cloud operation takes.
func imageTime(env core.Env) time.Duration { return env.BootTime() }

func (c *call) imageStatus(img *imageRecord) string {
	if time.Duration(c.Now.UnixNano()-img.Created) < imageTime(c.Env) {
		return imageCreating
	}
	return imageAvailable
}

// imageProgress is the vendor's Progress, "0%" to "100%", linear in the image time.
func (c *call) imageProgress(img *imageRecord) string {
	if c.imageStatus(img) == imageAvailable {
		return "100%"
	}
	el, total := c.Now.UnixNano()-img.Created, int64(imageTime(c.Env))
	return fmt.Sprintf("%d%%", min(99, max(0, el*100/max(total, 1))))
}

// customImage answers the custom image id of the call's region, or nil.
func (c *call) customImage(id string) *imageRecord {
	if img := c.st.Images[id]; img != nil && img.Region == c.Region {
		return img
	}
	return nil
}

// imagesIn lists the custom images of a region in creation order.
func (d *Store) imagesIn(region string) []*imageRecord {
	var out []*imageRecord
	for _, img := range d.Images {
		if img.Region == region {
			out = append(out, img)
		}
	}
	slices.SortFunc(out, func(a, b *imageRecord) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}

// nameTaken says whether a custom image of region already has name.
func (d *Store) nameTaken(region, name string) bool {
	for _, img := range d.Images {
		if img.Region == region && img.Name == name {
			return true
		}
	}
	return false
}

// imageNameMatch is DescribeImages' ImageName filter: "The image name. Fuzzy match is
// supported" (DescribeImages); the emulator matches a name that contains the pattern (a
// trailing * is a wildcard, as other ECS name filters take).
func imageNameMatch(name, pattern string) bool {
	return strings.Contains(name, strings.TrimSuffix(pattern, "*"))
}

// imagesInUse answers the ids of the images instances of region run from.
func (d *Store) imagesInUse(region string) map[string]bool {
	used := map[string]bool{}
	for _, in := range d.order {
		if in.Region == region {
			used[in.Image] = true
		}
	}
	return used
}

// checkImageName holds an image name to the vendor's rule: "2 to 128 characters in length. The
// name must start with a letter and cannot start with http:// or https://. The name can contain
// letters, digits, colons (:), underscores (_), and hyphens (-)" (CreateImage ImageName; CopyImage
// DestinationImageName adds periods (.) and refuses a name starting with acs: or aliyun). The
// vendor answers a name that breaks it with InvalidImageName.Malformed (400, CreateImage and
// CopyImage error codes).
func checkImageName(param, name string, copyName bool) *core.Error {
	bad := func(why string) *core.Error {
		return core.Errf(400, "InvalidImageName.Malformed", "The specified %s %q is wrongly formed: %s.", param, name, why)
	}
	r := []rune(name)
	switch {
	case len(r) < 2 || len(r) > 128:
		return bad("it must be 2 to 128 characters long")
	case !unicode.IsLetter(r[0]):
		return bad("it must start with a letter")
	case strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "https://"):
		return bad("it cannot start with http:// or https://")
	case copyName && (strings.HasPrefix(name, "acs:") || strings.HasPrefix(name, "aliyun")):
		return bad("it cannot start with acs: or aliyun")
	}
	for _, ch := range r {
		if unicode.IsLetter(ch) || unicode.IsDigit(ch) || ch == ':' || ch == '_' || ch == '-' || (copyName && ch == '.') {
			continue
		}
		return bad(fmt.Sprintf("%q is not a letter, digit, colon, underscore or hyphen", ch))
	}
	return nil
}

// checkImageFamily: "The name must be 2 to 128 characters in length. The name must start with a
// letter and cannot start with acs: or aliyun. The name cannot contain http:// or https://. The
// name can contain letters, digits, colons (:), underscores (_), and hyphens (-)" (CreateImage
// ImageFamily). The vendor names no code of its own for it, so the emulator answers its
// InvalidParameter.
func checkImageFamily(fam string) *core.Error {
	r := []rune(fam)
	ok := len(r) >= 2 && len(r) <= 128 && unicode.IsLetter(r[0]) && !strings.HasPrefix(fam, "acs:") &&
		!strings.HasPrefix(fam, "aliyun") && !strings.Contains(fam, "http://") && !strings.Contains(fam, "https://")
	for _, ch := range r {
		ok = ok && (unicode.IsLetter(ch) || unicode.IsDigit(ch) || ch == ':' || ch == '_' || ch == '-')
	}
	if !ok {
		return core.ErrInvalid("ImageFamily", "2 to 128 letters, digits, colons, underscores and hyphens, starting with a letter and not with acs: or aliyun")
	}
	return nil
}

// checkImageDescription: "The description must be 2 to 256 characters in length and cannot start
// with http:// or https://" (CreateImage Description, CopyImage DestinationDescription);
// InvalidDescription.Malformed (400) otherwise.
func checkImageDescription(param, desc string) *core.Error {
	n := len([]rune(desc))
	if n < 2 || n > 256 || strings.HasPrefix(desc, "http://") || strings.HasPrefix(desc, "https://") {
		return core.Errf(400, "InvalidDescription.Malformed", "The specified %s is wrongly formed: 2 to 256 characters, not starting with http:// or https://.", param)
	}
	return nil
}

// imageBase answers the public image at the root of image id's lineage in region.
func (d *Store) imageBase(region, id string) string {
	if img := d.Images[id]; img != nil && img.Region == region {
		return img.Base
	}
	return id
}

func createImage(c *call) (any, *core.Error) {
	p := c.P
	// CreateImage makes an image of an instance (InstanceId), of a system disk snapshot
	// (SnapshotId) or of snapshots mapped to disks (DiskDeviceMapping), InstanceId first. The
	// emulator has no snapshots: it serves the instance's way only.
	id := p["InstanceId"]
	if id == "" {
		if p["SnapshotId"] != "" || len(p.StructList("DiskDeviceMapping")) > 0 {
			return nil, core.ErrInvalid("SnapshotId", "the emulator makes images of instances (InstanceId) only; it has no snapshots")
		}
		return nil, core.ErrMissing("InstanceId")
	}
	in := c.st.Instances[id]
	if in == nil || in.Region != c.Region || !c.visible(in) {
		return nil, core.ErrNotFound("InvalidInstanceId.NotFound", id)
	}
	// "The instance must be in the Running or Stopped state"; IncorrectInstanceStatus otherwise
	// (CreateImage).
	if st := c.status(in); st != "Running" && st != "Stopped" {
		return nil, core.ErrStatus("The current status of instance %s (%s) does not support CreateImage: it must be Running or Stopped.", in.ID, st)
	}
	name, fam, desc := p["ImageName"], p["ImageFamily"], p["Description"]
	if name != "" {
		if e := checkImageName("ImageName", name, false); e != nil {
			return nil, e
		}
		// InvalidImageName.Duplicated, "The specified Image name has already been used" (400,
		// CreateImage error codes).
		if c.st.nameTaken(c.Region, name) {
			return nil, core.Errf(400, "InvalidImageName.Duplicated", "The specified Image name %q has already been used in %s.", name, c.Region)
		}
	}
	if fam != "" {
		if e := checkImageFamily(fam); e != nil {
			return nil, e
		}
	}
	if desc != "" {
		if e := checkImageDescription("Description", desc); e != nil {
			return nil, e
		}
	}
	tags, e := p.Tags("Tag")
	if e != nil {
		return nil, e
	}
	if dry, e := p.Bool("DryRun", false); e != nil {
		return nil, e
	} else if dry {
		return nil, core.Errf(400, "DryRunOperation", "Request validation has been passed with DryRun flag set.")
	}
	img := &imageRecord{ID: c.Env.NewID("m"), Seq: c.Env.Seq(), Region: c.Region, Name: name, Family: fam, Desc: desc, Tags: tags,
		Created: c.Now.UnixNano(), Base: c.st.imageBase(c.Region, in.Image),
		SourceInstance: in.ID, SourceUserData: in.UserData, SourceImage: in.Image}
	c.st.Images[img.ID] = img
	return &ecssdk.CreateImageResponse{RequestId: c.ReqID, ImageId: img.ID}, nil
}

func copyImage(c *call) (any, *core.Error) {
	p := c.P
	id, e := p.Required("ImageId")
	if e != nil {
		return nil, e
	}
	// The source must be a custom image of the caller's: InvalidImageId.NotFound (404) for one
	// that does not exist, IncorrectImageStatus (400) unless it is Available ("The custom image
	// must be in the Available state", CopyImage).
	src := c.customImage(id)
	if src == nil {
		return nil, core.ErrNotFound("InvalidImageId.NotFound", id)
	}
	if st := c.imageStatus(src); st != imageAvailable {
		return nil, core.Errf(400, "IncorrectImageStatus", "The image %s is not available (%s).", id, st)
	}
	dest, e := p.Required("DestinationRegionId")
	if e != nil {
		return nil, e
	}
	// DestinationRegion.NotFound (400) for a region there is none of; IncorrectDestinationRegion
	// (403) for the source's own region (CopyImage error codes).
	if !slices.ContainsFunc(c.Env.Regions(), func(r core.Region) bool { return r.ID == dest }) {
		return nil, core.Errf(400, "DestinationRegion.NotFound", "The destination region %q not found.", dest)
	}
	if dest == c.Region {
		return nil, core.Errf(403, "IncorrectDestinationRegion", "The destination region %s is the image's own region.", dest)
	}
	name, desc := p["DestinationImageName"], p["DestinationDescription"]
	if name != "" {
		if e := checkImageName("DestinationImageName", name, true); e != nil {
			return nil, e
		}
		// InvalidImageName.Duplicated, "The destination image is exist" (400, CopyImage).
		if c.st.nameTaken(dest, name) {
			return nil, core.Errf(400, "InvalidImageName.Duplicated", "The destination image name %q is already used in %s.", name, dest)
		}
	}
	if desc != "" {
		if e := checkImageDescription("DestinationDescription", desc); e != nil {
			return nil, e
		}
	}
	tags, e := p.Tags("Tag")
	if e != nil {
		return nil, e
	}
	if dry, e := p.Bool("DryRun", false); e != nil {
		return nil, e
	} else if dry {
		return nil, core.Errf(400, "DryRunOperation", "Request validation has been passed with DryRun flag set.")
	}
	cp := &imageRecord{ID: c.Env.NewID("m"), Seq: c.Env.Seq(), Region: dest, Name: name, Family: src.Family, Desc: desc, Tags: tags,
		Created: c.Now.UnixNano(), Base: src.Base, SourceInstance: src.SourceInstance, SourceUserData: src.SourceUserData,
		SourceImage: src.SourceImage, CopiedFrom: src.ID}
	c.st.Images[cp.ID] = cp
	return &ecssdk.CopyImageResponse{RequestId: c.ReqID, ImageId: cp.ID}, nil
}

func deleteImage(c *call) (any, *core.Error) {
	id, e := c.P.Required("ImageId")
	if e != nil {
		return nil, e
	}
	force, e := c.P.Bool("Force", false)
	if e != nil {
		return nil, e
	}
	// The request model says "If the specified custom image does not exist, the request is
	// ignored", while the page's error codes list InvalidImageId.NotFound (404, "The specified
	// image does not exist in this account"), added in its 2025 revisions; the emulator answers
	// the code, which a caller that means "gone is done" (internal/cloud.DeleteImage) reads as
	// done.
	img := c.customImage(id)
	if img == nil {
		return nil, core.ErrNotFound("InvalidImageId.NotFound", id)
	}
	// ImageIsCreating (403, "The specified image is being created", DeleteImage error codes).
	if c.imageStatus(img) == imageCreating {
		return nil, core.Errf(403, "ImageIsCreating", "The specified image %s is being created.", id)
	}
	// OperationDenied.ImageCopying (403): "The image is being copied" (DeleteImage); "you cannot
	// delete the image while it is being copied" (CopyImage).
	for _, cp := range c.st.Images {
		if cp.CopiedFrom == id && c.imageStatus(cp) == imageCreating {
			return nil, core.Errf(403, "OperationDenied.ImageCopying", "The image %s is being copied (to %s in %s).", id, cp.ID, cp.Region)
		}
	}
	// Force: "true: forcefully deletes the custom image, regardless of whether the image is being
	// used by instances. false: verifies that the custom image is not being used by instances and
	// then deletes the image"; ImageUsingByInstance (403) when it is (DeleteImage).
	if !force && c.st.imagesInUse(c.Region)[id] {
		return nil, core.Errf(403, "ImageUsingByInstance", "The specified image %s has been used to create instances. You can use the DescribeInstances API to query these instances, or you can use the force parameter to proceed.", id)
	}
	if dry, e := c.P.Bool("DryRun", false); e != nil {
		return nil, e
	} else if dry {
		return nil, core.Errf(400, "DryRunOperation", "Request validation has been passed with DryRun flag set.")
	}
	delete(c.st.Images, id)
	return &ecssdk.DeleteImageResponse{RequestId: c.ReqID}, nil
}

// imageOwners are the values DescribeImages documents for ImageOwnerAlias; another is refused
// with InvalidImageOwnerAlias.ValueNotSupported (400). The emulator has no shared, community or
// marketplace images, so "others" and "marketplace" list none.
var imageOwners = []string{"", "system", "self", "others", "marketplace"}

// sdkCustomImage is a custom image as DescribeImages answers it: ImageOwnerAlias "self", not
// public, its OS and size its base public image's.
func (c *call) sdkCustomImage(img *imageRecord, used bool) ecssdk.Image {
	out := ecssdk.Image{ImageId: img.ID, ImageName: img.Name, ImageFamily: img.Family, Description: img.Desc,
		Status: c.imageStatus(img), Progress: c.imageProgress(img), CreationTime: core.FormatTime(img.Created),
		ImageOwnerAlias: "self", IsPublic: false, IsCopied: img.CopiedFrom != "", IsSelfShared: "False",
		OSType: "linux", Architecture: "x86_64", IsSupportIoOptimized: true, IsSupportCloudinit: true, BootMode: "BIOS",
		// Usage: "instance: The image is already in use and running on an ECS instance. none: The
		// image is idle" (DescribeImages).
		Usage: "none"}
	if used {
		out.Usage = "instance"
	}
	if base := findImage(img.Base); base != nil {
		out.OSName, out.OSNameEn, out.Platform, out.Size = base.OSName, base.OSName, base.Platform, base.Size
	}
	out.Tags.Tag = make([]ecssdk.Tag, 0, len(img.Tags))
	for _, t := range img.Tags {
		out.Tags.Tag = append(out.Tags.Tag, ecssdk.Tag{TagKey: t.K, TagValue: t.V})
	}
	return out
}

// customImagesFor lists the custom images of the call's region DescribeImages shows for its
// filters (ImageId, ImageName, ImageFamily, Status, Tag.N), in creation order.
func (c *call) customImagesFor(ids []string, statuses []string, tags []core.Tag) []ecssdk.Image {
	var out []ecssdk.Image
	var used map[string]bool
	for _, img := range c.st.imagesIn(c.Region) {
		if (ids != nil && !slices.Contains(ids, img.ID)) || !slices.Contains(statuses, c.imageStatus(img)) ||
			(c.P["ImageName"] != "" && !imageNameMatch(img.Name, c.P["ImageName"])) ||
			(c.P["ImageFamily"] != "" && c.P["ImageFamily"] != img.Family) ||
			(c.P["OSType"] != "" && c.P["OSType"] != "linux") || !core.MatchTags(img.Tags, tags) {
			continue
		}
		if used == nil {
			used = c.st.imagesInUse(c.Region)
		}
		out = append(out, c.sdkCustomImage(img, used[img.ID]))
	}
	return out
}

// runCustomImage answers the custom image id of the call's region as RunInstances takes it: the
// catalog entry of its base with its own id. InvalidImageId.NotFound (404) for none; one that
// is not Available is refused with OperationDenied.ImageNotValid (403, "The specified Image is
// disabled or is deleted", RunInstances error codes), as the vendor's CreateImage says "You can
// use the created custom image only if the image is in the Available state".
func (c *call) runCustomImage(id string) (*imageInfo, *core.Error) {
	img := c.customImage(id)
	if img == nil {
		return nil, core.ErrNotFound("InvalidImageId.NotFound", id)
	}
	if st := c.imageStatus(img); st != imageAvailable {
		return nil, core.Errf(403, "OperationDenied.ImageNotValid", "The specified image %s is not available (%s).", id, st)
	}
	out := imageInfo{ID: img.ID, Name: img.Name, Family: img.Family}
	if base := findImage(img.Base); base != nil {
		out.OSName, out.Platform, out.Size = base.OSName, base.Platform, base.Size
	}
	return &out, nil
}

// newestCustomImage answers the newest Available custom image of family in the call's region, or
// nil: RunInstances takes ImageFamily "to obtain the latest available custom image from a
// specified image family" (RunInstances ImageId,
// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-runinstances).
func (c *call) newestCustomImage(fam string) *imageInfo {
	var newest *imageRecord
	for _, img := range c.st.imagesIn(c.Region) {
		if img.Family == fam && c.imageStatus(img) == imageAvailable {
			newest = img
		}
	}
	if newest == nil {
		return nil
	}
	info, _ := c.runCustomImage(newest.ID)
	return info
}

// ImageView is one custom image as a node agent sees it: what it was made of. SourceUserData is
// the source instance's user data as RunInstances took it (Base64), SourceImageID the image that
// instance ran from; a copy carries its source's, and CopiedFrom names the source.
type ImageView struct {
	ID, Region, Name, Family string
	Status                   string
	SourceInstanceID         string
	SourceUserData           string // Base64
	SourceImageID            string
	CopiedFrom               string
}

// ImageViews copies every custom image, in creation order.
func ImageViews(cc *core.Call) []ImageView {
	c := newCall(cc)
	all := make([]*imageRecord, 0, len(c.st.Images))
	for _, img := range c.st.Images {
		all = append(all, img)
	}
	slices.SortFunc(all, func(a, b *imageRecord) int { return cmp.Compare(a.Seq, b.Seq) })
	out := make([]ImageView, 0, len(all))
	for _, img := range all {
		out = append(out, ImageView{ID: img.ID, Region: img.Region, Name: img.Name, Family: img.Family, Status: c.imageStatus(img),
			SourceInstanceID: img.SourceInstance, SourceUserData: img.SourceUserData, SourceImageID: img.SourceImage, CopiedFrom: img.CopiedFrom})
	}
	return out
}
