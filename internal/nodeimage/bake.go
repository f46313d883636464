// Package nodeimage bakes a node image in the region through the ECS API: a builder instance
// from the public Ubuntu 22.04 image runs the install phases a GPU node would run at boot
// (internal/bootstrap's RenderBake), pulls the cluster's images, seals itself and powers off;
// CreateImage makes an image of its disk; the builder goes; the image is copied to other regions
// on request. A node from the image skips what the image holds and only configures and joins.
//
// Every step can be interrupted and run again. Everything made carries the image's name and the
// digest of what it holds (tagging.NodeImage, tagging.NodeImageContent), so a later run finds
// and adopts an image or a builder left by a run that was killed; CreateImage is idempotent by
// its client token; CopyImage has none, so a copy is looked for by its tags before one is asked
// for.
package nodeimage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// Roles of what a bake makes (tagging.NodeImageRole).
const (
	RoleBuilder = "builder"
	RoleImage   = "image"
	RoleCopy    = "copy"
)

// Spec is one image: what goes into it and where it is built.
type Spec struct {
	// Name names the image, its copies and the builder: unique among the account's node images
	// in the region.
	Name        string
	Family      string
	Description string
	// Content is a digest of everything that goes into the image (the bake options and the base
	// image): an image whose content differs is another image.
	Content string
	// The builder: from BaseImageID (public Ubuntu 22.04), of InstanceType, in ZoneID's VSwitchID
	// behind SecurityGroupID, with a system disk of SystemDiskGiB, booting UserData
	// (bootstrap.RenderBake, packed).
	BaseImageID     string
	InstanceType    string
	ZoneID          string
	VSwitchID       string
	SecurityGroupID string
	SystemDiskGiB   int
	UserData        string
	// CopyTo are further regions to copy the image to.
	CopyTo []string
	// Tags are the user's, on the image, the copies and the builder.
	Tags map[string]string
}

// Result is a baked image and its copies by region.
type Result struct {
	ImageID string
	Copies  map[string]string
}

// ImageName is the image's name in the cloud: Name and the start of the content digest, so the
// image that replaces it (another content, made before the old one goes) can be created while
// the old one still holds Name; the vendor refuses a second image of a name in a region
// (InvalidImageName.Duplicated).
func (s Spec) ImageName() string {
	return s.Name + "-" + s.Content[:min(8, len(s.Content))]
}

func (s Spec) identity() map[string]string {
	return map[string]string{tagging.ManagedBy: tagging.ManagedByVal, tagging.NodeImage: s.Name, tagging.NodeImageContent: s.Content}
}

func (s Spec) tags(role string) map[string]string {
	return tagging.Merge(s.Tags, s.identity(), map[string]string{tagging.NodeImageRole: role})
}

// BakeError is a builder whose bootstrap failed: the phase and the end of its serial console,
// which says why (the builder is deleted; its console is the record).
type BakeError struct {
	BuilderID string
	Phase     string
	Console   string
}

func (e *BakeError) Error() string {
	return fmt.Sprintf("the image builder %s failed at phase %s; the end of its serial console:\n%s", e.BuilderID, e.Phase, e.Console)
}

// Bake makes the image (or adopts one a killed run left), copies it, and returns the ids. On a
// failed bake the builder is deleted and a *BakeError says why; nothing else is left behind.
func Bake(ctx context.Context, c *cloud.Client, s Spec) (Result, error) {
	id, err := image(ctx, c, s)
	if err != nil {
		return Result{}, err
	}
	res := Result{ImageID: id, Copies: map[string]string{}}
	for _, region := range s.CopyTo {
		copyID, err := copyTo(ctx, c, s, id, region)
		if err != nil {
			return res, fmt.Errorf("copying image %s to %s: %w", id, region, err)
		}
		res.Copies[region] = copyID
	}
	return res, nil
}

