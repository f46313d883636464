package ess

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	esssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ess"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "CreateScalingRule", core.Route{Fn: handle(createScalingRule), Write: true})
	core.Register(Version, "DescribeScalingRules", core.Route{Fn: handle(describeScalingRules)})
	core.Register(Version, "ModifyScalingRule", core.Route{Fn: handle(modifyScalingRule), Write: true})
	core.Register(Version, "DeleteScalingRule", core.Route{Fn: handle(deleteScalingRule), Write: true})
	core.Register(Version, "ExecuteScalingRule", core.Route{Fn: handle(executeScalingRule), Write: true, Idem: true})
	core.Register(Version, "ScaleWithAdjustment", core.Route{Fn: handle(scaleWithAdjustment), Write: true, Idem: true})
}

// essMaxStep: one adjustment never adds or removes more than 1000 instances.
const essMaxStep = 1000

// readAdjustment checks AdjustmentType/AdjustmentValue against the vendor's ranges.
func readAdjustment(p core.Params, typ string, value int) (string, int, *core.Error) {
	typ = cmp.Or(p["AdjustmentType"], typ)
	value, e := p.Int("AdjustmentValue", value)
	if e != nil {
		return "", 0, e
	}
	ranges := map[string][2]int{"QuantityChangeInCapacity": {-1000, 1000}, "PercentChangeInCapacity": {-100, 10000}, "TotalCapacity": {0, 2000}}
	r, ok := ranges[typ]
	if !ok {
		return "", 0, core.ErrInvalid("AdjustmentType", "must be QuantityChangeInCapacity, PercentChangeInCapacity or TotalCapacity, got %q", typ)
	}
	if value < r[0] || value > r[1] {
		return "", 0, core.ErrInvalid("AdjustmentValue", "must be %d to %d for %s, got %d", r[0], r[1], typ, value)
	}
	return typ, value, nil
}

// adjustedGroup is the group a new rule or a one-off adjustment is for; both name their
// adjustment's type and value.
func (c *call) adjustedGroup() (*scalingGroup, *core.Error) {
	c.purgeESS()
	g, e := c.writableGroup()
	if e != nil {
		return nil, e
	}
	for _, k := range []string{"AdjustmentType", "AdjustmentValue"} {
		if _, ok := c.P[k]; !ok {
			return nil, core.ErrMissing(k)
		}
	}
	return g, nil
}

func ruleAri(r *scalingRule) string {
	return fmt.Sprintf("ari:acs:ess:%s:1234567890123456:scalingrule/%s", r.Region, r.ID)
}

func createScalingRule(c *call) (any, *core.Error) {
	g, e := c.adjustedGroup()
	if e != nil {
		return nil, e
	}
	r := &scalingRule{Group: g.ID, Region: c.Region}
	if r.AdjType, r.AdjValue, e = readAdjustment(c.P, "", 0); e != nil {
		return nil, e
	}
	if r.MinAdj, e = c.P.Int("MinAdjustmentMagnitude", 0); e != nil {
		return nil, e
	}
	if r.Cooldown, e = c.P.Int("Cooldown", 0); e != nil {
		return nil, e
	}
	r.ID = c.Env.NewID("asr")
	r.Name = cmp.Or(c.P["ScalingRuleName"], r.ID)
	for _, o := range c.st.Rules {
		if o.Group == g.ID && o.Name == r.Name {
			return nil, core.Errf(400, "ScalingRuleName.Duplicate", "Scaling group %s already has a rule named %q.", g.ID, r.Name)
		}
	}
	c.st.Rules[r.ID] = r
	return &esssdk.CreateScalingRuleResponse{RequestId: c.ReqID, ScalingRuleId: r.ID, ScalingRuleAri: ruleAri(r)}, nil
}

func (c *call) rule(id string) (*scalingRule, *core.Error) {
	r := c.st.Rules[id]
	if r == nil || r.Region != c.Region {
		return nil, core.ErrNotFound("InvalidScalingRuleId.NotFound", id)
	}
	if _, e := c.group(r.Group); e != nil {
		return nil, core.ErrNotFound("InvalidScalingRuleId.NotFound", id)
	}
	return r, nil
}

