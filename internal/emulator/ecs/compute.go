package ecs

import (
	"slices"

	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// What ECS offers the products above it through the core (core.UseCompute): ESS launches and
// releases a scaling group's instances with it and SLB checks its backend servers by it, so
// neither imports ECS.
func init() {
	core.UseCompute(core.Compute{
		Instance: func(cc *core.Call, id string) (core.Instance, bool) {
			c := newCall(cc)
			in := c.st.Instances[id]
			if in == nil {
				return core.Instance{}, false
			}
			return core.Instance{ID: in.ID, Region: in.Region, Zone: in.Zone, Type: in.Type, VpcID: in.VpcID, IP: in.IP,
				Spot: in.Spot, Created: in.Created, Status: c.status(in)}, true
		},
		Run: func(cc *core.Call, p core.Params) ([]string, *core.Error) {
			// A call of its own: RunInstances fills in its parameters (a launch template's).
			sub := *cc
			sub.P, sub.Action, sub.Version = p, "RunInstances", Version
			resp, e := runInstances(newCall(&sub))
			if e != nil {
				return nil, e
			}
			return resp.(*ecssdk.RunInstancesResponse).InstanceIdSets.InstanceIdSet, nil
		},
		Release: func(cc *core.Call, id string) {
			c := newCall(cc)
			if in := c.st.Instances[id]; in != nil {
				c.release(in)
			}
		},
		SecurityGroup: func(cc *core.Call, id string) (core.SecurityGroup, bool) {
			g := StoreIn(cc.Stores).SGs[id]
			if g == nil {
				return core.SecurityGroup{}, false
			}
			return core.SecurityGroup{Region: g.Region, VpcID: g.VpcID}, true
		},
		CheckLaunch: func(cc *core.Call, launch core.Params) *core.Error {
			if _, e := newCall(cc).runImage(launch); e != nil {
				return e
			}
			_, e := ramRoleParam(launch)
			return e
		},
		InstanceType: func(t string) (string, bool) {
			n := normalizeType(t)
			return n, instanceTypes[n] != nil
		},
		CapacityRefusal: func(code string) bool {
			return slices.Contains(StockOutCodes, code) || code == "QuotaExceed.ElasticQuota"
		},
	})
}
