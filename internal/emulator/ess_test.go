package emulator

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth/credentials"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

// essFixture is a scaling group over two zones' vSwitches with an enabled configuration.
type essFixture struct {
	fixture
	vswB, group, config string
}

func (e *env) essClient() *ess.Client {
	e.t.Helper()
	c, err := ess.NewClientWithOptions(testRegion, sdkConfig(), credentials.NewAccessKeyCredential("emulator", "emulator-secret"))
	must(e.t, err)
	c.Domain = e.host
	return c
}

// essGroup builds a group (min, max) whose configuration lists types in priority order.
func (e *env) essGroup(minSize, maxSize int, types []string, spot func(*ess.CreateScalingGroupRequest, *ess.CreateScalingConfigurationRequest)) essFixture {
	e.t.Helper()
	f := essFixture{fixture: e.network("10.0.0.0/16", "10.0.1.0/24")}
	cs := vpc.CreateCreateVSwitchRequest()
	cs.RegionId, cs.VpcId, cs.ZoneId, cs.CidrBlock = testRegion, f.vpcID, testRegion+"-b", "10.0.2.0/24"
	sw, err := e.vpc.CreateVSwitch(cs)
	must(e.t, err)
	f.vswB = sw.VSwitchId
	c := e.essClient()
	g := ess.CreateCreateScalingGroupRequest()
	g.RegionId = testRegion
	g.MinSize, g.MaxSize = requests.NewInteger(minSize), requests.NewInteger(maxSize)
	g.VSwitchIds = &[]string{f.vswID, f.vswB}
	g.ScalingGroupName = "pool"
	cfg := ess.CreateCreateScalingConfigurationRequest()
	cfg.RegionId = testRegion
	cfg.ImageId = "ubuntu_22_04_x64_20G_alibase_20240101.vhd"
	cfg.InstanceTypes = &types
	cfg.SecurityGroupId = f.sgID
	cfg.SystemDiskCategory = "cloud_essd"
	cfg.SystemDiskSize = requests.NewInteger(40)
	cfg.Tags = `{"pool":"p1"}`
	if spot != nil {
		spot(g, cfg)
	}
	gr, err := c.CreateScalingGroup(g)
	must(e.t, err)
	f.group = gr.ScalingGroupId
	cfg.ScalingGroupId = f.group
	cr, err := c.CreateScalingConfiguration(cfg)
	must(e.t, err)
	f.config = cr.ScalingConfigurationId
	en := ess.CreateEnableScalingGroupRequest()
	en.RegionId, en.ScalingGroupId, en.ActiveScalingConfigurationId = testRegion, f.group, f.config
	_, err = c.EnableScalingGroup(en)
	must(e.t, err)
	return f
}

// autoscalerSetSize is what the Cluster Autoscaler's alicloud provider does to set a group's
// size: find (or create) its rule by name, modify it to TotalCapacity n, execute it by ARI,
// delete the rule.
func (e *env) autoscalerSetSize(group string, n int) string {
	e.t.Helper()
	c := e.essClient()
	d := ess.CreateDescribeScalingRulesRequest()
	d.RegionId, d.ScalingGroupId, d.ScalingRuleName = testRegion, group, &[]string{"acs-autogen-increase-rules"}
	dr, err := c.DescribeScalingRules(d)
	must(e.t, err)
	var id, ari string
	if len(dr.ScalingRules.ScalingRule) == 0 {
		cr := ess.CreateCreateScalingRuleRequest()
		cr.RegionId, cr.ScalingGroupId, cr.AdjustmentType = testRegion, group, "TotalCapacity"
		cr.AdjustmentValue = requests.NewInteger(n)
		resp, err := c.CreateScalingRule(cr)
		must(e.t, err)
		id, ari = resp.ScalingRuleId, resp.ScalingRuleAri
	} else {
		id, ari = dr.ScalingRules.ScalingRule[0].ScalingRuleId, dr.ScalingRules.ScalingRule[0].ScalingRuleAri
	}
	m := ess.CreateModifyScalingRuleRequest()
	m.RegionId, m.ScalingRuleId, m.AdjustmentType, m.AdjustmentValue = testRegion, id, "TotalCapacity", requests.NewInteger(n)
	_, err = c.ModifyScalingRule(m)
	must(e.t, err)
	x := ess.CreateExecuteScalingRuleRequest()
	x.RegionId, x.ScalingRuleAri = testRegion, ari
	xr, err := c.ExecuteScalingRule(x)
	must(e.t, err)
	del := ess.CreateDeleteScalingRuleRequest()
	del.RegionId, del.ScalingRuleId = testRegion, id
	_, err = c.DeleteScalingRule(del)
	must(e.t, err)
	return xr.ScalingActivityId
}

