package ecs

import (
	"cmp"

	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "RunInstances", core.Route{Fn: handle(runInstances), Write: true, Idem: true})
	core.Register(Version, "DescribeInstances", core.Route{Fn: handle(describeInstances), VendorModel: true})
	core.Register(Version, "DeleteInstances", core.Route{Fn: handle(deleteInstances), Write: true, Idem: true})
	core.Register(Version, "StartInstances", core.Route{Fn: handle(startInstances), Write: true})
	core.Register(Version, "StopInstances", core.Route{Fn: handle(stopInstances), Write: true})
}

func (c *call) instancesParam(limit int) ([]*instance, *core.Error) {
	ids, e := c.P.IDs("InstanceIds", "InstanceId")
	if e != nil {
		return nil, e
	}
	if len(ids) == 0 {
		return nil, core.ErrMissing("InstanceId.1")
	}
	if len(ids) > limit {
		return nil, core.ErrInvalid("InstanceId", "at most %d ids, got %d", limit, len(ids))
	}
	out := make([]*instance, 0, len(ids))
	for _, id := range ids {
		in := c.st.Instances[id]
		if in == nil || in.Region != c.Region {
			return nil, core.ErrNotFound("InvalidInstanceId.NotFound", id)
		}
		out = append(out, in)
	}
	return out, nil
}

func deleteInstances(c *call) (any, *core.Error) {
	list, e := c.instancesParam(100)
	if e != nil {
		return nil, e
	}
	force, e := c.P.Bool("Force", false)
	if e != nil {
		return nil, e
	}
	for _, in := range list {
		if st := c.status(in); !force && st != "Stopped" {
			return nil, core.ErrStatus("The current status of instance %s (%s) does not support this operation: stop it first or set Force=true.", in.ID, st)
		}
	}
	if e := c.dryRunSuccess(); e != nil {
		return nil, e
	}
	for _, in := range list {
		if c.st.Instances[in.ID] == in {
			c.release(in)
		}
	}
	return &ecssdk.DeleteInstancesResponse{RequestId: c.ReqID}, nil
}

// dryRunSuccess ends a dry run that passed its checks with the code StartInstances,
// StopInstances and DeleteInstances document for it: DRYRUN.SUCCESS (other actions answer
// DryRunOperation). Like DryRunOperation it comes as an error answer with HTTP 400.
func (c *call) dryRunSuccess() *core.Error {
	if dry, e := c.P.Bool("DryRun", false); e != nil || !dry {
		return e
	}
	return core.Errf(400, "DRYRUN.SUCCESS", "Request validation has been passed with DryRun flag set.")
}

func startInstances(c *call) (any, *core.Error) {
	list, e := c.instancesParam(100)
	if e != nil {
		return nil, e
	}
	resp := &ecssdk.StartInstancesResponse{RequestId: c.ReqID}
	for _, in := range list {
		if st := c.status(in); st != "Stopped" {
			return nil, core.ErrStatus("The current status of instance %s (%s) does not support StartInstances.", in.ID, st)
		}
	}
	if e := c.dryRunSuccess(); e != nil {
		return nil, e
	}
	for _, in := range list {
		in.Phase, in.PhaseAt, in.StoppedMode = phaseStarting, c.Now.UnixNano(), ""
		resp.InstanceResponses.InstanceResponse = append(resp.InstanceResponses.InstanceResponse, ecssdk.InstanceResponse{
			InstanceId: in.ID, PreviousStatus: "Stopped", CurrentStatus: c.status(in), Code: "200", Message: "success"})
	}
	return resp, nil
}

func stopInstances(c *call) (any, *core.Error) {
	list, e := c.instancesParam(100)
	if e != nil {
		return nil, e
	}
	mode := cmp.Or(c.P["StoppedMode"], "KeepCharging")
	if mode != "KeepCharging" && mode != "StopCharging" {
		return nil, core.ErrInvalid("StoppedMode", "must be KeepCharging or StopCharging")
	}
	force, e := c.P.Bool("ForceStop", false)
	if e != nil {
		return nil, e
	}
	resp := &ecssdk.StopInstancesResponse{RequestId: c.ReqID}
	for _, in := range list {
		if st := c.status(in); st != "Running" {
			return nil, core.ErrStatus("The current status of instance %s (%s) does not support StopInstances.", in.ID, st)
		}
	}
	if e := c.dryRunSuccess(); e != nil {
		return nil, e
	}
	for _, in := range list {
		in.Phase, in.PhaseAt, in.StoppedMode = phaseStopping, c.Now.UnixNano(), mode
		if !force && in.ShutdownDelay > 0 {
			// A normal stop shuts the operating system down and ForceStop powers the instance off
			// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-stopinstances):
			// only the first lets a guest that delays its shutdown do so.
			in.Phase = phaseShutdown
		}
		resp.InstanceResponses.InstanceResponse = append(resp.InstanceResponses.InstanceResponse, ecssdk.InstanceResponse{
			InstanceId: in.ID, PreviousStatus: "Running", CurrentStatus: c.status(in), Code: "200", Message: "success"})
	}
	return resp, nil
}
