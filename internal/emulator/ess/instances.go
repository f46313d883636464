package ess

import (
	"cmp"
	"fmt"
	"slices"

	esssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ess"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "DescribeScalingInstances", core.Route{Fn: handle(describeScalingInstances)})
	core.Register(Version, "RemoveInstances", core.Route{Fn: handle(removeScalingInstances), Write: true, Idem: true})
}

func describeScalingInstances(c *call) (any, *core.Error) {
	q, e := core.ReadListQuery(c.P, "", 100)
	if e != nil {
		return nil, e
	}
	groupID := c.P["ScalingGroupId"]
	ids := idFilter(c.P, "InstanceId")
	lifecycle := c.P["LifecycleState"]
	var groups []*scalingGroup
	for _, g := range c.st.Groups {
		if g.Region == c.Region && !c.groupGone(g) && (groupID == "" || g.ID == groupID) {
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
			if len(ids) > 0 && !slices.Contains(ids, m.Instance) {
				continue
			}
			if v := c.P["ScalingConfigurationId"]; v != "" && m.Config != v {
				continue
			}
			if v := c.P["CreationType"]; v != "" && m.Creation != v {
				continue
			}
			if lifecycle != "" && c.memberState(m) != lifecycle {
				continue
			}
			match = append(match, row{g, m})
		}
	}
	resp := &esssdk.DescribeScalingInstancesResponse{RequestId: c.ReqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(match)}
	resp.ScalingInstances.ScalingInstance = []esssdk.ScalingInstance{}
	for _, r := range core.PageOf(q, match, func(r row) string { return r.m.Instance }) {
		in, _ := c.instance(r.m.Instance)
		resp.ScalingInstances.ScalingInstance = append(resp.ScalingInstances.ScalingInstance, esssdk.ScalingInstance{
			InstanceId: in.ID, ScalingGroupId: r.g.ID, ScalingConfigurationId: r.m.Config, ScalingActivityId: r.m.Activity,
			CreationType: r.m.Creation, LifecycleState: c.memberState(r.m), HealthStatus: healthStatus(r.m), ZoneId: in.Zone,
			InstanceType: in.Type, PrivateIpAddress: in.IP, SpotStrategy: cmp.Or(in.Spot, "NoSpot"),
			CreationTime: core.FormatTime(r.m.Added), CreatedTime: core.FormatTime(in.Created), WeightedCapacity: 1, WarmupState: "NoNeedWarmup",
		})
	}
	return resp, nil
}

// memberState is a member's LifecycleState: Standby once EnterStandby took it out of service,
// else Pending until its instance runs, then InService.
func (c *call) memberState(m *scalingMember) string {
	if m.Standby {
		return "Standby"
	}
	if in, ok := c.instance(m.Instance); ok && in.Status == "Running" {
		return "InService"
	}
	return "Pending"
}

// removeScalingInstances is RemoveInstances: the named instances leave the group (auto-created
// ones are released), never below MinSize.
func removeScalingInstances(c *call) (any, *core.Error) {
	c.purgeESS()
	g, e := c.writableGroup()
	if e != nil {
		return nil, e
	}
	if !g.Active {
		return nil, errGroupStatus(g, groupState(g))
	}
	out, e := c.namedMembers(g)
	if e != nil {
		return nil, e
	}
	decrease, e := c.P.Bool("DecreaseDesiredCapacity", true)
	if e != nil {
		return nil, e
	}
	members := c.liveMembers(g)
	if len(members)-len(out) < g.Min {
		return nil, core.Errf(400, "IncorrectCapacity.MinSize", "Removing %d instance(s) would leave scaling group %s with %d, below its MinSize %d.", len(out), g.ID, len(members)-len(out), g.Min)
	}
	a := c.newActivity(g, fmt.Sprintf("A user removed %d instance(s).", len(out)))
	c.removeMembers(g, a, out)
	a.Total = len(c.liveMembers(g))
	if decrease && g.Desired >= 0 {
		g.Desired = max(g.Desired-len(out), g.Min)
	}
	return &esssdk.RemoveInstancesResponse{RequestId: c.ReqID, ScalingActivityId: a.ID}, nil
}

// healthStatus is a member's HealthStatus: Unhealthy once SetInstanceHealth said so (the health
// check removes it at once, so a listing rarely shows it), else Healthy.
func healthStatus(m *scalingMember) string {
	if m.Unhealthy {
		return "Unhealthy"
	}
	return "Healthy"
}

// namedMembers are the group's members the request names in InstanceId.N (1 to essMaxStep of
// them), in that order; an instance that is not the group's is refused, naming it.
func (c *call) namedMembers(g *scalingGroup) ([]*scalingMember, *core.Error) {
	ids := c.P.List("InstanceId")
	if len(ids) == 0 {
		return nil, core.ErrMissing("InstanceId.1")
	}
	if len(ids) > essMaxStep {
		return nil, core.ErrInvalid("InstanceId", "at most %d instances, got %d", essMaxStep, len(ids))
	}
	members := c.liveMembers(g)
	out := make([]*scalingMember, 0, len(ids))
	for _, id := range ids {
		i := slices.IndexFunc(members, func(m *scalingMember) bool { return m.Instance == id })
		if i < 0 {
			return nil, core.Errf(404, "InvalidInstanceId.NotFound", "Instance %s is not in scaling group %s.", id, g.ID)
		}
		out = append(out, members[i])
	}
	return out, nil
}