// image is the Available image of s in the client's region: adopted, or baked now.
func image(ctx context.Context, c *cloud.Client, s Spec) (string, error) {
	found, err := c.ListImagesByTags(ctx, "", tagging.Merge(s.identity(), map[string]string{tagging.NodeImageRole: RoleImage}))
	if err != nil {
		return "", fmt.Errorf("looking for an image of an earlier apply: %w", err)
	}
	for _, img := range found {
		switch img.Status {
		case cloud.ImageStatusAvailable, cloud.ImageStatusCreating, cloud.ImageStatusWaiting:
			tflog.Info(ctx, "adopting the image of an earlier apply", map[string]any{"image": img.ID, "status": img.Status})
			if _, err := c.WaitImageAvailable(ctx, "", img.ID); err != nil {
				return "", err
			}
			return img.ID, deleteBuilders(ctx, c, s)
		default:
			// A failed image of an earlier run is no use: it goes, and the bake starts over.
			if err := c.DeleteImage(ctx, "", img.ID, false); err != nil {
				return "", fmt.Errorf("deleting image %s (%s) of an earlier apply: %w", img.ID, img.Status, err)
			}
		}
	}
	builder, err := builderInstance(ctx, c, s)
	if err != nil {
		return "", cleanUpAfter(ctx, c, s, err)
	}
	if err := waitBaked(ctx, c, builder); err != nil {
		return "", cleanUpAfter(ctx, c, s, err)
	}
	token := cloud.ClientToken(0, tagging.TokenParts(s.tags(RoleImage), "CreateImage", s.Name, builder)...)
	id, err := c.CreateImage(ctx, cloud.CreateImageInput{InstanceID: builder, Name: s.ImageName(), Family: s.Family, Description: s.Description,
		Tags: s.tags(RoleImage), ClientToken: token})
	if err != nil {
		return "", cleanUpAfter(ctx, c, s, fmt.Errorf("creating the image of builder %s: %w", builder, err))
	}
	if _, err := c.WaitImageAvailable(ctx, "", id); err != nil {
		return "", err
	}
	return id, deleteBuilders(ctx, c, s)
}

// cleanUpAfter deletes the builder after a bake failed for good, so a failed create leaves
// nothing (Terraform keeps no state of it, and nothing else would delete the builder). An
// interrupted one (its context ended: a killed or timed-out apply) keeps it for the next run to
// adopt.
func cleanUpAfter(ctx context.Context, c *cloud.Client, s Spec, err error) error {
	if ctx.Err() != nil {
		return err
	}
	return errors.Join(err, deleteBuilders(ctx, c, s))
}

// builderInstance is the builder of s: one an earlier run left, or a new one.
func builderInstance(ctx context.Context, c *cloud.Client, s Spec) (string, error) {
	found, err := c.ListInstancesByTags(ctx, tagging.Merge(s.identity(), map[string]string{tagging.NodeImageRole: RoleBuilder}))
	if err != nil {
		return "", fmt.Errorf("looking for a builder of an earlier apply: %w", err)
	}
	if len(found) > 0 {
		tflog.Info(ctx, "adopting the image builder of an earlier apply", map[string]any{"instance": found[0].ID, "status": found[0].Status})
		return found[0].ID, nil
	}
	tags := s.tags(RoleBuilder)
	in := cloud.RunInstancesInput{
		ClientToken:  cloud.ClientToken(0, tagging.TokenParts(tags, "RunInstances", s.Name, s.Content)...),
		InstanceType: s.InstanceType, ZoneID: s.ZoneID, ImageID: s.BaseImageID, SecurityGroupID: s.SecurityGroupID,
		VSwitchID: s.VSwitchID, Amount: 1, MinAmount: 1, InstanceName: s.Name + "-builder", HostName: s.Name + "-builder",
		SystemDisk: cloud.Disk{Category: "cloud_essd", SizeGiB: s.SystemDiskGiB}, UserData: s.UserData,
	}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		in.Tags = append(in.Tags, cloud.Tag{Key: k, Value: tags[k]})
	}
	ids, err := c.RunInstances(ctx, in)
	if err != nil {
		return "", fmt.Errorf("starting the image builder: %w", err)
	}
	if len(ids) != 1 {
		return "", fmt.Errorf("starting the image builder: RunInstances returned %d instances, want 1", len(ids))
	}
	return ids[0], nil
}

