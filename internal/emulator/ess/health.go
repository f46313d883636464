package ess

import (
	"fmt"
	"sort"
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
// Only Stopped counts as unhealthy here: a Starting or Stopping instance is on its way, and the
// vendor does not say how long it waits on those.

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
			if in, ok := c.instance(m.Instance); ok && !m.Standby && in.Status == "Stopped" {
				unhealthy = append(unhealthy, m)
			}
		}
		if len(unhealthy) == 0 {
			continue
		}
		a := c.newActivity(g, fmt.Sprintf("The health check found %d unhealthy instance(s) (not running) and removed them.", len(unhealthy)))
		a.Want = len(unhealthy)
		a.Desc = fmt.Sprintf("Remove %d unhealthy ECS instance(s)", a.Want)
		for _, m := range unhealthy {
			c.releaseMember(g, m)
			a.Destroyed = append(a.Destroyed, m.Instance)
		}
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