func (e *env) activity(group, id string) ess.ScalingActivity {
	e.t.Helper()
	d := ess.CreateDescribeScalingActivitiesRequest()
	d.RegionId, d.ScalingGroupId, d.ScalingActivityId = testRegion, group, &[]string{id}
	r, err := e.essClient().DescribeScalingActivities(d)
	must(e.t, err)
	if len(r.ScalingActivities.ScalingActivity) != 1 {
		e.t.Fatalf("activity %s: %d found", id, len(r.ScalingActivities.ScalingActivity))
	}
	return r.ScalingActivities.ScalingActivity[0]
}

func (e *env) scalingInstances(group string) []ess.ScalingInstance {
	e.t.Helper()
	var out []ess.ScalingInstance
	for page := 1; ; page++ {
		d := ess.CreateDescribeScalingInstancesRequest()
		d.RegionId, d.ScalingGroupId, d.PageSize, d.PageNumber = testRegion, group, requests.NewInteger(100), requests.NewInteger(page)
		r, err := e.essClient().DescribeScalingInstances(d)
		must(e.t, err)
		out = append(out, r.ScalingInstances.ScalingInstance...)
		if len(out) >= r.TotalCount {
			return out
		}
	}
}

func TestESSAutoscalerScaleOutAndIn(t *testing.T) {
	e := newEnv(t, Config{BootTime: 200 * time.Millisecond})
	f := e.essGroup(0, 50, []string{"ecs.gn7i-c8g1.2xlarge"}, nil)
	act := e.autoscalerSetSize(f.group, 20)
	if st := e.activity(f.group, act).StatusCode; st != "InProgress" {
		t.Fatalf("a new scale-out activity is %s, want InProgress", st)
	}
	// A second adjustment while the first runs is refused, as at the vendor.
	sw := ess.CreateScaleWithAdjustmentRequest()
	sw.RegionId, sw.ScalingGroupId, sw.AdjustmentType, sw.AdjustmentValue = testRegion, f.group, "QuantityChangeInCapacity", "1"
	_, err := e.essClient().ScaleWithAdjustment(sw)
	wantCode(t, err, "ScalingActivityInProgress")
	e.advance(time.Second)
	a := e.activity(f.group, act)
	if a.StatusCode != "Successful" || a.CreatedCapacity != 20 {
		t.Fatalf("activity: %s with %d created, want Successful with 20", a.StatusCode, a.CreatedCapacity)
	}
	inst := e.scalingInstances(f.group)
	if len(inst) != 20 || inst[0].LifecycleState != "InService" || inst[0].ZoneId != testRegion+"-a" {
		t.Fatalf("instances: %d, first %+v", len(inst), inst[0])
	}
	// The autoscaler removes named instances one call each.
	for _, in := range inst[:5] {
		r := ess.CreateRemoveInstancesRequest()
		r.RegionId, r.ScalingGroupId, r.InstanceId = testRegion, f.group, &[]string{in.InstanceId}
		_, err := e.essClient().RemoveInstances(r)
		must(t, err)
	}
	if got := len(e.scalingInstances(f.group)); got != 15 {
		t.Fatalf("%d instances after removing 5, want 15", got)
	}
	if got := len(e.describe([]string{inst[0].InstanceId})); got != 0 {
		t.Fatalf("a removed auto-created instance still exists")
	}
	dg := ess.CreateDescribeScalingGroupsRequest()
	dg.RegionId, dg.ScalingGroupId = testRegion, &[]string{f.group}
	gr, err := e.essClient().DescribeScalingGroups(dg)
	must(t, err)
	if g := gr.ScalingGroups.ScalingGroup[0]; g.TotalCapacity != 15 || g.LifecycleState != "Active" {
		t.Fatalf("group: total %d, state %s", g.TotalCapacity, g.LifecycleState)
	}
	// Above MaxSize is clamped; at the bound nothing changes and the activity is Rejected.
	e.advance(time.Second)
	act = e.autoscalerSetSize(f.group, 80)
	e.advance(time.Second)
	if a := e.activity(f.group, act); a.CreatedCapacity != 35 {
		t.Fatalf("scale to 80 over max 50 created %d, want 35", a.CreatedCapacity)
	}
	act = e.autoscalerSetSize(f.group, 60)
	if st := e.activity(f.group, act).StatusCode; st != "Rejected" {
		t.Fatalf("a no-change adjustment is %s, want Rejected", st)
	}
	// ForceDelete releases the instances with the group.
	del := ess.CreateDeleteScalingGroupRequest()
	del.RegionId, del.ScalingGroupId, del.ForceDelete = testRegion, f.group, "true"
	_, err = e.essClient().DeleteScalingGroup(del)
	must(t, err)
	e.advance(time.Second)
	if n := len(e.s.Resources().Instances); n != 0 {
		t.Fatalf("%d instances left after ForceDelete", n)
	}
	_, err = e.essClient().DescribeScalingInstances(func() *ess.DescribeScalingInstancesRequest {
		d := ess.CreateDescribeScalingInstancesRequest()
		d.RegionId, d.ScalingGroupId = testRegion, f.group
		return d
	}())
	must(t, err)
}

