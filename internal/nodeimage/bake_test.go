package nodeimage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// The builder's side is played by the test, as the node agent plays it beside the emulator in
// the cluster tests: it writes what the builder's bootstrap prints on the serial console
// (Server.SetConsoleOutput), which is all the workflow reads of the guest.
const (
	bakedConsole  = bootstrap.ConsolePrefix + "phase packages ok\n" + bootstrap.ConsolePrefix + "phase seal ok\n" + bootstrap.ConsolePrefix + bootstrap.StateBaked + "\n"
	failedConsole = bootstrap.ConsolePrefix + "phase packages ok\n" + bootstrap.ConsolePrefix + "phase driver failed (attempt 8/8)\n"
)

func startBake(t *testing.T) (context.Context, *cloudtest.Cloud, Spec) {
	t.Helper()
	ctx := cloudtest.Context(t)
	c := cloudtest.Start(t, 3)
	zone := cloudtest.Region + "-a"
	n := c.CreateNetwork(ctx, t, zone)
	base, err := c.Client.NewestPublicImage(ctx, cloud.UbuntuFamily)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, c, Spec{Name: "gpu-node-v1", Family: "gpucluster-node", Content: "0123456789abcdef", BaseImageID: base.ID,
		InstanceType: "ecs.gn7i-c8g1.2xlarge", ZoneID: zone, VSwitchID: n.VSwitchIDs[zone], SecurityGroupID: n.SecurityGroupID,
		SystemDiskGiB: 100, UserData: "#cloud-config\n", Tags: map[string]string{"team": "ml"}}
}

