package emulator

import (
	"strings"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

// TestDescribeInstanceStatus holds ECS DescribeInstanceStatus to the vendor's reference
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinstancestatus),
// called through the vendor's SDK as the Cluster Autoscaler's alicloud provider calls it: pages of
// PageSize (1-50) numbered from 1 with the total, ZoneId and InstanceId.N filters, an unknown
// zone refused with InvalidZoneId.NotFound, and an empty page answered as an empty list.
func TestDescribeInstanceStatus(t *testing.T) {
	e := newEnv(t, Config{BootTime: 1})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	ids := []string{e.runOne(f), e.runOne(f), e.runOne(f)}
	call := func(mod func(r *ecs.DescribeInstanceStatusRequest)) (*ecs.DescribeInstanceStatusResponse, error) {
		r := ecs.CreateDescribeInstanceStatusRequest()
		r.RegionId = testRegion
		mod(r)
		return e.ecs.DescribeInstanceStatus(r)
	}

	var seen []string
	for page := 1; page <= 2; page++ {
		resp, err := call(func(r *ecs.DescribeInstanceStatusRequest) {
			r.PageSize, r.PageNumber = requests.NewInteger(2), requests.NewInteger(page)
		})
		must(t, err)
		if resp.TotalCount != 3 || resp.PageNumber != page || resp.PageSize != 2 {
			t.Fatalf("page %d: TotalCount %d PageNumber %d PageSize %d, want 3 %d 2", page, resp.TotalCount, resp.PageNumber, resp.PageSize, page)
		}
		for _, s := range resp.InstanceStatuses.InstanceStatus {
			if s.Status != "Running" {
				t.Errorf("%s: status %q, want Running (BootTime is 1ns)", s.InstanceId, s.Status)
			}
			seen = append(seen, s.InstanceId)
		}
	}
	if strings.Join(seen, ",") != strings.Join(ids, ",") {
		t.Fatalf("pages listed %v, want %v in creation order", seen, ids)
	}

	resp, err := call(func(r *ecs.DescribeInstanceStatusRequest) { r.InstanceId = &[]string{ids[1]} })
	must(t, err)
	if resp.TotalCount != 1 || len(resp.InstanceStatuses.InstanceStatus) != 1 || resp.InstanceStatuses.InstanceStatus[0].InstanceId != ids[1] {
		t.Fatalf("InstanceId.1=%s: %+v", ids[1], resp.InstanceStatuses)
	}

	// Another zone of the region holds none of them: an empty list, not null.
	resp, err = call(func(r *ecs.DescribeInstanceStatusRequest) { r.ZoneId = testRegion + "-b" })
	must(t, err)
	if resp.TotalCount != 0 || !strings.Contains(resp.GetHttpContentString(), `"InstanceStatus":[]`) {
		t.Fatalf("zone b: want an empty list, got %s", resp.GetHttpContentString())
	}

	_, err = call(func(r *ecs.DescribeInstanceStatusRequest) { r.ZoneId = testRegion + "-zz" })
	wantCode(t, err, "InvalidZoneId.NotFound")
	_, err = call(func(r *ecs.DescribeInstanceStatusRequest) { r.PageSize = requests.NewInteger(51) })
	wantCode(t, err, "InvalidParameter")
}
