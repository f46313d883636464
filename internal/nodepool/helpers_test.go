package nodepool

import (
	"context"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// testType is a GPU type every zone of the emulator sells unless a test says otherwise.
const testType = "ecs.gn7i-c8g1.2xlarge"

var zoneA, zoneB = cloudtest.Region + "-a", cloudtest.Region + "-b"

// startPool starts the emulator with a network in zones a and b and answers a fixed pool's spec
// of size nodes in it (min_size 1, one node unavailable at a time).
func startPool(t *testing.T, maxRetries, size int) (context.Context, *cloudtest.Cloud, Spec) {
	t.Helper()
	ctx := cloudtest.Context(t)
	c := cloudtest.Start(t, maxRetries)
	n := c.CreateNetwork(ctx, t, zoneA, zoneB)
	spec := Spec{
		PoolID: NewPoolID(), Name: "workers", Scenario: "llm-training",
		Network: Network{ID: n.SecurityGroupID, Name: "net", VPCID: n.VPCID, SecurityGroupID: n.SecurityGroupID,
			Zones: n.Zones, VSwitchIDs: n.VSwitchIDs},
		Types: []string{testType}, Zones: n.Zones, Size: size, MinSize: 1,
		ImageID:    "ubuntu_22_04_x64_20G_alibase_20240101.vhd",
		SystemDisk: Disk{Category: "cloud_essd", Level: "PL1", SizeGiB: 100},
		Spot:       "NoSpot", MaxUnavail: 1, SpecHash: "spec-v1",
		UserTags: map[string]string{"team": "ml"},
	}
	return ctx, c, spec
}

// poolNodes lists the instances tagged with the pool's id.
func poolNodes(ctx context.Context, t *testing.T, c *cloudtest.Cloud, poolID string) []cloud.Instance {
	t.Helper()
	nodes, err := c.Client.ListInstancesByTags(ctx, map[string]string{tagging.Pool: poolID})
	if err != nil {
		t.Fatalf("listing the pool's nodes: %v", err)
	}
	return nodes
}

func zonesOf(nodes []cloud.Instance) map[string]int {
	out := map[string]int{}
	for _, n := range nodes {
		out[n.ZoneID]++
	}
	return out
}
