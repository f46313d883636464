package emulator

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"
)

func init() {
	register(versionESS, "CreateScalingGroup", route{fn: createScalingGroup, write: true, idem: true})
	register(versionESS, "DescribeScalingGroups", route{fn: describeScalingGroups})
	register(versionESS, "ModifyScalingGroup", route{fn: modifyScalingGroup, write: true})
	register(versionESS, "DeleteScalingGroup", route{fn: deleteScalingGroup, write: true})
	register(versionESS, "EnableScalingGroup", route{fn: enableScalingGroup, write: true})
	register(versionESS, "DisableScalingGroup", route{fn: disableScalingGroup, write: true})
}

// Limits of a scaling group (MaxSize 0-2000 with the default quota).
const (
	essMaxSize         = 2000
	essMaxVSwitches    = 8
	essDefaultCooldown = 300
)

func errGroupNotFound(id string) *apiError {
	return errf(404, "InvalidScalingGroupId.NotFound", "The specified scaling group %q does not exist.", id)
}

func errGroupStatus(g *scalingGroup, state string) *apiError {
	return errf(400, "IncorrectScalingGroupStatus", "The current status (%s) of scaling group %s does not support this action.", state, g.ID)
}

// groupState is the LifecycleState: Deleting for half the boot time after DeleteScalingGroup,
// then gone.
func (s *Server) groupState(g *scalingGroup) string {
	switch {
	case g.DeletedAt != 0:
		return "Deleting"
	case g.Active:
		return "Active"
	}
	return "Inactive"
}

// groupGone says whether a deleted group has finished deleting.
func (s *Server) groupGone(g *scalingGroup, now time.Time) bool {
	return g.DeletedAt != 0 && time.Duration(now.UnixNano()-g.DeletedAt) >= s.cfg.BootTime/2
}

// group finds a group of the caller's region that is not gone.
func (c *call) group(id string) (*scalingGroup, *apiError) {
	g := c.s.db.ESS.Groups[id]
	if g == nil || g.Region != c.region || c.s.groupGone(g, c.now) {
		return nil, errGroupNotFound(id)
	}
	return g, nil
}

