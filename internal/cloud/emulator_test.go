package cloud

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// emulatorBootTime is how long the emulator's asynchronous transitions take (instances boot in
// this time, network objects settle in half of it): long enough that every waiter really waits.
const emulatorBootTime = 200 * time.Millisecond

// startEmulator runs the real emulator in-process on loopback and returns it with a Client built
// the way the provider builds one (cloud.New), every product pointed at it. Waiters poll fast.
func startEmulator(t *testing.T) (*Client, *emulator.Server) {
	t.Helper()
	fastWaits(t)
	srv, err := emulator.New(emulator.Config{AccessKey: "emulator", SecretKey: "emulator-secret", BootTime: emulatorBootTime})
	if err != nil {
		t.Fatalf("starting the emulator: %v", err)
	}
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("starting the emulator: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	c, err := New(context.Background(), Config{
		Region:      testRegion,
		Credentials: Credentials{AccessKeyID: "emulator", AccessKeySecret: "emulator-secret"},
		Endpoint:    url,
		MaxRetries:  3,
		UserAgent:   "gpucluster-test/0",
	})
	if err != nil {
		t.Fatalf("cloud.New: %v", err)
	}
	return c, srv
}

// testCtx bounds one test's calls, so a waiter that never finishes fails the test instead of
// hanging it.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// testNetwork is a VPC with vSwitches in zone a, created through this package.
type testNetwork struct {
	vpcID     string
	vswitches []VSwitch
}

func createTestNetwork(ctx context.Context, t *testing.T, c *Client, vswitchCIDRs ...string) testNetwork {
	t.Helper()
	vpcID, err := c.CreateVPC(ctx, VPCInput{Name: "net-test", CIDRBlock: "10.0.0.0/16"})
	if err != nil {
		t.Fatalf("CreateVPC: %v", err)
	}
	if _, err := c.WaitVPCAvailable(ctx, vpcID); err != nil {
		t.Fatal(err)
	}
	n := testNetwork{vpcID: vpcID}
	for _, cidr := range vswitchCIDRs {
		id, err := c.CreateVSwitch(ctx, VSwitchInput{VPCID: vpcID, ZoneID: testRegion + "-a", CIDRBlock: cidr, Name: "sw-" + cidr})
		if err != nil {
			t.Fatalf("CreateVSwitch %s: %v", cidr, err)
		}
		sw, err := c.WaitVSwitchAvailable(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		n.vswitches = append(n.vswitches, *sw)
	}
	return n
}

// delete removes the vSwitches and the VPC.
func (n testNetwork) delete(ctx context.Context, t *testing.T, c *Client) {
	t.Helper()
	for _, sw := range n.vswitches {
		if err := c.DeleteVSwitch(ctx, sw.ID); err != nil {
			t.Fatalf("DeleteVSwitch: %v", err)
		}
	}
	if err := c.DeleteVPC(ctx, n.vpcID); err != nil {
		t.Fatalf("DeleteVPC: %v", err)
	}
}

// assertNothingLeft fails when the emulator still holds any resource of any kind.
func assertNothingLeft(t *testing.T, srv *emulator.Server) {
	t.Helper()
	if left := srv.Resources().Counts(); len(left) > 0 {
		t.Errorf("resources left behind: %v", left)
	}
}

// assertTags fails unless have is exactly want.
func assertTags(t *testing.T, what string, have, want map[string]string) {
	t.Helper()
	if !maps.Equal(have, want) {
		t.Errorf("%s tags = %v, want %v", what, have, want)
	}
}