// waitBaked waits until the builder has baked and stopped: its console ends "baked" and it is
// Stopped (it powers itself off; a stop is asked for too, in case it did not). A console that
// ends in a failed phase ends the wait with a *BakeError at once.
func waitBaked(ctx context.Context, c *cloud.Client, builder string) error {
	for attempt := 0; ; attempt++ {
		console, err := c.ConsoleOutput(ctx, builder)
		if err != nil {
			return fmt.Errorf("reading the image builder's console: %w", err)
		}
		got := bootstrap.ParseConsole(console)
		switch {
		case got.FailedPhase != "":
			return &BakeError{BuilderID: builder, Phase: got.FailedPhase, Console: tail(console, 20)}
		case got.Baked:
			if err := c.StopInstance(ctx, builder); err != nil {
				return fmt.Errorf("stopping the image builder %s: %w", builder, err)
			}
			_, err := c.WaitInstanceStopped(ctx, builder)
			return err
		}
		if err := sleep(ctx, pollInterval(attempt)); err != nil {
			return fmt.Errorf("waiting for the image builder %s to bake (last phase done: %q): %w", builder, got.LastOK, err)
		}
	}
}

// deleteBuilders deletes every builder of s and waits until they are gone.
func deleteBuilders(ctx context.Context, c *cloud.Client, s Spec) error {
	found, err := c.ListInstancesByTags(ctx, tagging.Merge(s.identity(), map[string]string{tagging.NodeImageRole: RoleBuilder}))
	if err != nil || len(found) == 0 {
		return err
	}
	ids := make([]string, 0, len(found))
	for _, in := range found {
		ids = append(ids, in.ID)
	}
	if err := c.DeleteInstances(ctx, ids); err != nil {
		return fmt.Errorf("deleting the image builder: %w", err)
	}
	return c.WaitInstancesGone(ctx, ids)
}

// copyTo is the Available copy of image id in region: adopted, or asked for now.
func copyTo(ctx context.Context, c *cloud.Client, s Spec, id, region string) (string, error) {
	tags := s.tags(RoleCopy)
	found, err := c.ListImagesByTags(ctx, region, tagging.Merge(s.identity(), map[string]string{tagging.NodeImageRole: RoleCopy}))
	if err != nil {
		return "", err
	}
	for _, img := range found {
		switch img.Status {
		case cloud.ImageStatusAvailable, cloud.ImageStatusCreating, cloud.ImageStatusWaiting:
			_, err := c.WaitImageAvailable(ctx, region, img.ID)
			return img.ID, err
		default:
			if err := c.DeleteImage(ctx, region, img.ID, false); err != nil {
				return "", err
			}
		}
	}
	copyID, err := c.CopyImage(ctx, id, region, s.ImageName(), tags)
	if err != nil {
		return "", err
	}
	_, err = c.WaitImageAvailable(ctx, region, copyID)
	return copyID, err
}

// Delete deletes an image, its copies and any builder left. Without force the vendor refuses an
// image instances still run from: the error says so, and nothing of the image is gone.
func Delete(ctx context.Context, c *cloud.Client, s Spec, res Result) error {
	for region, id := range res.Copies {
		if err := c.DeleteImage(ctx, region, id, false); err != nil {
			return fmt.Errorf("deleting the copy %s in %s: %w", id, region, err)
		}
	}
	if res.ImageID != "" {
		if err := c.DeleteImage(ctx, "", res.ImageID, false); err != nil {
			return fmt.Errorf("deleting image %s: %w", res.ImageID, err)
		}
	}
	return deleteBuilders(ctx, c, s)
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// pollInterval is the console poll: a bake takes minutes to tens of minutes, so from 2 s
// doubling to 30 s.
func pollInterval(attempt int) time.Duration {
	return min(2*time.Second<<min(attempt, 4), 30*time.Second)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
