package emulator

import (
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"
)

// DescribeLimitation answers the vendor's documented defaults (50 scaling groups a region, a
// MaxSize of up to 2,000) until PUT /_emulator/ess_limits sets others; CreateScalingGroup holds
// MaxSize to the limit in force.
func TestESSDescribeLimitationAndAdmin(t *testing.T) {
	e := newEnv(t, Config{BootTime: 100 * time.Millisecond})
	c := e.essClient()
	limits := func() *ess.DescribeLimitationResponse {
		r := ess.CreateDescribeLimitationRequest()
		r.RegionId = testRegion
		out, err := c.DescribeLimitation(r)
		must(t, err)
		return out
	}
	if l := limits(); l.MaxNumberOfScalingGroups != 50 || l.MaxNumberOfMaxSize != 2000 {
		t.Fatalf("default limits: %d groups, max size %d; want 50 and 2000", l.MaxNumberOfScalingGroups, l.MaxNumberOfMaxSize)
	}
	put(t, e.srv.URL+"/_emulator/ess_limits", `{"max-size": 10}`)
	if l := limits(); l.MaxNumberOfScalingGroups != 50 || l.MaxNumberOfMaxSize != 10 {
		t.Fatalf("limits after setting max-size alone: %d groups, max size %d; want the default 50 and 10", l.MaxNumberOfScalingGroups, l.MaxNumberOfMaxSize)
	}
	put(t, e.srv.URL+"/_emulator/ess_limits", `{"max-scaling-groups": 3, "max-size": 10}`)
	if l := limits(); l.MaxNumberOfScalingGroups != 3 || l.MaxNumberOfMaxSize != 10 {
		t.Fatalf("limits after PUT: %d groups, max size %d; want 3 and 10", l.MaxNumberOfScalingGroups, l.MaxNumberOfMaxSize)
	}
	f := e.essGroup(0, 4, []string{"ecs.gn7i-c8g1.2xlarge"}, nil)
	g := ess.CreateCreateScalingGroupRequest()
	g.RegionId, g.MinSize, g.MaxSize, g.VSwitchIds = testRegion, "0", "11", &[]string{f.vswID}
	_, err := c.CreateScalingGroup(g)
	wantCode(t, err, "InvalidParameter.MaxSize")
}
