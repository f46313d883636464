package cloud

import (
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

// A stop batch with an instance that left Running meanwhile is refused whole
// (IncorrectInstanceStatus); the others are stopped with the batch sent again without it, not one
// call per instance, and the one that left is left as it is.
func TestStopChunkResendsTheBatchWithoutTheMovedOne(t *testing.T) {
	c, srv := startEmulator(t)
	ctx := testCtx(t)
	net := createTestNetwork(ctx, t, c, "10.0.1.0/24")
	sgID, err := c.CreateSecurityGroup(ctx, SecurityGroupInput{VPCID: net.vpcID, Name: "stop"})
	if err != nil {
		t.Fatal(err)
	}
	ids := runTestNodes(ctx, t, c, net, sgID, "stop-nodes", 5)
	moved := ids[2]
	force := ecs.CreateStopInstancesRequest()
	force.RegionId, force.InstanceId, force.ForceStop = testRegion, &[]string{moved}, requests.NewBoolean(true)
	if err := c.Call(ctx, force, ecs.CreateStopInstancesResponse()); err != nil {
		t.Fatal(err)
	}
	before := srv.Stats().Calls["StopInstances"]
	if err := c.stopChunk(ctx, ids); err != nil {
		t.Fatalf("stopChunk: %v", err)
	}
	if calls := srv.Stats().Calls["StopInstances"] - before; calls != 2 {
		t.Errorf("stopping 5 instances, one no longer Running, took %d StopInstances calls; want 2 (the refused batch, then the rest)", calls)
	}
	got, err := c.DescribeInstancesByID(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range got {
		if in.Status == "Running" {
			t.Errorf("instance %s is still Running after the stop", in.ID)
		}
	}
}
