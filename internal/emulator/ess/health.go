package ess

import (
	"fmt"
	"sort"

	esssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ess"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// The health check of a scaling group of type ECS: Auto Scaling considers an instance that is
// not running (stopped, for one) unhealthy and removes it from the group, releasing it when the
// group created it, then launches replacements to keep the group's capacity
// (the health checks of https://alibabacloud.com/help/en/auto-scaling/user-guide/instance-lifecycles;
// https://alibabacloud.com/help/en/cloud-config/latest/ess-group-health-check: "If Auto Scaling
// considers an ECS instance unhealthy, Auto Scaling immediately removes the ECS instance from the
// scaling group or releases the ECS instance"; SetInstanceHealth,
// https://www.alibabacloud.com/help/doc-detail/146592.htm: "If you want to reserve an ECS
// instance, you can switch the ECS instance to the Standby or Protected state"). Standby
// instances are exempt (standby.go).
//
// The emulator runs it when an ESS write comes (purgeESS), not on a timer: what a caller sees is
// the vendor's check having run since its last change, which is what it could observe there.
// Only Stopped counts as unhealthy here, with what SetInstanceHealth marked Unhealthy: a Starting
// or Stopping instance is on its way, and the vendor does not say how long it waits on those.

// checkHealth removes the stopped members of every active group and refills each group that
// lost some to the capacity it had (its desired capacity when it has one).
func (c *call) checkHealth() {
	ids := make([]string, 0, len(c.st.Groups))
	for id := range c.st.Groups {
		ids = append(ids, id)
	}
	sort.Strings(ids) // activities get their ids in a stable order
	for _, id := range ids {
		g := c.st.Groups[id]
		if !g.Active || g.DeletedAt != 0 || g.Region != c.Region {
			continue
		}
		members := c.liveMembers(g)
		var unhealthy []*scalingMember
		for _, m := range members {
			if in, ok := c.instance(m.Instance); ok && !m.Standby && (in.Status == "Stopped" || m.Unhealthy) {
				unhealthy = append(unhealthy, m)
			}
		}
		if len(unhealthy) == 0 {
			continue
		}
		a := c.newActivity(g, fmt.Sprintf("The health check found %d unhealthy instance(s) (not running) and removed them.", len(unhealthy)))
		c.removeMembers(g, a, unhealthy)
		a.Total = len(c.liveMembers(g))
		target := len(members)
		if g.Desired >= 0 {
			target = g.Desired
		}
		target = min(max(target, g.Min), g.Max)
		if target > a.Total {
			c.startActivity(g, target, "The health check replaced the unhealthy instance(s) to keep the group's capacity.")
		}
	}
}

func init() {
	core.Register(Version, "SetInstanceHealth", core.Route{Fn: handle(setInstanceHealth), Write: true, Idem: true})
}

// setInstanceHealth is SetInstanceHealth: "Auto Scaling performs health checks on ECS instances
// in a scaling group and removes unhealthy ECS instances"; an instance set Unhealthy is removed
// (released if the group created it) and replaced, as the health check would a stopped one
// (https://www.alibabacloud.com/help/doc-detail/146592.htm). HealthStatus is Healthy or Unhealthy.
func setInstanceHealth(c *call) (any, *core.Error) {
	id := c.P["InstanceId"]
	if id == "" {
		return nil, core.ErrMissing("InstanceId")
	}
	status := c.P["HealthStatus"]
	if status != "Healthy" && status != "Unhealthy" {
		return nil, core.ErrInvalid("HealthStatus", "Healthy or Unhealthy, got %q", status)
	}
	var found *scalingMember
	for _, g := range c.st.Groups {
		if g.Region != c.Region || c.groupGone(g) {
			continue
		}
		for _, m := range c.liveMembers(g) {
			if m.Instance == id {
				found = m
			}
		}
	}
	if found == nil {
		return nil, core.Errf(404, "InvalidInstanceId.NotFound", "Instance %s is not in a scaling group of region %s.", id, c.Region)
	}
	found.Unhealthy = status == "Unhealthy"
	c.purgeESS() // runs the health check, which takes an Unhealthy member out now
	return &esssdk.SetInstanceHealthResponse{RequestId: c.ReqID}, nil
}
