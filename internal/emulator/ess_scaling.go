package emulator

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"
)

func init() {
	register(versionESS, "CreateScalingRule", route{fn: createScalingRule, write: true})
	register(versionESS, "DescribeScalingRules", route{fn: describeScalingRules})
	register(versionESS, "ModifyScalingRule", route{fn: modifyScalingRule, write: true})
	register(versionESS, "DeleteScalingRule", route{fn: deleteScalingRule, write: true})
	register(versionESS, "ExecuteScalingRule", route{fn: executeScalingRule, write: true, idem: true})
	register(versionESS, "ScaleWithAdjustment", route{fn: scaleWithAdjustment, write: true, idem: true})
	register(versionESS, "DescribeScalingActivities", route{fn: describeScalingActivities})
	register(versionESS, "DescribeScalingInstances", route{fn: describeScalingInstances})
	register(versionESS, "RemoveInstances", route{fn: removeScalingInstances, write: true, idem: true})
}

// essMaxStep: one adjustment never adds or removes more than 1000 instances.
const essMaxStep = 1000

// idFilter reads an id filter the SDK sends either as Name or as Name.N.
func idFilter(p params, name string) []string {
	out := p.List(name)
	if v := p[name]; v != "" {
		out = append(out, v)
	}
	return out
}

// --- rules ---

// readAdjustment checks AdjustmentType/AdjustmentValue against the vendor's ranges.
func readAdjustment(p params, typ string, value int) (string, int, *apiError) {
	typ = orDefault(p["AdjustmentType"], typ)
	value, e := p.Int("AdjustmentValue", value)
	if e != nil {
		return "", 0, e
	}
	ranges := map[string][2]int{"QuantityChangeInCapacity": {-1000, 1000}, "PercentChangeInCapacity": {-100, 10000}, "TotalCapacity": {0, 2000}}
	r, ok := ranges[typ]
	if !ok {
		return "", 0, errInvalid("AdjustmentType", "must be QuantityChangeInCapacity, PercentChangeInCapacity or TotalCapacity, got %q", typ)
	}
	if value < r[0] || value > r[1] {
		return "", 0, errInvalid("AdjustmentValue", "must be %d to %d for %s, got %d", r[0], r[1], typ, value)
	}
	return typ, value, nil
}

// adjustedGroup is the group a new rule or a one-off adjustment is for; both name their
// adjustment's type and value.
func (c *call) adjustedGroup() (*scalingGroup, *apiError) {
	c.purgeESS()
	g, e := c.writableGroup()
	if e != nil {
		return nil, e
	}
	for _, k := range []string{"AdjustmentType", "AdjustmentValue"} {
		if _, ok := c.p[k]; !ok {
			return nil, errMissing(k)
		}
	}
	return g, nil
}

func ruleAri(r *scalingRule) string {
	return fmt.Sprintf("ari:acs:ess:%s:1234567890123456:scalingrule/%s", r.Region, r.ID)
}

func createScalingRule(c *call) (any, *apiError) {
	g, e := c.adjustedGroup()
	if e != nil {
		return nil, e
	}
	r := &scalingRule{Group: g.ID, Region: c.region}
	if r.AdjType, r.AdjValue, e = readAdjustment(c.p, "", 0); e != nil {
		return nil, e
	}
	if r.MinAdj, e = c.p.Int("MinAdjustmentMagnitude", 0); e != nil {
		return nil, e
	}
	if r.Cooldown, e = c.p.Int("Cooldown", 0); e != nil {
		return nil, e
	}
	r.ID = c.s.db.newID("asr")
	r.Name = orDefault(c.p["ScalingRuleName"], r.ID)
	for _, o := range c.s.db.ESS.Rules {
		if o.Group == g.ID && o.Name == r.Name {
			return nil, errf(400, "ScalingRuleName.Duplicate", "Scaling group %s already has a rule named %q.", g.ID, r.Name)
		}
	}
	c.s.db.ESS.Rules[r.ID] = r
	return &ess.CreateScalingRuleResponse{RequestId: c.reqID, ScalingRuleId: r.ID, ScalingRuleAri: ruleAri(r)}, nil
}

func (c *call) rule(id string) (*scalingRule, *apiError) {
	r := c.s.db.ESS.Rules[id]
	if r == nil || r.Region != c.region {
		return nil, errNotFound("InvalidScalingRuleId.NotFound", id)
	}
	if _, e := c.group(r.Group); e != nil {
		return nil, errNotFound("InvalidScalingRuleId.NotFound", id)
	}
	return r, nil
}

