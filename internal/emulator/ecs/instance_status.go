package ecs

import (
	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// DescribeInstanceStatus is the cheap status poll clients use instead of DescribeInstances
// (the Kubernetes Cluster Autoscaler's alicloud provider, aliyun-cli). The vendor's reference
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinstancestatus)
// states: PageNumber starts at 1 (default 1), PageSize is 1 to 50 (default 10), InstanceId is an
// array of 1 to 100 ids, ZoneId filters by zone, and an unknown zone is InvalidZoneId.NotFound
// (404). The answer is InstanceStatuses.InstanceStatus[] of {InstanceId, Status} with
// TotalCount, PageNumber and PageSize; the statuses are the instance lifecycle ones
// DescribeInstances answers (Pending, Starting, Running, Stopping, Stopped).
func init() {
	core.Register(Version, "DescribeInstanceStatus", core.Route{Fn: handle(describeInstanceStatus)})
}

// Limits from the vendor's reference cited above.
const (
	instanceStatusMaxPageSize = 50
	instanceStatusMaxIDs      = 100
)

func describeInstanceStatus(c *call) (any, *core.Error) {
	number, size, e := c.page(instanceStatusMaxPageSize)
	if e != nil {
		return nil, e
	}
	ids := c.P.List("InstanceId")
	if len(ids) > instanceStatusMaxIDs {
		return nil, core.ErrInvalid("InstanceId", "at most %d ids, got %d", instanceStatusMaxIDs, len(ids))
	}
	zone := c.P["ZoneId"]
	if zone != "" && !c.Env.ZoneExists(c.Region, zone) {
		return nil, core.ErrNotFound("InvalidZoneId.NotFound", zone)
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	// Instances in creation order (c.st.order is by Seq), so pages are stable between calls.
	var list []*instance
	for _, in := range c.st.order {
		if in.Region != c.Region || !c.visible(in) || (zone != "" && in.Zone != zone) || (len(want) > 0 && !want[in.ID]) {
			continue
		}
		list = append(list, in)
	}
	lo, hi := core.PageBounds(len(list), number, size)
	resp := &ecssdk.DescribeInstanceStatusResponse{RequestId: c.ReqID, PageNumber: number, PageSize: size, TotalCount: len(list)}
	// An empty page is an empty list, as the vendor sends it, never null.
	resp.InstanceStatuses.InstanceStatus = make([]ecssdk.InstanceStatus, 0, hi-lo)
	for _, in := range list[lo:hi] {
		resp.InstanceStatuses.InstanceStatus = append(resp.InstanceStatuses.InstanceStatus,
			ecssdk.InstanceStatus{InstanceId: in.ID, Status: c.status(in)})
	}
	return resp, nil
}
