package emulator

import (
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

// TestDescribeInstancesPageNumberAnswersNextToken walks DescribeInstances as `aliyun ecs
// DescribeInstances --pager` does: the CLI's pager reads NextToken from every answer (its default
// field list names it) and, while one comes back, sends the same request again with that NextToken
// added, the PageSize it started with kept. On the cloud this merges every page of DescribeInstances
// (https://github.com/aliyun/aliyun-cli/issues/407: `--pager` works for DescribeInstances, and only
// APIs answering no NextToken, such as DescribeInstanceStatus, stop at their first page), so an
// answer to a page-number request that has more results after it carries a NextToken too
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinstances,
// response parameter NextToken), and the last page carries none.
func TestDescribeInstancesPageNumberAnswersNextToken(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/8", "10.1.0.0/16")
	run, err := e.ecs.RunInstances(e.runReq(f, "ecs.gn6i-c4g1.xlarge", 12))
	must(t, err)
	want := run.InstanceIdSets.InstanceIdSet

	seen := map[string]bool{}
	token := ""
	for calls := 1; ; calls++ {
		d := ecs.CreateDescribeInstancesRequest()
		d.RegionId = testRegion
		d.PageSize = requests.NewInteger(5)
		d.NextToken = token
		resp, err := e.ecs.DescribeInstances(d)
		must(t, err)
		for _, in := range resp.Instances.Instance {
			if seen[in.InstanceId] {
				t.Fatalf("call %d answered %s again", calls, in.InstanceId)
			}
			seen[in.InstanceId] = true
		}
		if calls == 1 && resp.NextToken == "" {
			t.Fatalf("a first page of %d of %d instances answered no NextToken: the CLI's pager stops there", len(resp.Instances.Instance), resp.TotalCount)
		}
		if resp.NextToken == "" {
			break
		}
		token = resp.NextToken
		if calls > 12 {
			t.Fatal("paging does not end")
		}
	}
	for _, id := range want {
		if !seen[id] {
			t.Errorf("the pages never answered %s", id)
		}
	}

	// A page-number request for the last page answers no NextToken.
	d := ecs.CreateDescribeInstancesRequest()
	d.RegionId = testRegion
	d.PageSize = requests.NewInteger(5)
	d.PageNumber = requests.NewInteger(3)
	resp, err := e.ecs.DescribeInstances(d)
	must(t, err)
	if len(resp.Instances.Instance) != 2 || resp.NextToken != "" {
		t.Fatalf("last page: %d instances, NextToken %q; want 2 and none", len(resp.Instances.Instance), resp.NextToken)
	}
}