// builders are the running builder instances of s.
func builders(ctx context.Context, t *testing.T, c *cloudtest.Cloud, s Spec) []cloud.Instance {
	t.Helper()
	got, err := c.Client.ListInstancesByTags(ctx, tagging.Merge(s.identity(), map[string]string{tagging.NodeImageRole: RoleBuilder}))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// playBuilder waits for the builder of s to exist, then writes console on it, as its bootstrap
// would once done.
func playBuilder(ctx context.Context, t *testing.T, c *cloudtest.Cloud, s Spec, console string) string {
	t.Helper()
	for {
		if b := builders(ctx, t, c, s); len(b) > 0 {
			c.Emulator.SetConsoleOutput(b[0].ID, console)
			return b[0].ID
		}
		select {
		case <-ctx.Done():
			t.Fatal("no builder started")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func bakeAsync(ctx context.Context, c *cloudtest.Cloud, s Spec) chan struct {
	res Result
	err error
} {
	done := make(chan struct {
		res Result
		err error
	}, 1)
	go func() {
		res, err := Bake(ctx, c.Client, s)
		done <- struct {
			res Result
			err error
		}{res, err}
	}()
	return done
}

func TestBakeMakesAnImageAndLeavesNoBuilder(t *testing.T) {
	ctx, c, s := startBake(t)
	done := bakeAsync(ctx, c, s)
	playBuilder(ctx, t, c, s, bakedConsole)
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	img, err := c.Client.FindImage(ctx, "", got.res.ImageID)
	if err != nil {
		t.Fatal(err)
	}
	if img.Status != cloud.ImageStatusAvailable || img.Name != s.ImageName() || img.Tags["team"] != "ml" ||
		img.Tags[tagging.NodeImageContent] != s.Content || img.Tags[tagging.NodeImageRole] != RoleImage {
		t.Errorf("image %+v: want Available, named %s, with the user's and the identity tags", img, s.ImageName())
	}
	if b := builders(ctx, t, c, s); len(b) != 0 {
		t.Errorf("builders left: %v", b)
	}
	if n := c.Calls("CreateImage"); n != 1 {
		t.Errorf("CreateImage called %d times, want 1", n)
	}
	// A second run finds the image and makes nothing.
	again, err := Bake(ctx, c.Client, s)
	if err != nil || again.ImageID != got.res.ImageID || c.Calls("RunInstances") != 1 || c.Calls("CreateImage") != 1 {
		t.Errorf("re-run: %+v, %v; RunInstances %d, CreateImage %d, want the same image and no call", again, err, c.Calls("RunInstances"), c.Calls("CreateImage"))
	}
}

// A builder whose bootstrap failed is deleted, and the error names the phase and quotes the
// console; no image is made.
func TestBakeFailureDeletesTheBuilder(t *testing.T) {
	ctx, c, s := startBake(t)
	done := bakeAsync(ctx, c, s)
	id := playBuilder(ctx, t, c, s, failedConsole)
	got := <-done
	var be *BakeError
	if !errors.As(got.err, &be) || be.Phase != bootstrap.PhaseDriver || be.BuilderID != id || !strings.Contains(be.Console, "phase driver failed") {
		t.Fatalf("Bake = %v, want a BakeError at phase driver of %s", got.err, id)
	}
	if b := builders(ctx, t, c, s); len(b) != 0 {
		t.Errorf("the failed builder was left: %v", b)
	}
	if n := c.Calls("CreateImage"); n != 0 {
		t.Errorf("CreateImage called %d times after a failed bake", n)
	}
}

// An apply killed while the builder runs leaves it; the next run adopts it (no second builder)
// and finishes.
func TestBakeAdoptsTheBuilderOfAKilledRun(t *testing.T) {
	ctx, c, s := startBake(t)
	killed, kill := context.WithCancel(ctx)
	done := bakeAsync(killed, c, s)
	for len(builders(ctx, t, c, s)) == 0 {
		time.Sleep(20 * time.Millisecond)
	}
	kill()
	if got := <-done; got.err == nil {
		t.Fatal("a killed bake reported success")
	}
	done = bakeAsync(ctx, c, s)
	playBuilder(ctx, t, c, s, bakedConsole)
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	if n := c.Calls("RunInstances"); n != 1 {
		t.Errorf("RunInstances called %d times, want 1 (the killed run's builder adopted)", n)
	}
	if b := builders(ctx, t, c, s); len(b) != 0 {
		t.Errorf("builders left: %v", b)
	}
}

// Copies go to the regions asked for, and a re-run adopts them instead of copying again.
func TestBakeCopiesAndAdoptsCopies(t *testing.T) {
	ctx, c, s := startBake(t)
	s.CopyTo = []string{"cn-beijing"}
	done := bakeAsync(ctx, c, s)
	playBuilder(ctx, t, c, s, bakedConsole)
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	copyID := got.res.Copies["cn-beijing"]
	img, err := c.Client.FindImage(ctx, "cn-beijing", copyID)
	if err != nil || img.Status != cloud.ImageStatusAvailable || img.Tags[tagging.NodeImageRole] != RoleCopy {
		t.Fatalf("the copy in cn-beijing: %+v, %v", img, err)
	}
	again, err := Bake(ctx, c.Client, s)
	if err != nil || again.Copies["cn-beijing"] != copyID || c.Calls("CopyImage") != 1 {
		t.Errorf("re-run: %+v, %v, CopyImage %d: want the same copy and no second CopyImage", again, err, c.Calls("CopyImage"))
	}
	if err := Delete(ctx, c.Client, s, again); err != nil {
		t.Fatal(err)
	}
	for region, id := range map[string]string{"": again.ImageID, "cn-beijing": copyID} {
		if _, err := c.Client.FindImage(ctx, region, id); !cloud.IsNotFound(err) {
			t.Errorf("image %s in %q after Delete: %v, want not found", id, region, err)
		}
	}
}

// Delete refuses an image that instances still run from, and deletes it once they are gone.
func TestDeleteRefusesAnImageInUse(t *testing.T) {
	ctx, c, s := startBake(t)
	done := bakeAsync(ctx, c, s)
	playBuilder(ctx, t, c, s, bakedConsole)
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	ids, err := c.Client.RunInstances(ctx, cloud.RunInstancesInput{ClientToken: "node-from-image", InstanceType: s.InstanceType,
		ZoneID: s.ZoneID, ImageID: got.res.ImageID, SecurityGroupID: s.SecurityGroupID, VSwitchID: s.VSwitchID, Amount: 1, MinAmount: 1,
		SystemDisk: cloud.Disk{Category: "cloud_essd", SizeGiB: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if err := Delete(ctx, c.Client, s, got.res); err == nil {
		t.Fatal("Delete removed an image a node runs from")
	}
	if err := c.Client.DeleteInstances(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if err := c.Client.WaitInstancesGone(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if err := Delete(ctx, c.Client, s, got.res); err != nil {
		t.Fatalf("Delete after the node went: %v", err)
	}
}

// A bake that fails for good after the builder started (here CreateImage: the name is taken by
// an image that is not ours) deletes the builder: Terraform keeps no state of a failed create.
func TestBakeFailureAfterTheBuilderLeavesNothing(t *testing.T) {
	ctx, c, s := startBake(t)
	other := s
	other.Name, other.Content = "someone-else", "fedcba9876543210"
	done := bakeAsync(ctx, c, other)
	playBuilder(ctx, t, c, other, bakedConsole)
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	// Someone else's image already holds the name ours would take.
	ids, err := c.Client.RunInstances(ctx, cloud.RunInstancesInput{ClientToken: "squatter", InstanceType: s.InstanceType, ZoneID: s.ZoneID,
		ImageID: s.BaseImageID, SecurityGroupID: s.SecurityGroupID, VSwitchID: s.VSwitchID, Amount: 1, MinAmount: 1,
		SystemDisk: cloud.Disk{Category: "cloud_essd", SizeGiB: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.WaitInstancesRunning(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CreateImage(ctx, cloud.CreateImageInput{InstanceID: ids[0], Name: s.ImageName(), ClientToken: "squatter"}); err != nil {
		t.Fatal(err)
	}
	done = bakeAsync(ctx, c, s)
	playBuilder(ctx, t, c, s, bakedConsole)
	got = <-done
	if got.err == nil || !strings.Contains(got.err.Error(), "InvalidImageName.Duplicated") {
		t.Fatalf("Bake = %v, want the duplicate name refused", got.err)
	}
	if b := builders(ctx, t, c, s); len(b) != 0 {
		t.Errorf("the builder of the failed bake was left: %v", b)
	}
}
