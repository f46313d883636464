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

	pages := e.walkInstancePages(func(d *ecs.DescribeInstancesRequest) { d.PageSize = requests.NewInteger(5) })
	if first := pages[0]; len(pages) == 1 && first.TotalCount > len(first.Instances.Instance) {
		t.Fatalf("a first page of %d of %d instances answered no NextToken: the CLI's pager stops there", len(first.Instances.Instance), first.TotalCount)
	}
	seen := map[string]bool{}
	for _, p := range pages {
		for _, in := range p.Instances.Instance {
			seen[in.InstanceId] = true
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

// walkInstancePages asks DescribeInstances for page after page as a client following NextToken
// does: the request prepare makes, then the same with each answer's NextToken added, until an
// answer carries none. It fails the test when an instance is answered twice or paging does not end.
func (e *env) walkInstancePages(prepare func(*ecs.DescribeInstancesRequest)) []*ecs.DescribeInstancesResponse {
	e.t.Helper()
	var pages []*ecs.DescribeInstancesResponse
	seen := map[string]bool{}
	token := ""
	for {
		d := ecs.CreateDescribeInstancesRequest()
		d.RegionId = testRegion
		prepare(d)
		d.NextToken = token
		resp, err := e.ecs.DescribeInstances(d)
		must(e.t, err)
		for _, in := range resp.Instances.Instance {
			if seen[in.InstanceId] {
				e.t.Fatalf("page %d answered %s again", len(pages)+1, in.InstanceId)
			}
			seen[in.InstanceId] = true
		}
		pages = append(pages, resp)
		if token = resp.NextToken; token == "" {
			return pages
		}
		if len(pages) > 50 {
			e.t.Fatal("paging does not end")
		}
	}
}
