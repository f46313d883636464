package poolbench

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"
)

// BenchmarkNodePoolAutoscaling measures an autoscaling pool of max_size 1,000: the calls of its
// create (an empty group, min_size 0), of a no-change plan once the group has been scaled to
// 1,000 running nodes behind Terraform's back (as the Cluster Autoscaler would), and of its
// destroy. Target from the autoscaling issue: the plan in at most 15 calls.
func BenchmarkNodePoolAutoscaling(b *testing.B) {
	if testing.Short() {
		b.Skip("autoscaling pool benchmark skipped in -short mode: it builds the provider and scales to 1,000 nodes")
	}
	h := newHarness(b)
	netID := strings.TrimSpace(h.run(h.netDir, "output", "-raw", "id"))
	h.poolDir = filepath.Join(filepath.Dir(h.poolDir), "autoscaling")
	h.write(h.poolDir, "terraform {\n  required_providers {\n    gpucluster = { source = \"gpucluster/gpucluster\" }\n  }\n}\nprovider \"gpucluster\" {}\n"+`
resource "gpucluster_node_pool" "bench" {
  name          = "bench-asg"
  network_id    = "`+netID+`"
  scenario      = "ai_training"
  gpu_model     = "A100"
  gpus_per_node = 8
  autoscaling   = { min_size = 0, max_size = 1000 }
}
output "group" { value = gpucluster_node_pool.bench.scaling_group_id }
`)
	for i := 0; i < b.N; i++ {
		create := h.measure("create", "apply", "-auto-approve", "-input=false", "-no-color")
		group := strings.TrimSpace(h.run(h.poolDir, "output", "-raw", "group"))
		scaleTo(b, h.url, group, 1000)
		plan := h.measure("no-change plan", "plan", "-detailed-exitcode", "-input=false", "-no-color")
		destroy := h.measure("destroy", "destroy", "-auto-approve", "-input=false", "-no-color")
		if left := len(h.emu.Resources().Instances); left != 0 {
			b.Fatalf("%d instances left after destroy", left)
		}
		for _, p := range []phase{create, plan, destroy} {
			b.Logf("| max 1,000 | %-14s | %4d | %7.1fs | %6.1f MB | %s |", p.name, p.total, p.wall.Seconds(), float64(p.peakKB)/1024, formatCalls(p.calls))
		}
		b.ReportMetric(float64(create.total), "create-calls")
		b.ReportMetric(float64(plan.total), "plan-calls")
		b.ReportMetric(float64(destroy.total), "destroy-calls")
	}
}

// scaleTo sets the group's total capacity with ScaleWithAdjustment and waits until no node is
// starting.
func scaleTo(b *testing.B, endpoint, group string, n int) {
	b.Helper()
	c, err := ess.NewClientWithAccessKey(region, accessKey, secretKey)
	if err != nil {
		b.Fatal(err)
	}
	u, _ := url.Parse(endpoint)
	c.Domain = u.Host
	c.GetConfig().Scheme = "HTTP"
	r := ess.CreateScaleWithAdjustmentRequest()
	r.RegionId, r.ScalingGroupId, r.AdjustmentType, r.AdjustmentValue = region, group, "TotalCapacity", requests.NewInteger(n)
	if _, err := c.ScaleWithAdjustment(r); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		d := ess.CreateDescribeScalingGroupsRequest()
		d.RegionId, d.ScalingGroupId = region, &[]string{group}
		resp, err := c.DescribeScalingGroups(d)
		if err != nil {
			b.Fatal(err)
		}
		if g := resp.ScalingGroups.ScalingGroup[0]; g.TotalCapacity == n && g.PendingCapacity == 0 {
			return
		}
	}
	b.Fatalf("scaling group %s did not reach %d running instances in 2 minutes", group, n)
}