func TestESSMinSizeAndBounds(t *testing.T) {
	e := newEnv(t, Config{BootTime: 100 * time.Millisecond})
	c := e.essClient()
	f := e.essGroup(2, 4, []string{"ecs.gn7i-c8g1.2xlarge"}, nil)
	e.advance(time.Second)
	inst := e.scalingInstances(f.group)
	if len(inst) != 2 {
		t.Fatalf("enabling a group with MinSize 2 launched %d", len(inst))
	}
	r := ess.CreateRemoveInstancesRequest()
	r.RegionId, r.ScalingGroupId, r.InstanceId = testRegion, f.group, &[]string{inst[0].InstanceId}
	_, err := c.RemoveInstances(r)
	wantCode(t, err, "IncorrectCapacity.MinSize")
	g := ess.CreateCreateScalingGroupRequest()
	g.RegionId, g.MinSize, g.MaxSize, g.VSwitchIds = testRegion, "5", "3", &[]string{f.vswID}
	_, err = c.CreateScalingGroup(g)
	wantCode(t, err, "InvalidParameter.Conflict")
}

func TestESSStockOutFallsBackToNextZoneAndType(t *testing.T) {
	e := newEnv(t, Config{BootTime: 100 * time.Millisecond})
	f := e.essGroup(0, 50, []string{"ecs.gn7i-c8g1.2xlarge", "ecs.gn6i-c4g1.xlarge"}, nil)
	// Zone a has 3 of the first type and none of the second; zone b none of the first.
	e.s.SetCapacity(map[string]map[string]int{
		testRegion + "-a": {"ecs.gn7i-c8g1.2xlarge": 3, "ecs.gn6i-c4g1.xlarge": 0},
		testRegion + "-b": {"ecs.gn7i-c8g1.2xlarge": 0},
	})
	act := e.autoscalerSetSize(f.group, 10)
	e.advance(time.Second)
	count := map[string]int{}
	for _, in := range e.scalingInstances(f.group) {
		count[in.ZoneId+" "+in.InstanceType]++
	}
	want := map[string]int{testRegion + "-a ecs.gn7i-c8g1.2xlarge": 3, testRegion + "-b ecs.gn6i-c4g1.xlarge": 7}
	for k, n := range want {
		if count[k] != n {
			t.Fatalf("placement %v, want %v", count, want)
		}
	}
	if st := e.activity(f.group, act).StatusCode; st != "Successful" {
		t.Fatalf("activity %s, want Successful", st)
	}
	// Nothing left anywhere: the activity fails with the stock-out code.
	e.s.SetCapacity(map[string]map[string]int{
		testRegion + "-a": {"ecs.gn7i-c8g1.2xlarge": 0, "ecs.gn6i-c4g1.xlarge": 0},
		testRegion + "-b": {"ecs.gn7i-c8g1.2xlarge": 0, "ecs.gn6i-c4g1.xlarge": 0},
	})
	act = e.autoscalerSetSize(f.group, 12)
	e.advance(time.Second)
	if a := e.activity(f.group, act); a.StatusCode != "Failed" || a.ErrorCode != "OperationDenied.NoStock" {
		t.Fatalf("activity %s (%s), want Failed with OperationDenied.NoStock", a.StatusCode, a.ErrorCode)
	}
}

