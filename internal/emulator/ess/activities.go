package ess

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	esssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ess"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "DescribeScalingActivities", core.Route{Fn: handle(describeScalingActivities)})
}

func (c *call) newActivity(g *scalingGroup, cause string) *scalingActivity {
	a := &scalingActivity{ID: c.Env.NewID("asa"), Group: g.ID, Region: g.Region, Cause: cause, Started: c.Now.UnixNano()}
	c.st.Activities[a.ID] = a
	return a
}

// startActivity brings the group to target instances: removing by the group's removal
// policies, or launching through RunInstances.
func (c *call) startActivity(g *scalingGroup, target int, cause string) *scalingActivity {
	a := c.newActivity(g, cause)
	members := c.liveMembers(g)
	if target < len(members) {
		// Scale-in never takes a Standby instance (standby.go).
		candidates := slices.DeleteFunc(slices.Clone(members), func(m *scalingMember) bool { return m.Standby })
		c.removeMembers(g, a, c.removalOrder(g, candidates)[:min(len(members)-target, len(candidates))])
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
	newest := slices.Contains(g.Removal, "NewestInstance")
	sort.SliceStable(out, func(i, j int) bool {
		if slices.Contains(g.Removal, "OldestScalingConfiguration") {
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

// removeMembers is activity a's scale-in: the members leave the group (released when the group
// created them), and a records them.
func (c *call) removeMembers(g *scalingGroup, a *scalingActivity, members []*scalingMember) {
	a.Want = len(members)
	a.Desc = fmt.Sprintf("Remove %d ECS instance(s)", a.Want)
	for _, m := range members {
		c.releaseMember(g, m)
		a.Destroyed = append(a.Destroyed, m.Instance)
	}
}

func (c *call) releaseMember(g *scalingGroup, m *scalingMember) {
	if m.Creation == "AutoCreated" {
		c.release(m.Instance)
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
	cf := c.st.Configs[g.Config]
	if cf == nil {
		a.ErrCode, a.ErrMsg = "InvalidScalingConfigurationId.NotFound", "The scaling group has no active scaling configuration."
		return
	}
	od := 0
	for _, m := range members {
		if in, _ := c.instance(m.Instance); !isSpot(in.Spot) {
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
				p := core.Params{"RegionId": c.Region, "InstanceType": typ, "VSwitchId": vsw, "SpotStrategy": spot,
					"Amount": strconv.Itoa(min(n-created, 100)), "MinAmount": "1"}
				for k, v := range cf.Launch {
					if k != "SpotStrategy" && !strings.HasPrefix(k, "SpotPriceLimit.") && !strings.HasPrefix(k, "NetworkInterfaces.") {
						p[k] = v
					}
				}
				addSecondaryInterfaces(p, cf.Launch)
				if spot == "SpotWithPriceLimit" {
					for _, m := range core.Params(cf.Launch).StructList("SpotPriceLimit") {
						if sameType(m["InstanceType"], typ) {
							p["SpotPriceLimit"] = m["PriceLimit"]
						}
					}
				}
				for i, t := range cf.Tags {
					p[fmt.Sprintf("Tag.%d.Key", i+1)] = t.K
					p[fmt.Sprintf("Tag.%d.Value", i+1)] = t.V
				}
				ids, e := core.ECS().Run(c.Call, p)
				if e != nil {
					a.ErrCode, a.ErrMsg = e.Code, e.Message
					if core.ECS().CapacityRefusal(e.Code) {
						break // the next type, then the next vSwitch
					}
					return created // the launch settings themselves are refused: no candidate helps
				}
				for _, id := range ids {
					g.Members = append(g.Members, &scalingMember{Instance: id, Config: cf.ID, Activity: a.ID, Creation: "AutoCreated", Added: c.Now.UnixNano()})
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

// sameType says whether two instance type names name one type, with or without "ecs.".
func sameType(a, b string) bool {
	na, _ := core.ECS().InstanceType(a)
	nb, _ := core.ECS().InstanceType(b)
	return na == nb
}

// addSecondaryInterfaces turns the configuration's secondary NetworkInterfaces.N (an eRDMA
// HighPerformance interface, say) into RunInstances' NetworkInterface.N; the primary interface
// is the instance's own, from the top-level vSwitch and security groups.
func addSecondaryInterfaces(p core.Params, launch map[string]string) {
	n := 0
	for _, m := range core.Params(launch).StructList("NetworkInterfaces") {
		if m["InstanceType"] == "Primary" {
			continue
		}
		n++
		pre := fmt.Sprintf("NetworkInterface.%d.", n)
		p[pre+"InstanceType"] = "Secondary"
		p[pre+"NetworkInterfaceTrafficMode"] = cmp.Or(m["NetworkInterfaceTrafficMode"], "Standard")
		if sg := m["SecurityGroupIds.1"]; sg != "" {
			p[pre+"SecurityGroupId"] = sg
		}
	}
}

// activityStatus: Rejected activities never ran; an activity is InProgress for the boot time
// and while an instance it created is not Running; then Successful, Warning or Failed by how
// many of the instances it was to add or remove it did.
func (c *call) activityStatus(a *scalingActivity) string {
	if a.Rejected != "" {
		return "Rejected"
	}
	if time.Duration(c.Now.UnixNano()-a.Started) < c.Env.BootTime() {
		return "InProgress"
	}
	for _, id := range a.Created {
		if in, ok := c.instance(id); ok && in.Status != "Running" {
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
	for _, a := range c.st.Activities {
		if a.Group == g.ID && c.activityStatus(a) == "InProgress" {
			return a
		}
	}
	return nil
}

func describeScalingActivities(c *call) (any, *core.Error) {
	q, e := core.ReadListQuery(c.P, "", 50)
	if e != nil {
		return nil, e
	}
	groupID := c.P["ScalingGroupId"]
	ids := idFilter(c.P, "ScalingActivityId")
	if groupID == "" && len(ids) == 0 {
		return nil, core.ErrMissing("ScalingGroupId")
	}
	status := c.P["StatusCode"]
	var match []*scalingActivity
	for _, a := range c.st.Activities {
		if a.Region != c.Region || groupID != "" && a.Group != groupID || len(ids) > 0 && !slices.Contains(ids, a.ID) {
			continue
		}
		if status != "" && c.activityStatus(a) != status {
			continue
		}
		match = append(match, a)
	}
	resp := &esssdk.DescribeScalingActivitiesResponse{RequestId: c.ReqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(match)}
	resp.ScalingActivities.ScalingActivity = []esssdk.ScalingActivity{}
	// Newest first, as the vendor lists them.
	sort.Slice(match, func(i, j int) bool { return match[i].ID > match[j].ID })
	lo, hi := core.PageBounds(len(match), q.Number, q.Size)
	for _, a := range match[lo:hi] {
		st := c.activityStatus(a)
		va := esssdk.ScalingActivity{
			ScalingActivityId: a.ID, ScalingGroupId: a.Group, Description: a.Desc, Cause: a.Cause,
			StartTime: core.FormatTime(a.Started), StatusCode: st, TotalCapacity: strconv.Itoa(a.Total),
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
			va.EndTime = core.FormatTime(a.Started + int64(c.Env.BootTime()))
			if st != "Successful" {
				va.StatusMessage = fmt.Sprintf("%d of %d instance(s): %s", len(a.Created)+len(a.Destroyed), a.Want, a.ErrMsg)
			}
		}
		resp.ScalingActivities.ScalingActivity = append(resp.ScalingActivities.ScalingActivity, va)
	}
	return resp, nil
}
