// Package cloudtest gives the tests of packages above internal/cloud (the workflow packages
// such as internal/nodepool) a cloud to run against without the CLI: the real emulator, started
// in-process on a loopback httptest-style listener, and a *cloud.Client built the way the
// provider builds one (cloud.New) with every product pointed at it.
//
// Why the emulator and not a hand-written answer function like internal/cloud's own testAPI: a
// workflow is many calls whose answers depend on each other (instances created by one call are
// listed, tagged, waited for and deleted by the next), so its test needs a stateful server that
// answers like the real API. The emulator is that, builds its answers from the vendor SDKs' own
// structs, and has the knobs the workflows' failure paths need: stock per zone and type
// (SetCapacity), throttling and lost answers (SetFaults), and call counts (Stats).
package cloudtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// Region is the region every test client works in; its zones are Region + "-a", "-b", ...
const Region = "cn-wulanchabu"

// BootTime is how long the emulator's instances take to run: short, but long enough that every
// waiter really waits.
const BootTime = 100 * time.Millisecond

// Cloud is one test's emulator and a client of it.
type Cloud struct {
	Client   *cloud.Client
	Emulator *emulator.Server
	// URL is the emulator's base URL (its API and, under emulator.MetadataPath, each instance's
	// metadata service).
	URL string
}

// Start runs the emulator for one test and stops it when the test ends. maxRetries is the
// client's retry budget for throttled and failed calls (the provider's default is 3).
func Start(t testing.TB, maxRetries int) *Cloud {
	t.Helper()
	srv, url := StartEmulator(t, emulator.Config{AccessKey: "cloudtest", SecretKey: "cloudtest-secret", BootTime: BootTime})
	c, err := cloud.New(context.Background(), cloud.Config{
		Region:      Region,
		Credentials: cloud.Credentials{AccessKeyID: "cloudtest", AccessKeySecret: "cloudtest-secret"},
		Endpoint:    url,
		MaxRetries:  maxRetries,
		UserAgent:   "gpucluster-cloudtest/0",
	})
	if err != nil {
		t.Fatalf("cloud.New: %v", err)
	}
	return &Cloud{Client: c, Emulator: srv, URL: url}
}

// StartEmulator starts an emulator with cfg on a free loopback port, stops it when the test
// ends, and answers it with its URL. internal/acctest starts the provider's emulator with it too.
func StartEmulator(t testing.TB, cfg emulator.Config) (*emulator.Server, string) {
	t.Helper()
	srv, err := emulator.New(cfg)
	if err != nil {
		t.Fatalf("starting the emulator: %v", err)
	}
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("starting the emulator: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, url
}

// Context bounds one test's calls, so a waiter that never finishes fails the test instead of
// hanging it.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Network is a VPC with one vSwitch per zone and a security group: the cloud objects a node
// pool is placed in.
type Network struct {
	VPCID           string
	SecurityGroupID string
	Zones           []string          // in the order given
	VSwitchIDs      map[string]string // zone -> vSwitch
	VSwitches       []cloud.VSwitch   // in zone order, as the service answered them
}

// CreateNetwork creates a VPC, a vSwitch in each zone (10.0.<i>.0/24) and a security group.
func (c *Cloud) CreateNetwork(ctx context.Context, t testing.TB, zones ...string) Network {
	t.Helper()
	vpcID, err := c.Client.CreateVPC(ctx, cloud.VPCInput{Name: "cloudtest", CIDRBlock: "10.0.0.0/16"})
	if err != nil {
		t.Fatalf("CreateVPC: %v", err)
	}
	if _, err := c.Client.WaitVPCAvailable(ctx, vpcID); err != nil {
		t.Fatalf("waiting for the VPC: %v", err)
	}
	n := Network{VPCID: vpcID, Zones: zones, VSwitchIDs: map[string]string{}}
	for i, z := range zones {
		id, err := c.Client.CreateVSwitch(ctx, cloud.VSwitchInput{VPCID: vpcID, ZoneID: z, CIDRBlock: fmt.Sprintf("10.0.%d.0/24", i), Name: "cloudtest-" + z})
		if err != nil {
			t.Fatalf("CreateVSwitch in %s: %v", z, err)
		}
		sw, err := c.Client.WaitVSwitchAvailable(ctx, id)
		if err != nil {
			t.Fatalf("waiting for the vSwitch in %s: %v", z, err)
		}
		n.VSwitchIDs[z] = id
		n.VSwitches = append(n.VSwitches, *sw)
	}
	sg, err := c.Client.CreateSecurityGroup(ctx, cloud.SecurityGroupInput{VPCID: vpcID, Name: "cloudtest"})
	if err != nil {
		t.Fatalf("CreateSecurityGroup: %v", err)
	}
	n.SecurityGroupID = sg
	return n
}

// Calls is how many calls of action the emulator answered so far.
func (c *Cloud) Calls(action string) int {
	return int(c.Emulator.Stats().Calls[action])
}

// Errors is how many calls the emulator answered with code so far (injected faults included).
func (c *Cloud) Errors(code string) int {
	return int(c.Emulator.Stats().Errors[code])
}