func modifyScalingRule(c *call) (any, *core.Error) {
	c.purgeESS()
	id, e := c.P.Required("ScalingRuleId")
	if e != nil {
		return nil, e
	}
	r, e := c.rule(id)
	if e != nil {
		return nil, e
	}
	nr := *r
	if nr.AdjType, nr.AdjValue, e = readAdjustment(c.P, r.AdjType, r.AdjValue); e != nil {
		return nil, e
	}
	if nr.MinAdj, e = c.P.Int("MinAdjustmentMagnitude", r.MinAdj); e != nil {
		return nil, e
	}
	if nr.Cooldown, e = c.P.Int("Cooldown", r.Cooldown); e != nil {
		return nil, e
	}
	if v := c.P["ScalingRuleName"]; v != "" {
		nr.Name = v
	}
	*r = nr
	return &esssdk.ModifyScalingRuleResponse{RequestId: c.ReqID}, nil
}

func deleteScalingRule(c *call) (any, *core.Error) {
	c.purgeESS()
	id, e := c.P.Required("ScalingRuleId")
	if e != nil {
		return nil, e
	}
	if _, e := c.rule(id); e != nil {
		return nil, e
	}
	delete(c.st.Rules, id)
	return &esssdk.DeleteScalingRuleResponse{RequestId: c.ReqID}, nil
}

func describeScalingRules(c *call) (any, *core.Error) {
	q, e := core.ReadListQuery(c.P, "", 50)
	if e != nil {
		return nil, e
	}
	groupID := c.P["ScalingGroupId"]
	ids, names, aris := idFilter(c.P, "ScalingRuleId"), idFilter(c.P, "ScalingRuleName"), idFilter(c.P, "ScalingRuleAri")
	var match []*scalingRule
	for _, r := range c.st.Rules {
		if r.Region != c.Region || groupID != "" && r.Group != groupID {
			continue
		}
		if _, e := c.group(r.Group); e != nil {
			continue
		}
		if len(ids) > 0 && !slices.Contains(ids, r.ID) || len(names) > 0 && !slices.Contains(names, r.Name) || len(aris) > 0 && !slices.Contains(aris, ruleAri(r)) {
			continue
		}
		match = append(match, r)
	}
	resp := &esssdk.DescribeScalingRulesResponse{RequestId: c.ReqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(match)}
	resp.ScalingRules.ScalingRule = []esssdk.ScalingRule{}
	for _, r := range core.PageOf(q, match, func(r *scalingRule) string { return r.ID }) {
		g := c.st.Groups[r.Group]
		resp.ScalingRules.ScalingRule = append(resp.ScalingRules.ScalingRule, esssdk.ScalingRule{
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
func (c *call) scale(g *scalingGroup, typ string, value, minAdj int, cause string) (*scalingActivity, *core.Error) {
	if !g.Active {
		return nil, errGroupStatus(g, groupState(g))
	}
	if a := c.inProgress(g); a != nil {
		return nil, core.Errf(400, "ScalingActivityInProgress", "Scaling activity %s of scaling group %s is in progress.", a.ID, g.ID)
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

func executeScalingRule(c *call) (any, *core.Error) {
	c.purgeESS()
	ari, e := c.P.Required("ScalingRuleAri")
	if e != nil {
		return nil, e
	}
	var r *scalingRule
	for _, x := range c.st.Rules {
		if x.Region == c.Region && ruleAri(x) == ari {
			r = x
		}
	}
	if r == nil {
		return nil, core.ErrNotFound("InvalidScalingRuleAri.NotFound", ari)
	}
	g, e := c.group(r.Group)
	if e != nil {
		return nil, e
	}
	a, e := c.scale(g, r.AdjType, r.AdjValue, r.MinAdj, fmt.Sprintf("A user executed scaling rule %q.", r.Name))
	if e != nil {
		return nil, e
	}
	return &esssdk.ExecuteScalingRuleResponse{RequestId: c.ReqID, ScalingActivityId: a.ID}, nil
}

func scaleWithAdjustment(c *call) (any, *core.Error) {
	g, e := c.adjustedGroup()
	if e != nil {
		return nil, e
	}
	typ, value, e := readAdjustment(c.P, "", 0)
	if e != nil {
		return nil, e
	}
	minAdj, e := c.P.Int("MinAdjustmentMagnitude", 0)
	if e != nil {
		return nil, e
	}
	a, e := c.scale(g, typ, value, minAdj, fmt.Sprintf("A user requested %s %d.", typ, value))
	if e != nil {
		return nil, e
	}
	return &esssdk.ScaleWithAdjustmentResponse{RequestId: c.ReqID, ScalingActivityId: a.ID, ActivityType: "ScaleOut"}, nil
}