func TestESSSpotFallsBackToOnDemand(t *testing.T) {
	e := newEnv(t, Config{BootTime: 100 * time.Millisecond})
	mix := func(g *ess.CreateScalingGroupRequest, cfg *ess.CreateScalingConfigurationRequest) {
		g.OnDemandBaseCapacity, g.OnDemandPercentageAboveBaseCapacity = "1", "0"
		g.CompensateWithOnDemand, g.SpotInstanceRemedy = "true", "true"
		cfg.SpotStrategy = "SpotAsPriceGo"
	}
	f := e.essGroup(0, 50, []string{"ecs.gn7i-c8g1.2xlarge"}, mix)
	e.s.SetSpotCapacity(map[string]map[string]int{
		testRegion + "-a": {"ecs.gn7i-c8g1.2xlarge": 2}, testRegion + "-b": {"ecs.gn7i-c8g1.2xlarge": 0}})
	e.autoscalerSetSize(f.group, 6)
	e.advance(time.Second)
	spot, od := 0, 0
	for _, in := range e.scalingInstances(f.group) {
		if in.SpotStrategy == "NoSpot" {
			od++
		} else {
			spot++
		}
	}
	// 1 on-demand base, 5 spot wanted: 2 spot in stock, 3 made up on demand.
	if spot != 2 || od != 4 {
		t.Fatalf("spot %d, on-demand %d; want 2 and 4", spot, od)
	}
}

func TestESSClientTokenIdempotentCreate(t *testing.T) {
	e := newEnv(t, Config{BootTime: 100 * time.Millisecond})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	c := e.essClient()
	mk := func() *ess.CreateScalingGroupRequest {
		g := ess.CreateCreateScalingGroupRequest()
		g.RegionId, g.MinSize, g.MaxSize, g.VSwitchIds, g.ClientToken = testRegion, "0", "3", &[]string{f.vswID}, "tok-1"
		return g
	}
	a, err := c.CreateScalingGroup(mk())
	must(t, err)
	b, err := c.CreateScalingGroup(mk())
	must(t, err)
	if a.ScalingGroupId != b.ScalingGroupId {
		t.Fatalf("a retry with the same ClientToken made a second group: %s, %s", a.ScalingGroupId, b.ScalingGroupId)
	}
}

// BenchmarkESSScaleOut1000 measures scaling a group from 0 to 1,000 instances the way the
// Cluster Autoscaler does (describe/create/modify/execute/delete a TotalCapacity rule), then
// waiting for the activity through DescribeScalingActivities: it reports the API calls made and
// the wall time per scale-out.
func BenchmarkESSScaleOut1000(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := newEnv(b, Config{BootTime: 20 * time.Millisecond})
		f := e.essGroup(0, 1000, []string{"ecs.gn7i-c8g1.2xlarge"}, nil)
		e.s.stats.reset()
		b.StartTimer()
		act := e.autoscalerSetSize(f.group, 1000)
		for e.activity(f.group, act).StatusCode == "InProgress" {
			time.Sleep(5 * time.Millisecond)
		}
		b.StopTimer()
		if got := len(e.s.Resources().Instances); got != 1000 {
			b.Fatalf("%d instances after scaling to 1000", got)
		}
		b.ReportMetric(float64(e.s.Stats().Total), "calls/op")
	}
}