// writableGroup is group for the actions that change one: a group being deleted takes none.
func (c *call) writableGroup() (*scalingGroup, *apiError) {
	id, e := c.p.Required("ScalingGroupId")
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
// activities. Called by every ESS write.
func (c *call) purgeESS() {
	st := c.s.db.ESS
	for id, g := range st.Groups {
		if !c.s.groupGone(g, c.now) {
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
func sizeParams(p params, g *scalingGroup) *apiError {
	var e *apiError
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
		return errf(400, "InvalidParameter.MinSize", "MinSize %d must be 0-%d.", g.Min, essMaxSize)
	}
	if g.Max < 0 || g.Max > essMaxSize {
		return errf(400, "InvalidParameter.MaxSize", "MaxSize %d must be 0-%d.", g.Max, essMaxSize)
	}
	if g.Min > g.Max {
		return errf(400, "InvalidParameter.Conflict", "MinSize %d must not exceed MaxSize %d.", g.Min, g.Max)
	}
	if g.Desired >= 0 && p["DesiredCapacity"] != "" && (g.Desired < g.Min || g.Desired > g.Max) {
		return errf(400, "InvalidParameter.Conflict", "DesiredCapacity %d must be within MinSize %d and MaxSize %d.", g.Desired, g.Min, g.Max)
	}
	return nil
}

// spotParams reads the group's on-demand/spot mix.
func spotParams(p params, g *scalingGroup) *apiError {
	var e *apiError
	if g.OnDemandBase, e = p.Int("OnDemandBaseCapacity", g.OnDemandBase); e != nil {
		return e
	}
	if g.OnDemandPct, e = p.Int("OnDemandPercentageAboveBaseCapacity", g.OnDemandPct); e != nil {
		return e
	}
	if g.OnDemandBase < 0 || g.OnDemandBase > 1000 {
		return errInvalid("OnDemandBaseCapacity", "must be 0-1000, got %d", g.OnDemandBase)
	}
	if g.OnDemandPct < 0 || g.OnDemandPct > 100 {
		return errInvalid("OnDemandPercentageAboveBaseCapacity", "must be 0-100, got %d", g.OnDemandPct)
	}
	if g.CompensateOnDemand, e = p.Bool("CompensateWithOnDemand", g.CompensateOnDemand); e != nil {
		return e
	}
	if g.SpotRemedy, e = p.Bool("SpotInstanceRemedy", g.SpotRemedy); e != nil {
		return e
	}
	return nil
}

func createScalingGroup(c *call) (any, *apiError) {
	c.purgeESS()
	d, p := c.s.db, c.p
	g := &scalingGroup{Region: c.region, Desired: -1, Cooldown: essDefaultCooldown, OnDemandPct: 100,
		MultiAZ: orDefault(p["MultiAZPolicy"], "PRIORITY"), Created: c.now.UnixNano()}
	if _, ok := p["MinSize"]; !ok {
		return nil, errMissing("MinSize")
	}
	if _, ok := p["MaxSize"]; !ok {
		return nil, errMissing("MaxSize")
	}
	if e := sizeParams(p, g); e != nil {
		return nil, e
	}
	if !contains([]string{"PRIORITY", "BALANCE", "COST_OPTIMIZED", "COMPOSABLE"}, g.MultiAZ) {
		return nil, errInvalid("MultiAZPolicy", "must be PRIORITY, BALANCE, COST_OPTIMIZED or COMPOSABLE")
	}
	if e := spotParams(p, g); e != nil {
		return nil, e
	}
	var e *apiError
	if g.Cooldown, e = p.Int("DefaultCooldown", g.Cooldown); e != nil {
		return nil, e
	}
	vsws := p.List("VSwitchIds")
	if len(vsws) == 0 && p["VSwitchId"] != "" {
		vsws = []string{p["VSwitchId"]}
	}
	if len(vsws) == 0 {
		return nil, errMissing("VSwitchIds.1")
	}
	if len(vsws) > essMaxVSwitches {
		return nil, errInvalid("VSwitchIds", "at most %d vSwitches, got %d", essMaxVSwitches, len(vsws))
	}
	for _, id := range vsws {
		v := d.network().VSwitches[id]
		if v == nil || v.Region != c.region {
			return nil, errNotFound("InvalidVSwitchId.NotFound", id)
		}
		if g.VpcID == "" {
			g.VpcID = v.VpcID
		} else if v.VpcID != g.VpcID {
			return nil, errf(400, "InvalidVSwitchId.VpcMismatch", "The vSwitches of a scaling group must be in one VPC: %s is in %s, not %s.", id, v.VpcID, g.VpcID)
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
	g.ID = d.newID("asg")
	g.Name = orDefault(p["ScalingGroupName"], g.ID)
	for _, o := range d.ESS.Groups {
		if o.Region == c.region && o.Name == g.Name && o.DeletedAt == 0 {
			return nil, errf(400, "ScalingGroup.Duplicate", "A scaling group named %q already exists.", g.Name)
		}
	}
	g.Modified = g.Created
	d.ESS.Groups[g.ID] = g
	return &ess.CreateScalingGroupResponse{RequestId: c.reqID, ScalingGroupId: g.ID}, nil
}

func modifyScalingGroup(c *call) (any, *apiError) {
	c.purgeESS()
	g, e := c.writableGroup()
	if e != nil {
		return nil, e
	}
	ng := *g
	if e := sizeParams(c.p, &ng); e != nil {
		return nil, e
	}
	if e := spotParams(c.p, &ng); e != nil {
		return nil, e
	}
	if ng.Cooldown, e = c.p.Int("DefaultCooldown", ng.Cooldown); e != nil {
		return nil, e
	}
	if v := c.p["ScalingGroupName"]; v != "" {
		ng.Name = v
	}
	if v := c.p["MultiAZPolicy"]; v != "" {
		ng.MultiAZ = v
	}
	if disable, e := c.p.Bool("DisableDesiredCapacity", false); e != nil {
		return nil, e
	} else if disable {
		ng.Desired = -1
	}
	if id := c.p["ActiveScalingConfigurationId"]; id != "" {
		cf := c.s.db.ESS.Configs[id]
		if cf == nil || cf.Group != g.ID {
			return nil, errNotFound("InvalidScalingConfigurationId.NotFound", id)
		}
		ng.Config = id
	}
	if vsws := c.p.List("VSwitchIds"); len(vsws) > 0 {
		for _, id := range vsws {
			v := c.s.db.network().VSwitches[id]
			if v == nil || v.Region != c.region {
				return nil, errNotFound("InvalidVSwitchId.NotFound", id)
			}
			if v.VpcID != g.VpcID {
				return nil, errf(400, "InvalidVSwitchId.VpcMismatch", "vSwitch %s is in %s; the scaling group's VPC is %s.", id, v.VpcID, g.VpcID)
			}
		}
		ng.VSwitches = vsws
	}
	ng.Modified = c.now.UnixNano()
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
	return &ess.ModifyScalingGroupResponse{RequestId: c.reqID}, nil
}

func enableScalingGroup(c *call) (any, *apiError) {
	c.purgeESS()
	g, e := c.writableGroup()
	if e != nil {
		return nil, e
	}
	if g.Active {
		return nil, errGroupStatus(g, "Active")
	}
	id := c.p["ActiveScalingConfigurationId"]
	if id == "" {
		id = c.p["ScalingConfigurationId"]
	}
	if id == "" {
		id = g.Config
	}
	if id == "" {
		// The first configuration created for the group becomes its active one.
		var ids []string
		for _, cf := range c.s.db.ESS.Configs {
			if cf.Group == g.ID {
				ids = append(ids, cf.ID)
			}
		}
		sort.Strings(ids)
		if len(ids) == 0 {
			return nil, errf(400, "IncorrectScalingGroupStatus", "Scaling group %s has no scaling configuration: create one before enabling it.", g.ID)
		}
		id = ids[0]
	}
	cf := c.s.db.ESS.Configs[id]
	if cf == nil || cf.Group != g.ID {
		return nil, errNotFound("InvalidScalingConfigurationId.NotFound", id)
	}
	g.Config, g.Active, g.Modified = id, true, c.now.UnixNano()
	total := len(c.liveMembers(g))
	target := max(total, g.Min)
	if g.Desired >= 0 {
		target = g.Desired
	}
	if target != total {
		c.startActivity(g, target, "The scaling group was enabled below its minimum (or desired) size.")
	}
	return &ess.EnableScalingGroupResponse{RequestId: c.reqID}, nil
}

func disableScalingGroup(c *call) (any, *apiError) {
	c.purgeESS()
	g, e := c.writableGroup()
	if e != nil {
		return nil, e
	}
	g.Active, g.Modified = false, c.now.UnixNano()
	return &ess.DisableScalingGroupResponse{RequestId: c.reqID}, nil
}

// deleteScalingGroup: without ForceDelete a group holding instances (or running an activity)
// is refused; with it, the group's auto-created instances are released with it.
func deleteScalingGroup(c *call) (any, *apiError) {
	c.purgeESS()
	g, e := c.writableGroup()
	if e != nil {
		return nil, e
	}
	force, e := c.p.Bool("ForceDelete", false)
	if e != nil {
		return nil, e
	}
	members := c.liveMembers(g)
	if !force {
		if len(members) > 0 {
			return nil, errf(400, "InstancesExistInScalingGroup", "Scaling group %s still has %d instance(s): remove them or set ForceDelete=true.", g.ID, len(members))
		}
		if c.inProgress(g) != nil {
			return nil, errf(400, "ScalingActivityInProgress", "A scaling activity of scaling group %s is in progress.", g.ID)
		}
	}
	for _, m := range members {
		if in := c.s.db.Instances[m.Instance]; in != nil && m.Creation == "AutoCreated" {
			c.s.db.removeInstance(in)
		}
	}
	g.Members, g.Active, g.DeletedAt = nil, false, c.now.UnixNano()
	return &ess.DeleteScalingGroupResponse{RequestId: c.reqID}, nil
}

func describeScalingGroups(c *call) (any, *apiError) {
	q, e := c.listQuery("", 50)
	if e != nil {
		return nil, e
	}
	ids := c.p.List("ScalingGroupId")
	if v := c.p["ScalingGroupId"]; v != "" {
		ids = append(ids, v)
	}
	names := c.p.List("ScalingGroupName")
	if v := c.p["ScalingGroupName"]; v != "" {
		names = append(names, v)
	}
	var match []*scalingGroup
	for _, g := range c.s.db.ESS.Groups {
		if g.Region != c.region || c.s.groupGone(g, c.now) || !matchTags(g.Tags, q.Tags) {
			continue
		}
		if len(ids) > 0 && !contains(ids, g.ID) || len(names) > 0 && !contains(names, g.Name) {
			continue
		}
		match = append(match, g)
	}
	resp := &ess.DescribeScalingGroupsResponse{RequestId: c.reqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(match)}
	resp.ScalingGroups.ScalingGroup = []ess.ScalingGroup{}
	for _, g := range pageOf(q, match, func(g *scalingGroup) string { return g.ID }) {
		resp.ScalingGroups.ScalingGroup = append(resp.ScalingGroups.ScalingGroup, c.vendorGroup(g))
	}
	return resp, nil
}

// vendorGroup builds the SDK's ScalingGroup: capacities are counted from the members' status.
func (c *call) vendorGroup(g *scalingGroup) ess.ScalingGroup {
	pending, active, spot := 0, 0, 0
	members := c.liveMembers(g)
	for _, m := range members {
		in := c.s.db.Instances[m.Instance]
		if c.s.instanceStatus(in, c.now) == "Running" {
			active++
		} else {
			pending++
		}
		if isSpot(in.Spot) {
			spot++
		}
	}
	out := ess.ScalingGroup{
		ScalingGroupId: g.ID, ScalingGroupName: g.Name, RegionId: g.Region, VpcId: g.VpcID,
		MinSize: g.Min, MaxSize: g.Max, DefaultCooldown: g.Cooldown, LifecycleState: c.s.groupState(g),
		ActiveScalingConfigurationId: g.Config, MultiAZPolicy: g.MultiAZ, GroupType: "ECS", HealthCheckType: "ECS",
		ScalingPolicy: "recycle", AllocationStrategy: "priority", SpotAllocationStrategy: "priority",
		OnDemandBaseCapacity: g.OnDemandBase, OnDemandPercentageAboveBaseCapacity: g.OnDemandPct,
		CompensateWithOnDemand: g.CompensateOnDemand, SpotInstanceRemedy: g.SpotRemedy,
		CreationTime:     time.Unix(0, g.Created).UTC().Format("2006-01-02T15:04Z"),
		ModificationTime: time.Unix(0, g.Modified).UTC().Format("2006-01-02T15:04Z"),
		TotalCapacity:    len(members), TotalInstanceCount: len(members), ActiveCapacity: active, PendingCapacity: pending,
		SpotCapacity: spot, EnableDesiredCapacity: g.Desired >= 0,
	}
	if g.Desired >= 0 {
		out.DesiredCapacity = g.Desired
	}
	if len(g.VSwitches) > 0 {
		out.VSwitchId = g.VSwitches[0]
	}
	out.VSwitchIds.VSwitchId = append([]string{}, g.VSwitches...)
	out.RemovalPolicies.RemovalPolicy = append([]string{}, g.Removal...)
	for _, t := range g.Tags {
		out.Tags.Tag = append(out.Tags.Tag, ess.Tag{Key: t.K, Value: t.V})
	}
	return out
}

// liveMembers are the group's instances that still exist; an instance released out of band (by
// DeleteInstances) is no longer the group's.
func (c *call) liveMembers(g *scalingGroup) []*scalingMember {
	out := make([]*scalingMember, 0, len(g.Members))
	for _, m := range g.Members {
		if c.s.db.Instances[m.Instance] != nil {
			out = append(out, m)
		}
	}
	return out
}

// essTagsJSON reads the Tags parameter of CreateScalingConfiguration: a JSON object of up to
// 20 key/value pairs.
func essTagsJSON(v string) ([]tag, *apiError) {
	if v == "" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, errInvalid("Tags", "must be a JSON object of string keys and values")
	}
	if len(m) > 20 {
		return nil, errf(400, "InvalidTagCount", "The number of tags (%d) exceeds 20.", len(m))
	}
	out := make([]tag, 0, len(m))
	for k, val := range m {
		if strings.TrimSpace(k) == "" {
			return nil, errInvalid("Tags", "a tag key is empty")
		}
		out = append(out, tag{K: k, V: val})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].K < out[j].K })
	return out, nil
}
