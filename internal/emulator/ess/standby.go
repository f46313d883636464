package ess

import (
	"fmt"

	esssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ess"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// EnterStandby and ExitStandby, as the vendor documents them
// (https://www.alibabacloud.com/help/en/auto-scaling/developer-reference/api-ess-2014-08-28-enterstandby,
// https://www.alibabacloud.com/help/doc-detail/69682.htm):
//   - a Standby instance stays in the group (it still counts in its capacity) but Auto Scaling no
//     longer manages its lifecycle: the health check does not update its status while it is
//     stopped or restarted, and scale-in activities do not remove it;
//   - it can still be removed (and released) by RemoveInstances;
//   - ExitStandby puts it back In Service, and the health check applies again.
//
// The load balancer weight the vendor sets to 0 is not modelled: the emulator attaches no load
// balancer to scaling groups.

func init() {
	core.Register(Version, "EnterStandby", core.Route{Fn: handle(enterStandby), Write: true, Idem: true})
	core.Register(Version, "ExitStandby", core.Route{Fn: handle(exitStandby), Write: true, Idem: true})
}

func enterStandby(c *call) (any, *core.Error) {
	id, e := c.setStandby(true)
	if e != nil {
		return nil, e
	}
	return &esssdk.EnterStandbyResponse{RequestId: c.ReqID, ScalingActivityId: id}, nil
}

func exitStandby(c *call) (any, *core.Error) {
	id, e := c.setStandby(false)
	if e != nil {
		return nil, e
	}
	return &esssdk.ExitStandbyResponse{RequestId: c.ReqID, ScalingActivityId: id}, nil
}

// setStandby moves the named members of the group in or out of Standby. Only In Service members
// enter Standby and only Standby ones leave it; anything else is refused, naming the instance.
func (c *call) setStandby(standby bool) (string, *core.Error) {
	c.purgeESS()
	g, e := c.writableGroup()
	if e != nil {
		return "", e
	}
	picked, e := c.namedMembers(g)
	if e != nil {
		return "", e
	}
	want := "InService"
	if !standby {
		want = "Standby"
	}
	for _, m := range picked {
		if state := c.memberState(m); state != want {
			return "", core.Errf(400, "IncorrectInstanceStatus", "Instance %s is %s; the operation needs it %s.", m.Instance, state, want)
		}
	}
	for _, m := range picked {
		m.Standby = standby
	}
	verb := "entered"
	if !standby {
		verb = "exited"
	}
	a := c.newActivity(g, fmt.Sprintf("A user request: %d instance(s) %s the Standby state.", len(picked), verb))
	a.Desc = fmt.Sprintf("%d ECS instance(s) %s Standby", len(picked), verb)
	a.Total = len(c.liveMembers(g))
	return a.ID, nil
}
