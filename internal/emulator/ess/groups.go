package ess

import (
	"cmp"
	"slices"
	"sort"
	"time"

	esssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ess"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

func init() {
	core.Register(Version, "CreateScalingGroup", core.Route{Fn: handle(createScalingGroup), Write: true, Idem: true})
	core.Register(Version, "DescribeScalingGroups", core.Route{Fn: handle(describeScalingGroups)})
	core.Register(Version, "ModifyScalingGroup", core.Route{Fn: handle(modifyScalingGroup), Write: true})
	core.Register(Version, "DeleteScalingGroup", core.Route{Fn: handle(deleteScalingGroup), Write: true})
	core.Register(Version, "EnableScalingGroup", core.Route{Fn: handle(enableScalingGroup), Write: true})
	core.Register(Version, "DisableScalingGroup", core.Route{Fn: handle(disableScalingGroup), Write: true})
}

// Limits of a scaling group (MaxSize up to the MaxNumberOfMaxSize of limits.go).
const (
	essMaxVSwitches    = 8
	essDefaultCooldown = 300
)

func errGroupNotFound(id string) *core.Error {
	return core.Errf(404, "InvalidScalingGroupId.NotFound", "The specified scaling group %q does not exist.", id)
}

func errGroupStatus(g *scalingGroup, state string) *core.Error {
	return core.Errf(400, "IncorrectScalingGroupStatus", "The current status (%s) of scaling group %s does not support this action.", state, g.ID)
}

// groupState is the LifecycleState: Deleting from DeleteScalingGroup until the group is gone.
func groupState(g *scalingGroup) string {
	switch {
	case g.DeletedAt != 0:
		return "Deleting"
	case g.Active:
		return "Active"
	}
	return "Inactive"
}

// group finds a group of the caller's region that is not gone.
func (c *call) group(id string) (*scalingGroup, *core.Error) {
	g := c.st.Groups[id]
	if g == nil || g.Region != c.Region || c.groupGone(g) {
		return nil, errGroupNotFound(id)
	}
	return g, nil
}

// writableGroup is group for the actions that change one: a group being deleted takes none.
func (c *call) writableGroup() (*scalingGroup, *core.Error) {
	id, e := c.P.Required("ScalingGroupId")
	if e != nil {
		return nil, e
	}
	g, e := c.group(id)
	if e != nil {
		return nil, e
	}
	if g.DeletedAt != 0 {
		return nil, errGroupStatus(g, "Deleting")
	}
	return g, nil
}

// purgeESS drops groups whose deletion has settled, with their configurations, rules and
// activities, and runs the health check of the groups left (health.go). Called by every ESS
// write: the emulator settles ESS's background work when it is next asked to change something.
func (c *call) purgeESS() {
	defer c.checkHealth()
	st := c.st
	for id, g := range st.Groups {
		if !c.groupGone(g) {
			continue
		}
		delete(st.Groups, id)
		for cid, cf := range st.Configs {
			if cf.Group == id {
				delete(st.Configs, cid)
			}
		}
		for rid, r := range st.Rules {
			if r.Group == id {
				delete(st.Rules, rid)
			}
		}
		for aid, a := range st.Activities {
			if a.Group == id {
				delete(st.Activities, aid)
			}
		}
	}
}

// sizeParams reads MinSize/MaxSize/DesiredCapacity over the group's current values.
func sizeParams(p core.Params, g *scalingGroup, essMaxSize int) *core.Error {
	var e *core.Error
	if g.Min, e = p.Int("MinSize", g.Min); e != nil {
		return e
	}
	if g.Max, e = p.Int("MaxSize", g.Max); e != nil {
		return e
	}
	if g.Desired, e = p.Int("DesiredCapacity", g.Desired); e != nil {
		return e
	}
	if g.Min < 0 || g.Min > essMaxSize {
		return core.Errf(400, "InvalidParameter.MinSize", "MinSize %d must be 0-%d.", g.Min, essMaxSize)
	}
	if g.Max < 0 || g.Max > essMaxSize {
		return core.Errf(400, "InvalidParameter.MaxSize", "MaxSize %d must be 0-%d.", g.Max, essMaxSize)
	}
	if g.Min > g.Max {
		return core.Errf(400, "InvalidParameter.Conflict", "MinSize %d must not exceed MaxSize %d.", g.Min, g.Max)
	}
	if g.Desired >= 0 && p["DesiredCapacity"] != "" && (g.Desired < g.Min || g.Desired > g.Max) {
		return core.Errf(400, "InvalidParameter.Conflict", "DesiredCapacity %d must be within MinSize %d and MaxSize %d.", g.Desired, g.Min, g.Max)
	}
	return nil
}

// spotParams reads the group's on-demand/spot mix.
func spotParams(p core.Params, g *scalingGroup) *core.Error {
	var e *core.Error
	if g.OnDemandBase, e = p.Int("OnDemandBaseCapacity", g.OnDemandBase); e != nil {
		return e
	}
	if g.OnDemandPct, e = p.Int("OnDemandPercentageAboveBaseCapacity", g.OnDemandPct); e != nil {
		return e
	}
	if g.OnDemandBase < 0 || g.OnDemandBase > 1000 {
		return core.ErrInvalid("OnDemandBaseCapacity", "must be 0-1000, got %d", g.OnDemandBase)
	}
	if g.OnDemandPct < 0 || g.OnDemandPct > 100 {
		return core.ErrInvalid("OnDemandPercentageAboveBaseCapacity", "must be 0-100, got %d", g.OnDemandPct)
	}
	if g.CompensateOnDemand, e = p.Bool("CompensateWithOnDemand", g.CompensateOnDemand); e != nil {
		return e
	}
	if g.SpotRemedy, e = p.Bool("SpotInstanceRemedy", g.SpotRemedy); e != nil {
		return e
	}
	return nil
}

func createScalingGroup(c *call) (any, *core.Error) {
	c.purgeESS()
	p := c.P
	g := &scalingGroup{Region: c.Region, Desired: -1, Cooldown: essDefaultCooldown, OnDemandPct: 100,
		MultiAZ: cmp.Or(p["MultiAZPolicy"], "PRIORITY"), Created: c.Now.UnixNano()}
	if _, ok := p["MinSize"]; !ok {
		return nil, core.ErrMissing("MinSize")
	}
	if _, ok := p["MaxSize"]; !ok {
		return nil, core.ErrMissing("MaxSize")
	}
	if e := sizeParams(p, g, c.st.EffectiveLimits().MaxSize); e != nil {
		return nil, e
	}
	if !slices.Contains([]string{"PRIORITY", "BALANCE", "COST_OPTIMIZED", "COMPOSABLE"}, g.MultiAZ) {
		return nil, core.ErrInvalid("MultiAZPolicy", "must be PRIORITY, BALANCE, COST_OPTIMIZED or COMPOSABLE")
	}
	if e := spotParams(p, g); e != nil {
		return nil, e
	}
	var e *core.Error
	if g.Cooldown, e = p.Int("DefaultCooldown", g.Cooldown); e != nil {
		return nil, e
	}
	vsws := p.List("VSwitchIds")
	if len(vsws) == 0 && p["VSwitchId"] != "" {
		vsws = []string{p["VSwitchId"]}
	}
	if len(vsws) == 0 {
		return nil, core.ErrMissing("VSwitchIds.1")
	}
	if len(vsws) > essMaxVSwitches {
		return nil, core.ErrInvalid("VSwitchIds", "at most %d vSwitches, got %d", essMaxVSwitches, len(vsws))
	}
	for _, id := range vsws {
		v := emuvpc.StoreIn(c.Stores).VSwitches[id]
		if v == nil || v.Region != c.Region {
			return nil, core.ErrNotFound("InvalidVSwitchId.NotFound", id)
		}
		if g.VpcID == "" {
			g.VpcID = v.VpcID
		} else if v.VpcID != g.VpcID {
			return nil, core.Errf(400, "InvalidVSwitchId.VpcMismatch", "The vSwitches of a scaling group must be in one VPC: %s is in %s, not %s.", id, v.VpcID, g.VpcID)
		}
	}
	g.VSwitches = vsws
	g.Removal = p.List("RemovalPolicy")
	if len(g.Removal) == 0 {
		g.Removal = []string{"OldestScalingConfiguration", "OldestInstance"}
	}
	if g.Tags, e = p.Tags("Tag"); e != nil {
		return nil, e
	}
	g.ID = c.Env.NewID("asg")
	g.Name = cmp.Or(p["ScalingGroupName"], g.ID)
	for _, o := range c.st.Groups {
		if o.Region == c.Region && o.Name == g.Name && o.DeletedAt == 0 {
			return nil, core.Errf(400, "ScalingGroup.Duplicate", "A scaling group named %q already exists.", g.Name)
		}
	}
	g.Modified = g.Created
	c.st.Groups[g.ID] = g
	return &esssdk.CreateScalingGroupResponse{RequestId: c.ReqID, ScalingGroupId: g.ID}, nil
}

func modifyScalingGroup(c *call) (any, *core.Error) {
	c.purgeESS()
	g, e := c.writableGroup()
	if e != nil {
		return nil, e
	}
	ng := *g
	if e := sizeParams(c.P, &ng, c.st.EffectiveLimits().MaxSize); e != nil {
		return nil, e
	}
	if e := spotParams(c.P, &ng); e != nil {
		return nil, e
	}
	if ng.Cooldown, e = c.P.Int("DefaultCooldown", ng.Cooldown); e != nil {
		return nil, e
	}
	if v := c.P["ScalingGroupName"]; v != "" {
		ng.Name = v
	}
	if v := c.P["MultiAZPolicy"]; v != "" {
		ng.MultiAZ = v
	}
	if disable, e := c.P.Bool("DisableDesiredCapacity", false); e != nil {
		return nil, e
	} else if disable {
		ng.Desired = -1
	}
	if id := c.P["ActiveScalingConfigurationId"]; id != "" {
		cf := c.st.Configs[id]
		if cf == nil || cf.Group != g.ID {
			return nil, core.ErrNotFound("InvalidScalingConfigurationId.NotFound", id)
		}
		ng.Config = id
	}
	if vsws := c.P.List("VSwitchIds"); len(vsws) > 0 {
		for _, id := range vsws {
			v := emuvpc.StoreIn(c.Stores).VSwitches[id]
			if v == nil || v.Region != c.Region {
				return nil, core.ErrNotFound("InvalidVSwitchId.NotFound", id)
			}
			if v.VpcID != g.VpcID {
				return nil, core.Errf(400, "InvalidVSwitchId.VpcMismatch", "vSwitch %s is in %s; the scaling group's VPC is %s.", id, v.VpcID, g.VpcID)
			}
		}
		ng.VSwitches = vsws
	}
	ng.Modified = c.Now.UnixNano()
	*g = ng
	// Bounds apply at once: a group now outside them is brought within by an activity.
	if g.Active && c.inProgress(g) == nil {
		total := len(c.liveMembers(g))
		target := min(max(total, g.Min), g.Max)
		if g.Desired >= 0 {
			target = g.Desired
		}
		if target != total {
			c.startActivity(g, target, "A scaling group's size bounds were modified.")
		}
	}
	return &esssdk.ModifyScalingGroupResponse{RequestId: c.ReqID}, nil
}

func enableScalingGroup(c *call) (any, *core.Error) {
	c.purgeESS()
	g, e := c.writableGroup()
	if e != nil {
		return nil, e
	}
	if g.Active {
		return nil, errGroupStatus(g, "Active")
	}
	id := c.P["ActiveScalingConfigurationId"]
	if id == "" {
		id = c.P["ScalingConfigurationId"]
	}
	if id == "" {
		id = g.Config
	}
	if id == "" {
		// The first configuration created for the group becomes its active one.
		var ids []string
		for _, cf := range c.st.Configs {
			if cf.Group == g.ID {
				ids = append(ids, cf.ID)
			}
		}
		sort.Strings(ids)
		if len(ids) == 0 {
			return nil, core.Errf(400, "IncorrectScalingGroupStatus", "Scaling group %s has no scaling configuration: create one before enabling it.", g.ID)
		}
		id = ids[0]
	}
	cf := c.st.Configs[id]
	if cf == nil || cf.Group != g.ID {
		return nil, core.ErrNotFound("InvalidScalingConfigurationId.NotFound", id)
	}
	g.Config, g.Active, g.Modified = id, true, c.Now.UnixNano()
	total := len(c.liveMembers(g))
	target := max(total, g.Min)
	if g.Desired >= 0 {
		target = g.Desired
	}
	if target != total {
		c.startActivity(g, target, "The scaling group was enabled below its minimum (or desired) size.")
	}
	return &esssdk.EnableScalingGroupResponse{RequestId: c.ReqID}, nil
}

func disableScalingGroup(c *call) (any, *core.Error) {
	c.purgeESS()
	g, e := c.writableGroup()
	if e != nil {
		return nil, e
	}
	g.Active, g.Modified = false, c.Now.UnixNano()
	return &esssdk.DisableScalingGroupResponse{RequestId: c.ReqID}, nil
}

// deleteScalingGroup: without ForceDelete a group holding instances (or running an activity)
// is refused; with it, the group's auto-created instances are released with it.
func deleteScalingGroup(c *call) (any, *core.Error) {
	c.purgeESS()
	g, e := c.writableGroup()
	if e != nil {
		return nil, e
	}
	force, e := c.P.Bool("ForceDelete", false)
	if e != nil {
		return nil, e
	}
	members := c.liveMembers(g)
	if !force {
		if len(members) > 0 {
			return nil, core.Errf(400, "InstancesExistInScalingGroup", "Scaling group %s still has %d instance(s): remove them or set ForceDelete=true.", g.ID, len(members))
		}
		if c.inProgress(g) != nil {
			return nil, core.Errf(400, "ScalingActivityInProgress", "A scaling activity of scaling group %s is in progress.", g.ID)
		}
	}
	for _, m := range members {
		if m.Creation == "AutoCreated" {
			c.release(m.Instance)
		}
	}
	g.Members, g.Active, g.DeletedAt = nil, false, c.Now.UnixNano()
	return &esssdk.DeleteScalingGroupResponse{RequestId: c.ReqID}, nil
}

func describeScalingGroups(c *call) (any, *core.Error) {
	q, e := core.ReadListQuery(c.P, "", 50)
	if e != nil {
		return nil, e
	}
	ids := c.P.List("ScalingGroupId")
	if v := c.P["ScalingGroupId"]; v != "" {
		ids = append(ids, v)
	}
	names := c.P.List("ScalingGroupName")
	if v := c.P["ScalingGroupName"]; v != "" {
		names = append(names, v)
	}
	var match []*scalingGroup
	for _, g := range c.st.Groups {
		if g.Region != c.Region || c.groupGone(g) || !core.MatchTags(g.Tags, q.Tags) {
			continue
		}
		if len(ids) > 0 && !slices.Contains(ids, g.ID) || len(names) > 0 && !slices.Contains(names, g.Name) {
			continue
		}
		match = append(match, g)
	}
	resp := &esssdk.DescribeScalingGroupsResponse{RequestId: c.ReqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(match)}
	resp.ScalingGroups.ScalingGroup = []esssdk.ScalingGroup{}
	for _, g := range core.PageOf(q, match, func(g *scalingGroup) string { return g.ID }) {
		resp.ScalingGroups.ScalingGroup = append(resp.ScalingGroups.ScalingGroup, c.vendorGroup(g))
	}
	return resp, nil
}

// vendorGroup builds the SDK's ScalingGroup: capacities are counted from the members' status.
func (c *call) vendorGroup(g *scalingGroup) esssdk.ScalingGroup {
	pending, active, standby, spot := 0, 0, 0, 0
	members := c.liveMembers(g)
	for _, m := range members {
		in, _ := c.instance(m.Instance)
		if m.Standby {
			standby++
		} else if in.Status == "Running" {
			active++
		} else {
			pending++
		}
		if isSpot(in.Spot) {
			spot++
		}
	}
	out := esssdk.ScalingGroup{
		ScalingGroupId: g.ID, ScalingGroupName: g.Name, RegionId: g.Region, VpcId: g.VpcID,
		MinSize: g.Min, MaxSize: g.Max, DefaultCooldown: g.Cooldown, LifecycleState: groupState(g),
		ActiveScalingConfigurationId: g.Config, MultiAZPolicy: g.MultiAZ, GroupType: "ECS", HealthCheckType: "ECS",
		ScalingPolicy: "recycle", AllocationStrategy: "priority", SpotAllocationStrategy: "priority",
		OnDemandBaseCapacity: g.OnDemandBase, OnDemandPercentageAboveBaseCapacity: g.OnDemandPct,
		CompensateWithOnDemand: g.CompensateOnDemand, SpotInstanceRemedy: g.SpotRemedy,
		CreationTime:     time.Unix(0, g.Created).UTC().Format("2006-01-02T15:04Z"),
		ModificationTime: time.Unix(0, g.Modified).UTC().Format("2006-01-02T15:04Z"),
		TotalCapacity:    len(members), TotalInstanceCount: len(members), ActiveCapacity: active, PendingCapacity: pending,
		StandbyCapacity: standby, SpotCapacity: spot, EnableDesiredCapacity: g.Desired >= 0,
	}
	if g.Desired >= 0 {
		out.DesiredCapacity = g.Desired
	}
	if len(g.VSwitches) > 0 {
		out.VSwitchId = g.VSwitches[0]
	}
	out.VSwitchIds.VSwitchId = append([]string{}, g.VSwitches...)
	out.RemovalPolicies.RemovalPolicy = append([]string{}, g.Removal...)
	// A group's tags answer as TagKey and TagValue (and Propagate), unlike a configuration's Key
	// and Value: the DescribeScalingGroups response model
	// (https://www.alibabacloud.com/help/en/auto-scaling/developer-reference/api-ess-2014-08-28-describescalinggroups,
	// and alibabacloud-go/ess-20220222's DescribeScalingGroupsResponseBodyScalingGroupsTags).
	for _, t := range g.Tags {
		out.Tags.Tag = append(out.Tags.Tag, esssdk.Tag{TagKey: t.K, TagValue: t.V})
	}
	return out
}

// liveMembers are the group's instances that still exist; an instance released out of band (by
// DeleteInstances) is no longer the group's.
func (c *call) liveMembers(g *scalingGroup) []*scalingMember {
	out := make([]*scalingMember, 0, len(g.Members))
	for _, m := range g.Members {
		if _, ok := c.instance(m.Instance); ok {
			out = append(out, m)
		}
	}
	return out
}
