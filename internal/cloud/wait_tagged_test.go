package cloud

import (
	"errors"
	"testing"
)

// Counting a pool by its tag takes one call however large it is, and the wait by count ends when
// the last tagged node is gone; a tagged node nobody deletes makes it report a stall, not hang.
func TestCountAndWaitTaggedInstancesGone(t *testing.T) {
	c, srv := startEmulator(t)
	ctx := testCtx(t)
	net := createTestNetwork(ctx, t, c, "10.0.1.0/24")
	sgID, err := c.CreateSecurityGroup(ctx, SecurityGroupInput{VPCID: net.vpcID, Name: "count"})
	if err != nil {
		t.Fatal(err)
	}
	ids := append(runTestNodes(ctx, t, c, net, sgID, "count-a", 100), runTestNodes(ctx, t, c, net, sgID, "count-b", 50)...)
	tags := map[string]string{"gpucluster:pool": "np-count"}
	if err := c.TagResources(ctx, KindInstance, ids, tags); err != nil {
		t.Fatal(err)
	}

	before := srv.Stats().Calls["DescribeInstances"]
	n, err := c.CountInstancesByTags(ctx, tags)
	if err != nil || n != 150 {
		t.Fatalf("CountInstancesByTags = %d, %v; want 150", n, err)
	}
	if calls := srv.Stats().Calls["DescribeInstances"] - before; calls != 1 {
		t.Errorf("counting 150 nodes took %d DescribeInstances; want 1", calls)
	}

	// One tagged node is left alone: the wait reports a stall.
	if err := c.DeleteInstances(ctx, ids[1:]); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitTaggedInstancesGone(ctx, tags, 5); !errors.Is(err, ErrInstancesStalled) {
		t.Fatalf("WaitTaggedInstancesGone with a node nobody deletes = %v; want ErrInstancesStalled", err)
	}
	if n, _ := c.CountInstancesByTags(ctx, tags); n != 1 {
		t.Errorf("after the stall %d tagged nodes are left; want the 1 not deleted", n)
	}
	if err := c.DeleteInstances(ctx, ids[:1]); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitTaggedInstancesGone(ctx, tags, 5); err != nil {
		t.Fatalf("WaitTaggedInstancesGone = %v; want every node gone", err)
	}
}