func modifyScalingRule(c *call) (any, *apiError) {
	c.purgeESS()
	id, e := c.p.Required("ScalingRuleId")
	if e != nil {
		return nil, e
	}
	r, e := c.rule(id)
	if e != nil {
		return nil, e
	}
	nr := *r
	if nr.AdjType, nr.AdjValue, e = readAdjustment(c.p, r.AdjType, r.AdjValue); e != nil {
		return nil, e
	}
	if nr.MinAdj, e = c.p.Int("MinAdjustmentMagnitude", r.MinAdj); e != nil {
		return nil, e
	}
	if nr.Cooldown, e = c.p.Int("Cooldown", r.Cooldown); e != nil {
		return nil, e
	}
	if v := c.p["ScalingRuleName"]; v != "" {
		nr.Name = v
	}
	*r = nr
	return &ess.ModifyScalingRuleResponse{RequestId: c.reqID}, nil
}

func deleteScalingRule(c *call) (any, *apiError) {
	c.purgeESS()
	id, e := c.p.Required("ScalingRuleId")
	if e != nil {
		return nil, e
	}
	if _, e := c.rule(id); e != nil {
		return nil, e
	}
	delete(c.s.db.ESS.Rules, id)
	return &ess.DeleteScalingRuleResponse{RequestId: c.reqID}, nil
}

func describeScalingRules(c *call) (any, *apiError) {
	q, e := c.listQuery("", 50)
	if e != nil {
		return nil, e
	}
	groupID := c.p["ScalingGroupId"]
	ids, names, aris := idFilter(c.p, "ScalingRuleId"), idFilter(c.p, "ScalingRuleName"), idFilter(c.p, "ScalingRuleAri")
	var match []*scalingRule
	for _, r := range c.s.db.ESS.Rules {
		if r.Region != c.region || groupID != "" && r.Group != groupID {
			continue
		}
		if _, e := c.group(r.Group); e != nil {
			continue
		}
		if len(ids) > 0 && !contains(ids, r.ID) || len(names) > 0 && !contains(names, r.Name) || len(aris) > 0 && !contains(aris, ruleAri(r)) {
			continue
		}
		match = append(match, r)
	}
	resp := &ess.DescribeScalingRulesResponse{RequestId: c.reqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(match)}
	resp.ScalingRules.ScalingRule = []ess.ScalingRule{}
	for _, r := range pageOf(q, match, func(r *scalingRule) string { return r.ID }) {
		g := c.s.db.ESS.Groups[r.Group]
		resp.ScalingRules.ScalingRule = append(resp.ScalingRules.ScalingRule, ess.ScalingRule{
			ScalingRuleId: r.ID, ScalingRuleName: r.Name, ScalingRuleAri: ruleAri(r), ScalingGroupId: r.Group,
			ScalingRuleType: "SimpleScalingRule", AdjustmentType: r.AdjType, AdjustmentValue: r.AdjValue,
			MinAdjustmentMagnitude: r.MinAdj, Cooldown: r.Cooldown, MinSize: g.Min, MaxSize: g.Max,
		})
	}
	return resp, nil
}

// --- executing an adjustment ---

