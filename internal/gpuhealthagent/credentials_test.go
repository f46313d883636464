package gpuhealthagent

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/ecsmetadata"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// gpuPoolSpec is a one-node GPU pool whose nodes carry the instance RAM role role.
func gpuPoolSpec(n cloudtest.Network, role string, autoscale *nodepool.Autoscale) nodepool.Spec {
	return nodepool.Spec{
		PoolID: nodepool.NewPoolID(), Name: "gpu", Scenario: "llm-training",
		Network: nodepool.Network{ID: n.SecurityGroupID, Name: "net", VPCID: n.VPCID, SecurityGroupID: n.SecurityGroupID,
			Zones: n.Zones, VSwitchIDs: n.VSwitchIDs},
		Types: []string{"ecs.gn7i-c8g1.2xlarge"}, Zones: n.Zones, Size: 1, MinSize: 1,
		ImageID:    "ubuntu_22_04_x64_20G_alibase_20240101.vhd",
		SystemDisk: nodepool.Disk{Category: "cloud_essd", Level: "PL1", SizeGiB: 100},
		Spot:       "NoSpot", MaxUnavail: 1, SpecHash: "v1", RAMRole: role,
		Autoscale: autoscale,
	}
}

// onInstance is the agent's InstanceReplacer as it runs on instance id: the emulator's metadata
// service of that instance, and the emulator's API.
func onInstance(c *cloudtest.Cloud, id string) InstanceReplacer {
	url := c.URL
	return InstanceReplacer{Metadata: ecsmetadata.Client{Endpoint: url + emulator.MetadataPath + "/" + id}, CloudEndpoint: url}
}

// TestInstanceReplacerTagsAFixedPoolsNode: on a fixed pool's node (no provider id) the agent,
// signing with the node's instance RAM role as the metadata service hands it out, tags its own
// instance with the request and the reason, and touches no other instance.
func TestInstanceReplacerTagsAFixedPoolsNode(t *testing.T) {
	ctx := t.Context()
	c := cloudtest.Start(t, 3)
	n := c.CreateNetwork(ctx, t, cloudtest.Region+"-a")
	spec := gpuPoolSpec(n, "gpucluster-gpu-node", nil)
	spec.Size = 2
	out, err := nodepool.Grow(ctx, c.Client, spec, "create", nil, 2)
	if err != nil || len(out.IDs) != 2 {
		t.Fatalf("the fixed pool: %+v, %v", out, err)
	}
	failing, other := out.IDs[0], out.IDs[1]
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-0"}}
	if err := onInstance(c, failing).Replace(ctx, node, "XID 79 on GPU 1"); err != nil {
		t.Fatal(err)
	}
	got, err := c.Client.DescribeInstancesByID(ctx, []string{failing, other})
	if err != nil || len(got) != 2 {
		t.Fatalf("the pool's instances: %+v, %v", got, err)
	}
	for _, in := range got {
		want := ""
		if in.ID == failing {
			want = "XID 79 on GPU 1"
		}
		if v := in.Tags[tagging.ReplaceRequested]; v != want {
			t.Errorf("instance %s: %s=%q, want %q", in.ID, tagging.ReplaceRequested, v, want)
		}
	}
	if n := c.Calls("SetInstanceHealth"); n != 0 {
		t.Errorf("%d SetInstanceHealth calls for a fixed pool's node", n)
	}
}

// TestInstanceReplacerWithoutRoleSaysSo: an instance without a RAM role has no keys to sign
// with; the error says what to give the pool.
func TestInstanceReplacerWithoutRoleSaysSo(t *testing.T) {
	ctx := t.Context()
	c := cloudtest.Start(t, 3)
	n := c.CreateNetwork(ctx, t, cloudtest.Region+"-a")
	out, err := nodepool.Grow(ctx, c.Client, gpuPoolSpec(n, "", nil), "create", nil, 1)
	if err != nil || len(out.IDs) != 1 {
		t.Fatalf("the fixed pool: %+v, %v", out, err)
	}
	err = onInstance(c, out.IDs[0]).Replace(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-0"}}, "XID 79 on GPU 0")
	if err == nil || !strings.Contains(err.Error(), "ram_role_name") {
		t.Fatalf("got %v; want the missing RAM role named", err)
	}
}

// TestInstanceReplacerAsksESSForAnAutoscaledNode: a node with a provider id is an autoscaled
// pool's: the agent marks its instance unhealthy through Auto Scaling with the role's keys, and
// tags nothing.
func TestInstanceReplacerAsksESSForAnAutoscaledNode(t *testing.T) {
	ctx := t.Context()
	c := cloudtest.Start(t, 3)
	n := c.CreateNetwork(ctx, t, cloudtest.Region+"-a")
	pool, err := nodepool.ApplyAutoscaling(ctx, c.Client, gpuPoolSpec(n, "gpucluster-gpu-node",
		&nodepool.Autoscale{Min: 1, Max: 2, Mix: cloud.AllOnDemand}))
	if err != nil || len(pool.Nodes) != 1 {
		t.Fatalf("the autoscaled pool: %+v, %v", pool, err)
	}
	id := pool.Nodes[0].ID
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-0"}, Spec: corev1.NodeSpec{ProviderID: cloudtest.Region + "." + id}}
	if err := onInstance(c, id).Replace(ctx, node, "XID 79 on GPU 1"); err != nil {
		t.Fatal(err)
	}
	if n := c.Calls("SetInstanceHealth"); n != 1 {
		t.Errorf("%d SetInstanceHealth calls, want 1", n)
	}
	if n := c.Calls("TagResources"); n != 0 {
		t.Errorf("%d TagResources calls for an autoscaled node", n)
	}
}