// An eRDMA configuration (a secondary HighPerformance interface) launches instances with it.
func TestESSSecondaryInterfaceReachesTheInstances(t *testing.T) {
	e := newEnv(t, Config{BootTime: 100 * time.Millisecond})
	f := e.essGroup(0, 4, []string{"ecs.gn8v-8x.48xlarge"}, func(_ *ess.CreateScalingGroupRequest, cfg *ess.CreateScalingConfigurationRequest) {
		cfg.NetworkInterfaces = &[]ess.CreateScalingConfigurationNetworkInterfaces{{InstanceType: "Secondary",
			NetworkInterfaceTrafficMode: "HighPerformance", SecurityGroupIds: &[]string{}}}
	})
	e.autoscalerSetSize(f.group, 2)
	e.advance(time.Second)
	inst := e.scalingInstances(f.group)
	if len(inst) != 2 {
		t.Fatalf("%d instances, want 2", len(inst))
	}
	nics := e.s.db.compute().Instances[inst[0].InstanceId].NICs
	if len(nics) == 0 || nics[0].Mode != "HighPerformance" {
		t.Fatalf("the instance has no HighPerformance interface: %+v", nics)
	}
}

// A scaling group, its configuration, activities and members survive a restart from the state
// file, and the group scales on from there.
func TestESSStateSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	e := newEnv(t, Config{StateFile: path, BootTime: 100 * time.Millisecond})
	f := e.essGroup(0, 10, []string{"ecs.gn7i-c8g1.2xlarge"}, nil)
	e.autoscalerSetSize(f.group, 3)
	e.advance(time.Second)
	before := e.s.Resources()
	e.srv.Close()
	must(t, e.s.Close())

	e2 := newEnv(t, Config{StateFile: path, BootTime: 100 * time.Millisecond})
	after := e2.s.Resources()
	if len(after.ScalingGroups) != 1 || fmt.Sprint(before.ScalingGroups) != fmt.Sprint(after.ScalingGroups) {
		t.Fatalf("scaling groups after a restart:\n%v\n%v", before.ScalingGroups, after.ScalingGroups)
	}
	e2.advance(2 * time.Second)
	e2.autoscalerSetSize(f.group, 5)
	e2.advance(time.Second)
	if n := len(e2.scalingInstances(f.group)); n != 5 {
		t.Fatalf("%d instances after scaling the restored group to 5", n)
	}
}

// Reclaimed spot instances are replaced when the group has SpotInstanceRemedy, and not otherwise.
func TestESSSpotReclaimAndRemedy(t *testing.T) {
	for _, remedy := range []bool{true, false} {
		t.Run(fmt.Sprintf("remedy=%v", remedy), func(t *testing.T) {
			e := newEnv(t, Config{BootTime: 100 * time.Millisecond})
			f := e.essGroup(0, 10, []string{"ecs.gn7i-c8g1.2xlarge"}, func(g *ess.CreateScalingGroupRequest, cfg *ess.CreateScalingConfigurationRequest) {
				g.OnDemandPercentageAboveBaseCapacity, g.SpotInstanceRemedy = "0", requests.NewBoolean(remedy)
				cfg.SpotStrategy = "SpotAsPriceGo"
			})
			e.autoscalerSetSize(f.group, 3)
			e.advance(time.Second)
			inst := e.scalingInstances(f.group)
			if err := e.s.ReclaimSpot([]string{inst[0].InstanceId, inst[1].InstanceId}); err != nil {
				t.Fatal(err)
			}
			e.advance(time.Second)
			want := 1
			if remedy {
				want = 3
			}
			if got := len(e.scalingInstances(f.group)); got != want {
				t.Fatalf("%d instances after 2 of 3 were reclaimed, want %d", got, want)
			}
			if got := len(e.describe([]string{inst[0].InstanceId})); got != 0 {
				t.Fatal("a reclaimed instance still exists")
			}
		})
	}
}
