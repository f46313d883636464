package ecs

import (
	"cmp"
	"slices"
	"sort"
	"unicode"

	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "CreateDeploymentSet", core.Route{Fn: handle(createDeploymentSet), Write: true, Idem: true})
	core.Register(Version, "DescribeDeploymentSets", core.Route{Fn: handle(describeDeploymentSets)})
	core.Register(Version, "DeleteDeploymentSet", core.Route{Fn: handle(deleteDeploymentSet), Write: true})
	core.Register(Version, "CreateHpcCluster", core.Route{Fn: handle(createHpcCluster), Write: true, Idem: true})
	core.Register(Version, "DescribeHpcClusters", core.Route{Fn: handle(describeHpcClusters)})
	core.Register(Version, "DeleteHpcCluster", core.Route{Fn: handle(deleteHpcCluster), Write: true})
}

func createDeploymentSet(c *call) (any, *core.Error) {
	strategy := cmp.Or(c.P["Strategy"], "Availability")
	if !slices.Contains([]string{"Availability", "AvailabilityGroup", "LowLatency"}, strategy) {
		return nil, core.ErrInvalid("Strategy", "must be Availability, AvailabilityGroup or LowLatency")
	}
	d := c.st
	ds := &deploymentSet{ID: c.Env.NewID("ds"), Region: c.Region, Name: c.P["DeploymentSetName"], Desc: c.P["Description"],
		Strategy: strategy, Created: c.Now.UnixNano()}
	d.DSets[ds.ID] = ds
	return &ecssdk.CreateDeploymentSetResponse{RequestId: c.ReqID, DeploymentSetId: ds.ID}, nil
}

func describeDeploymentSets(c *call) (any, *core.Error) {
	number, size, e := c.page(50)
	if e != nil {
		return nil, e
	}
	ids, e := c.P.JSONList("DeploymentSetIds")
	if e != nil {
		return nil, e
	}
	d := c.st
	var list []*deploymentSet
	for _, ds := range d.DSets {
		if ds.Region != c.Region || (len(ids) > 0 && !slices.Contains(ids, ds.ID)) ||
			(c.P["DeploymentSetName"] != "" && ds.Name != c.P["DeploymentSetName"]) || (c.P["Strategy"] != "" && ds.Strategy != c.P["Strategy"]) {
			continue
		}
		list = append(list, ds)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	lo, hi := core.PageBounds(len(list), number, size)
	resp := &ecssdk.DescribeDeploymentSetsResponse{RequestId: c.ReqID, RegionId: c.Region, PageNumber: number, PageSize: size, TotalCount: len(list)}
	resp.DeploymentSets.DeploymentSet = []ecssdk.DeploymentSet{}
	for _, ds := range list[lo:hi] {
		out := ecssdk.DeploymentSet{DeploymentSetId: ds.ID, DeploymentSetName: ds.Name, DeploymentSetDescription: ds.Desc,
			Strategy: ds.Strategy, DeploymentStrategy: ds.Strategy, CreationTime: core.FormatTime(ds.Created), InstanceAmount: d.refs[ds.ID]}
		out.InstanceIds.InstanceId = []string{}
		if d.refs[ds.ID] > 0 {
			for _, in := range d.order {
				if in.DeploySet == ds.ID {
					out.InstanceIds.InstanceId = append(out.InstanceIds.InstanceId, in.ID)
				}
			}
		}
		resp.DeploymentSets.DeploymentSet = append(resp.DeploymentSets.DeploymentSet, out)
	}
	return resp, nil
}

func deleteDeploymentSet(c *call) (any, *core.Error) {
	id, e := c.P.Required("DeploymentSetId")
	if e != nil {
		return nil, e
	}
	d := c.st
	ds := d.DSets[id]
	if ds == nil || ds.Region != c.Region {
		return nil, core.ErrNotFound("InvalidDeploymentSetId.NotFound", id)
	}
	if n := d.refs[id]; n > 0 {
		return nil, core.ErrDependency("Deployment set %s still holds %d instance(s).", id, n)
	}
	delete(d.DSets, id)
	return &ecssdk.DeleteDeploymentSetResponse{RequestId: c.ReqID}, nil
}

// validHpcName: 2-128 characters starting with a letter (facts section 4).
func validHpcName(n string) bool {
	r := []rune(n)
	return len(r) >= 2 && len(r) <= 128 && unicode.IsLetter(r[0])
}

func createHpcCluster(c *call) (any, *core.Error) {
	name, e := c.P.Required("Name")
	if e != nil {
		return nil, e
	}
	if !validHpcName(name) {
		return nil, core.Errf(400, "InvalidName.Malformed", "Name %q must be 2-128 characters and start with a letter.", name)
	}
	d := c.st
	h := &hpcCluster{ID: c.Env.NewID("hpc"), Region: c.Region, Name: name, Desc: c.P["Description"]}
	d.Hpcs[h.ID] = h
	return &ecssdk.CreateHpcClusterResponse{RequestId: c.ReqID, HpcClusterId: h.ID}, nil
}

func describeHpcClusters(c *call) (any, *core.Error) {
	number, size, e := c.page(100)
	if e != nil {
		return nil, e
	}
	ids, e := c.P.JSONList("HpcClusterIds")
	if e != nil {
		return nil, e
	}
	var list []*hpcCluster
	for _, h := range c.st.Hpcs {
		if h.Region == c.Region && (len(ids) == 0 || slices.Contains(ids, h.ID)) {
			list = append(list, h)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	lo, hi := core.PageBounds(len(list), number, size)
	resp := &ecssdk.DescribeHpcClustersResponse{RequestId: c.ReqID, PageNumber: number, PageSize: size, TotalCount: len(list)}
	resp.HpcClusters.HpcCluster = []ecssdk.HpcCluster{}
	for _, h := range list[lo:hi] {
		resp.HpcClusters.HpcCluster = append(resp.HpcClusters.HpcCluster, ecssdk.HpcCluster{HpcClusterId: h.ID, Name: h.Name, Description: h.Desc})
	}
	return resp, nil
}

func deleteHpcCluster(c *call) (any, *core.Error) {
	id, e := c.P.Required("HpcClusterId")
	if e != nil {
		return nil, e
	}
	d := c.st
	h := d.Hpcs[id]
	if h == nil || h.Region != c.Region {
		return nil, core.ErrNotFound("InvalidHpcClusterId.NotFound", id)
	}
	if n := d.refs[id]; n > 0 {
		return nil, core.ErrDependency("HPC cluster %s still holds %d instance(s).", id, n)
	}
	delete(d.Hpcs, id)
	return &ecssdk.DeleteHpcClusterResponse{RequestId: c.ReqID}, nil
}