// adjustedTarget answers the total capacity an adjustment asks for, clamped to the group's
// bounds and to one step of essMaxStep.
func adjustedTarget(g *scalingGroup, total int, typ string, value, minAdj int) int {
	target := total
	switch typ {
	case "QuantityChangeInCapacity":
		target = total + value
	case "PercentChangeInCapacity":
		delta := int(math.Round(float64(total) * float64(value) / 100))
		if minAdj > 0 && delta != 0 && abs(delta) < minAdj {
			delta = minAdj * sign(delta)
		}
		target = total + delta
	case "TotalCapacity":
		target = value
	}
	target = min(max(target, g.Min), g.Max)
	return min(max(target, total-essMaxStep), total+essMaxStep)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func sign(n int) int {
	if n < 0 {
		return -1
	}
	return 1
}

// scale runs one adjustment on an Active group with no activity in progress.
func (c *call) scale(g *scalingGroup, typ string, value, minAdj int, cause string) (*scalingActivity, *apiError) {
	if !g.Active {
		return nil, errGroupStatus(g, c.s.groupState(g))
	}
	if a := c.inProgress(g); a != nil {
		return nil, errf(400, "ScalingActivityInProgress", "Scaling activity %s of scaling group %s is in progress.", a.ID, g.ID)
	}
	total := len(c.liveMembers(g))
	target := adjustedTarget(g, total, typ, value, minAdj)
	if target == total {
		a := c.newActivity(g, cause)
		a.Rejected = "To execute the specified scaling rule, the total capacity will not change."
		a.Total = total
		return a, nil
	}
	if g.Desired >= 0 {
		g.Desired = target
	}
	return c.startActivity(g, target, cause), nil
}

func executeScalingRule(c *call) (any, *apiError) {
	c.purgeESS()
	ari, e := c.p.Required("ScalingRuleAri")
	if e != nil {
		return nil, e
	}
	var r *scalingRule
	for _, x := range c.s.db.ESS.Rules {
		if x.Region == c.region && ruleAri(x) == ari {
			r = x
		}
	}
	if r == nil {
		return nil, errNotFound("InvalidScalingRuleAri.NotFound", ari)
	}
	g, e := c.group(r.Group)
	if e != nil {
		return nil, e
	}
	a, e := c.scale(g, r.AdjType, r.AdjValue, r.MinAdj, fmt.Sprintf("A user executed scaling rule %q.", r.Name))
	if e != nil {
		return nil, e
	}
	return &ess.ExecuteScalingRuleResponse{RequestId: c.reqID, ScalingActivityId: a.ID}, nil
}

func scaleWithAdjustment(c *call) (any, *apiError) {
	g, e := c.adjustedGroup()
	if e != nil {
		return nil, e
	}
	typ, value, e := readAdjustment(c.p, "", 0)
	if e != nil {
		return nil, e
	}
	minAdj, e := c.p.Int("MinAdjustmentMagnitude", 0)
	if e != nil {
		return nil, e
	}
	a, e := c.scale(g, typ, value, minAdj, fmt.Sprintf("A user requested %s %d.", typ, value))
	if e != nil {
		return nil, e
	}
	return &ess.ScaleWithAdjustmentResponse{RequestId: c.reqID, ScalingActivityId: a.ID, ActivityType: "ScaleOut"}, nil
}

// --- activities ---

func (c *call) newActivity(g *scalingGroup, cause string) *scalingActivity {
	a := &scalingActivity{ID: c.s.db.newID("asa"), Group: g.ID, Region: g.Region, Cause: cause, Started: c.now.UnixNano()}
	c.s.db.ESS.Activities[a.ID] = a
	return a
}

// startActivity brings the group to target instances: removing by the group's removal
// policies, or launching through RunInstances.
func (c *call) startActivity(g *scalingGroup, target int, cause string) *scalingActivity {
	a := c.newActivity(g, cause)
	members := c.liveMembers(g)
	if target < len(members) {
		a.Want = len(members) - target
		a.Desc = fmt.Sprintf("Remove %d ECS instance(s)", a.Want)
		for _, m := range c.removalOrder(g, members)[:a.Want] {
			c.releaseMember(g, m)
			a.Destroyed = append(a.Destroyed, m.Instance)
		}
	} else {
		a.Want = target - len(members)
		a.Desc = fmt.Sprintf("Add %d ECS instance(s)", a.Want)
		c.launch(g, a, members)
	}
	a.Total = len(c.liveMembers(g))
	return a
}

// removalOrder sorts members by the group's removal policies: instances of an older (not the
// active) configuration first, then the oldest (or newest) instances.
func (c *call) removalOrder(g *scalingGroup, members []*scalingMember) []*scalingMember {
	out := append([]*scalingMember{}, members...)
	newest := contains(g.Removal, "NewestInstance")
	sort.SliceStable(out, func(i, j int) bool {
		if contains(g.Removal, "OldestScalingConfiguration") {
			oi, oj := out[i].Config != g.Config, out[j].Config != g.Config
			if oi != oj {
				return oi
			}
		}
		if newest {
			return out[i].Added > out[j].Added
		}
		return out[i].Added < out[j].Added
	})
	return out
}

func (c *call) releaseMember(g *scalingGroup, m *scalingMember) {
	if in := c.s.db.Instances[m.Instance]; in != nil && m.Creation == "AutoCreated" {
		c.s.db.removeInstance(in)
	}
	for i, x := range g.Members {
		if x == m {
			g.Members = append(g.Members[:i], g.Members[i+1:]...)
			break
		}
	}
}

// launch adds a.Want instances: the on-demand share of the spot mix first, then the spot share;
// spot that cannot be had is made up with on-demand instances when CompensateWithOnDemand is set.
func (c *call) launch(g *scalingGroup, a *scalingActivity, members []*scalingMember) {
	cf := c.s.db.ESS.Configs[g.Config]
	if cf == nil {
		a.ErrCode, a.ErrMsg = "InvalidScalingConfigurationId.NotFound", "The scaling group has no active scaling configuration."
		return
	}
	od := 0
	for _, m := range members {
		if !isSpot(c.s.db.Instances[m.Instance].Spot) {
			od++
		}
	}
	total := len(members) + a.Want
	above := max(total-g.OnDemandBase, 0)
	wantOD := min(g.OnDemandBase, total) + int(math.Ceil(float64(above)*float64(g.OnDemandPct)/100))
	newOD := min(max(wantOD-od, 0), a.Want)
	newSpot := a.Want - newOD
	spotStrategy := cf.Launch["SpotStrategy"]
	if !isSpot(spotStrategy) {
		if g.OnDemandPct == 100 && g.OnDemandBase == 0 {
			newOD, newSpot = a.Want, 0 // no mix configured: the configuration's own strategy
		}
		spotStrategy = "SpotAsPriceGo"
	} else if g.OnDemandPct == 100 && g.OnDemandBase == 0 {
		newOD, newSpot = 0, a.Want // a spot configuration without a mix: all spot
	}
	got := c.launchInto(g, cf, a, newOD, "NoSpot")
	gotSpot := c.launchInto(g, cf, a, newSpot, spotStrategy)
	if short := newSpot - gotSpot; short > 0 && g.CompensateOnDemand {
		got += c.launchInto(g, cf, a, short, "NoSpot")
	}
	_ = got
}

// launchInto runs RunInstances over the group's vSwitches (in priority order) and the
// configuration's instance types (in priority order) until n instances run or every candidate
// refused; it answers how many were created.
func (c *call) launchInto(g *scalingGroup, cf *scalingConfig, a *scalingActivity, n int, spot string) int {
	created := 0
	for _, vsw := range g.VSwitches {
		for _, typ := range cf.Types {
			for created < n {
				p := params{"RegionId": c.region, "InstanceType": typ, "VSwitchId": vsw, "SpotStrategy": spot,
					"Amount": strconv.Itoa(min(n-created, 100)), "MinAmount": "1"}
				for k, v := range cf.Launch {
					if k != "SpotStrategy" && !strings.HasPrefix(k, "SpotPriceLimit.") && !strings.HasPrefix(k, "NetworkInterfaces.") {
						p[k] = v
					}
				}
				addSecondaryInterfaces(p, cf.Launch)
				if spot == "SpotWithPriceLimit" {
					for _, m := range params(cf.Launch).StructList("SpotPriceLimit") {
						if normalizeType(m["InstanceType"]) == normalizeType(typ) {
							p["SpotPriceLimit"] = m["PriceLimit"]
						}
					}
				}
				for i, t := range cf.Tags {
					p[fmt.Sprintf("Tag.%d.Key", i+1)] = t.K
					p[fmt.Sprintf("Tag.%d.Value", i+1)] = t.V
				}
				sub := &call{s: c.s, p: p, action: "RunInstances", version: versionECS, region: c.region, now: c.now, reqID: c.reqID, ak: c.ak}
				resp, e := runInstances(sub)
				if e != nil {
					a.ErrCode, a.ErrMsg = e.Code, e.Message
					if contains(stockOutCodes, e.Code) || e.Code == "QuotaExceed.ElasticQuota" {
						break // the next type, then the next vSwitch
					}
					return created // the launch settings themselves are refused: no candidate helps
				}
				for _, id := range resp.(*ecs.RunInstancesResponse).InstanceIdSets.InstanceIdSet {
					g.Members = append(g.Members, &scalingMember{Instance: id, Config: cf.ID, Activity: a.ID, Creation: "AutoCreated", Added: c.now.UnixNano()})
					a.Created = append(a.Created, id)
					created++
				}
			}
			if created >= n {
				return created
			}
		}
	}
	return created
}

// addSecondaryInterfaces turns the configuration's secondary NetworkInterfaces.N (an eRDMA
// HighPerformance interface, say) into RunInstances' NetworkInterface.N; the primary interface
// is the instance's own, from the top-level vSwitch and security groups.
func addSecondaryInterfaces(p params, launch map[string]string) {
	n := 0
	for _, m := range params(launch).StructList("NetworkInterfaces") {
		if m["InstanceType"] == "Primary" {
			continue
		}
		n++
		pre := fmt.Sprintf("NetworkInterface.%d.", n)
		p[pre+"InstanceType"] = "Secondary"
		p[pre+"NetworkInterfaceTrafficMode"] = orDefault(m["NetworkInterfaceTrafficMode"], "Standard")
		if sg := m["SecurityGroupIds.1"]; sg != "" {
			p[pre+"SecurityGroupId"] = sg
		}
	}
}

// activityStatus: Rejected activities never ran; an activity is InProgress for the boot time
// and while an instance it created is not Running; then Successful, Warning or Failed by how
// many of the instances it was to add or remove it did.
func (s *Server) activityStatus(a *scalingActivity, now time.Time) string {
	if a.Rejected != "" {
		return "Rejected"
	}
	if time.Duration(now.UnixNano()-a.Started) < s.cfg.BootTime {
		return "InProgress"
	}
	for _, id := range a.Created {
		if in := s.db.Instances[id]; in != nil && s.instanceStatus(in, now) != "Running" {
			return "InProgress"
		}
	}
	done := len(a.Created) + len(a.Destroyed)
	switch {
	case done >= a.Want:
		return "Successful"
	case done > 0:
		return "Warning"
	}
	return "Failed"
}

// inProgress answers the group's activity in progress, if any.
func (c *call) inProgress(g *scalingGroup) *scalingActivity {
	for _, a := range c.s.db.ESS.Activities {
		if a.Group == g.ID && c.s.activityStatus(a, c.now) == "InProgress" {
			return a
		}
	}
	return nil
}

func describeScalingActivities(c *call) (any, *apiError) {
	q, e := c.listQuery("", 50)
	if e != nil {
		return nil, e
	}
	groupID := c.p["ScalingGroupId"]
	ids := idFilter(c.p, "ScalingActivityId")
	if groupID == "" && len(ids) == 0 {
		return nil, errMissing("ScalingGroupId")
	}
	status := c.p["StatusCode"]
	var match []*scalingActivity
	for _, a := range c.s.db.ESS.Activities {
		if a.Region != c.region || groupID != "" && a.Group != groupID || len(ids) > 0 && !contains(ids, a.ID) {
			continue
		}
		if status != "" && c.s.activityStatus(a, c.now) != status {
			continue
		}
		match = append(match, a)
	}
	resp := &ess.DescribeScalingActivitiesResponse{RequestId: c.reqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(match)}
	resp.ScalingActivities.ScalingActivity = []ess.ScalingActivity{}
	// Newest first, as the vendor lists them.
	sort.Slice(match, func(i, j int) bool { return match[i].ID > match[j].ID })
	lo, hi := pageBounds(len(match), q.Number, q.Size)
	for _, a := range match[lo:hi] {
		st := c.s.activityStatus(a, c.now)
		va := ess.ScalingActivity{
			ScalingActivityId: a.ID, ScalingGroupId: a.Group, Description: a.Desc, Cause: a.Cause,
			StartTime: fmtTime(a.Started), StatusCode: st, TotalCapacity: strconv.Itoa(a.Total),
			CreatedCapacity: len(a.Created), DestroyedCapacity: len(a.Destroyed), ErrorCode: a.ErrCode, ErrorMessage: a.ErrMsg,
			ScalingInstanceNumber: len(a.Created) + len(a.Destroyed),
		}
		va.CreatedInstances.CreatedInstance = append([]string{}, a.Created...)
		va.DestroyedInstances.DestroyedInstance = append([]string{}, a.Destroyed...)
		switch st {
		case "InProgress":
			va.Progress = 50
		case "Rejected":
			va.StatusMessage = a.Rejected
		default:
			va.Progress = 100
			va.EndTime = fmtTime(a.Started + int64(c.s.cfg.BootTime))
			if st != "Successful" {
				va.StatusMessage = fmt.Sprintf("%d of %d instance(s): %s", len(a.Created)+len(a.Destroyed), a.Want, a.ErrMsg)
			}
		}
		resp.ScalingActivities.ScalingActivity = append(resp.ScalingActivities.ScalingActivity, va)
	}
	return resp, nil
}

// --- instances ---

func describeScalingInstances(c *call) (any, *apiError) {
	q, e := c.listQuery("", 100)
	if e != nil {
		return nil, e
	}
	groupID := c.p["ScalingGroupId"]
	ids := idFilter(c.p, "InstanceId")
	lifecycle := c.p["LifecycleState"]
	var groups []*scalingGroup
	for _, g := range c.s.db.ESS.Groups {
		if g.Region == c.region && !c.s.groupGone(g, c.now) && (groupID == "" || g.ID == groupID) {
			groups = append(groups, g)
		}
	}
	type row struct {
		g *scalingGroup
		m *scalingMember
	}
	var match []row
	for _, g := range groups {
		for _, m := range c.liveMembers(g) {
			if len(ids) > 0 && !contains(ids, m.Instance) {
				continue
			}
			if v := c.p["ScalingConfigurationId"]; v != "" && m.Config != v {
				continue
			}
			if v := c.p["CreationType"]; v != "" && m.Creation != v {
				continue
			}
			if lifecycle != "" && c.memberState(m) != lifecycle {
				continue
			}
			match = append(match, row{g, m})
		}
	}
	resp := &ess.DescribeScalingInstancesResponse{RequestId: c.reqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(match)}
	resp.ScalingInstances.ScalingInstance = []ess.ScalingInstance{}
	for _, r := range pageOf(q, match, func(r row) string { return r.m.Instance }) {
		in := c.s.db.Instances[r.m.Instance]
		resp.ScalingInstances.ScalingInstance = append(resp.ScalingInstances.ScalingInstance, ess.ScalingInstance{
			InstanceId: in.ID, ScalingGroupId: r.g.ID, ScalingConfigurationId: r.m.Config, ScalingActivityId: r.m.Activity,
			CreationType: r.m.Creation, LifecycleState: c.memberState(r.m), HealthStatus: "Healthy", ZoneId: in.Zone,
			InstanceType: in.Type, PrivateIpAddress: in.IP, SpotStrategy: orDefault(in.Spot, "NoSpot"),
			CreationTime: fmtTime(r.m.Added), CreatedTime: fmtTime(in.Created), WeightedCapacity: 1, WarmupState: "NoNeedWarmup",
		})
	}
	return resp, nil
}

// memberState is a member's LifecycleState: Pending until its instance runs, then InService.
func (c *call) memberState(m *scalingMember) string {
	if in := c.s.db.Instances[m.Instance]; in != nil && c.s.instanceStatus(in, c.now) == "Running" {
		return "InService"
	}
	return "Pending"
}

// removeScalingInstances is RemoveInstances: the named instances leave the group (auto-created
// ones are released), never below MinSize.
func removeScalingInstances(c *call) (any, *apiError) {
	c.purgeESS()
	g, e := c.writableGroup()
	if e != nil {
		return nil, e
	}
	if !g.Active {
		return nil, errGroupStatus(g, c.s.groupState(g))
	}
	ids := c.p.List("InstanceId")
	if len(ids) == 0 {
		return nil, errMissing("InstanceId.1")
	}
	if len(ids) > essMaxStep {
		return nil, errInvalid("InstanceId", "at most %d instances, got %d", essMaxStep, len(ids))
	}
	decrease, e := c.p.Bool("DecreaseDesiredCapacity", true)
	if e != nil {
		return nil, e
	}
	members := c.liveMembers(g)
	var out []*scalingMember
	for _, id := range ids {
		var found *scalingMember
		for _, m := range members {
			if m.Instance == id {
				found = m
			}
		}
		if found == nil {
			return nil, errf(404, "InvalidInstanceId.NotFound", "Instance %s is not in scaling group %s.", id, g.ID)
		}
		out = append(out, found)
	}
	if len(members)-len(out) < g.Min {
		return nil, errf(400, "IncorrectCapacity.MinSize", "Removing %d instance(s) would leave scaling group %s with %d, below its MinSize %d.", len(out), g.ID, len(members)-len(out), g.Min)
	}
	a := c.newActivity(g, fmt.Sprintf("A user removed %d instance(s).", len(out)))
	a.Want = len(out)
	a.Desc = fmt.Sprintf("Remove %d ECS instance(s)", a.Want)
	for _, m := range out {
		c.releaseMember(g, m)
		a.Destroyed = append(a.Destroyed, m.Instance)
	}
	a.Total = len(c.liveMembers(g))
	if decrease && g.Desired >= 0 {
		g.Desired = max(g.Desired-len(out), g.Min)
	}
	return &ess.RemoveInstancesResponse{RequestId: c.reqID, ScalingActivityId: a.ID}, nil
}
