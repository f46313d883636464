package emulator

import (
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// What ECS offers the products above it through the core (core.UseCompute): ESS launches and
// releases a scaling group's instances with it, so ESS imports no ECS code.
func init() {
	core.UseCompute(core.Compute{
		Instance: func(c *core.Call, id string) (core.Instance, bool) {
			s := serverOf(c)
			in := s.db.Instances[id]
			if in == nil {
				return core.Instance{}, false
			}
			return core.Instance{ID: in.ID, Region: in.Region, Zone: in.Zone, Type: in.Type, IP: in.IP, Spot: in.Spot,
				Created: in.Created, Status: s.instanceStatus(in, c.Now)}, true
		},
		Run: func(c *core.Call, p core.Params) ([]string, *core.Error) {
			sub := &call{s: serverOf(c), p: p, action: "RunInstances", version: versionECS, region: c.Region, now: c.Now, reqID: c.ReqID, ak: c.AK}
			resp, e := runInstances(sub)
			if e != nil {
				return nil, e
			}
			return resp.(*ecs.RunInstancesResponse).InstanceIdSets.InstanceIdSet, nil
		},
		Release: func(c *core.Call, id string) {
			d := serverOf(c).db
			if in := d.Instances[id]; in != nil {
				d.removeInstance(in)
			}
		},
		SecurityGroup: func(c *core.Call, id string) (core.SecurityGroup, bool) {
			g := serverOf(c).db.SGs[id]
			if g == nil {
				return core.SecurityGroup{}, false
			}
			return core.SecurityGroup{Region: g.Region, VpcID: g.VpcID}, true
		},
		CheckLaunch: func(launch core.Params) *core.Error {
			if _, e := runImage(launch); e != nil {
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
			return contains(stockOutCodes, code) || code == "QuotaExceed.ElasticQuota"
		},
	})
}
