package emulator

import (
	"sort"
	"unicode"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

func init() {
	register(versionECS, "CreateDeploymentSet", route{fn: createDeploymentSet, write: true, idem: true})
	register(versionECS, "DescribeDeploymentSets", route{fn: describeDeploymentSets})
	register(versionECS, "DeleteDeploymentSet", route{fn: deleteDeploymentSet, write: true})
	register(versionECS, "CreateHpcCluster", route{fn: createHpcCluster, write: true, idem: true})
	register(versionECS, "DescribeHpcClusters", route{fn: describeHpcClusters})
	register(versionECS, "DeleteHpcCluster", route{fn: deleteHpcCluster, write: true})
}

func createDeploymentSet(c *call) (any, *apiError) {
	strategy := orDefault(c.p["Strategy"], "Availability")
	if !contains([]string{"Availability", "AvailabilityGroup", "LowLatency"}, strategy) {
		return nil, errInvalid("Strategy", "must be Availability, AvailabilityGroup or LowLatency")
	}
	d := c.s.db
	ds := &deploymentSet{ID: d.newID("ds"), Region: c.region, Name: c.p["DeploymentSetName"], Desc: c.p["Description"],
		Strategy: strategy, Created: c.now.UnixNano()}
	d.DSets[ds.ID] = ds
	return &ecs.CreateDeploymentSetResponse{RequestId: c.reqID, DeploymentSetId: ds.ID}, nil
}

func describeDeploymentSets(c *call) (any, *apiError) {
	number, size, e := c.page(50)
	if e != nil {
		return nil, e
	}
	ids, e := c.p.JSONList("DeploymentSetIds")
	if e != nil {
		return nil, e
	}
	d := c.s.db
	var list []*deploymentSet
	for _, ds := range d.DSets {
		if ds.Region != c.region || (len(ids) > 0 && !contains(ids, ds.ID)) ||
			(c.p["DeploymentSetName"] != "" && ds.Name != c.p["DeploymentSetName"]) || (c.p["Strategy"] != "" && ds.Strategy != c.p["Strategy"]) {
			continue
		}
		list = append(list, ds)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	lo, hi := pageBounds(len(list), number, size)
	resp := &ecs.DescribeDeploymentSetsResponse{RequestId: c.reqID, RegionId: c.region, PageNumber: number, PageSize: size, TotalCount: len(list)}
	resp.DeploymentSets.DeploymentSet = []ecs.DeploymentSet{}
	for _, ds := range list[lo:hi] {
		out := ecs.DeploymentSet{DeploymentSetId: ds.ID, DeploymentSetName: ds.Name, DeploymentSetDescription: ds.Desc,
			Strategy: ds.Strategy, DeploymentStrategy: ds.Strategy, CreationTime: fmtTime(ds.Created), InstanceAmount: d.refs[ds.ID]}
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

func deleteDeploymentSet(c *call) (any, *apiError) {
	id, e := c.p.Required("DeploymentSetId")
	if e != nil {
		return nil, e
	}
	d := c.s.db
	ds := d.DSets[id]
	if ds == nil || ds.Region != c.region {
		return nil, errNotFound("InvalidDeploymentSetId.NotFound", id)
	}
	if n := d.refs[id]; n > 0 {
		return nil, errDependency("Deployment set %s still holds %d instance(s).", id, n)
	}
	delete(d.DSets, id)
	return &ecs.DeleteDeploymentSetResponse{RequestId: c.reqID}, nil
}

// validHpcName: 2-128 characters starting with a letter (facts section 4).
func validHpcName(n string) bool {
	r := []rune(n)
	return len(r) >= 2 && len(r) <= 128 && unicode.IsLetter(r[0])
}

func createHpcCluster(c *call) (any, *apiError) {
	name, e := c.p.Required("Name")
	if e != nil {
		return nil, e
	}
	if !validHpcName(name) {
		return nil, errf(400, "InvalidName.Malformed", "Name %q must be 2-128 characters and start with a letter.", name)
	}
	d := c.s.db
	h := &hpcCluster{ID: d.newID("hpc"), Region: c.region, Name: name, Desc: c.p["Description"]}
	d.Hpcs[h.ID] = h
	return &ecs.CreateHpcClusterResponse{RequestId: c.reqID, HpcClusterId: h.ID}, nil
}

func describeHpcClusters(c *call) (any, *apiError) {
	number, size, e := c.page(100)
	if e != nil {
		return nil, e
	}
	ids, e := c.p.JSONList("HpcClusterIds")
	if e != nil {
		return nil, e
	}
	var list []*hpcCluster
	for _, h := range c.s.db.Hpcs {
		if h.Region == c.region && (len(ids) == 0 || contains(ids, h.ID)) {
			list = append(list, h)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	lo, hi := pageBounds(len(list), number, size)
	resp := &ecs.DescribeHpcClustersResponse{RequestId: c.reqID, PageNumber: number, PageSize: size, TotalCount: len(list)}
	resp.HpcClusters.HpcCluster = []ecs.HpcCluster{}
	for _, h := range list[lo:hi] {
		resp.HpcClusters.HpcCluster = append(resp.HpcClusters.HpcCluster, ecs.HpcCluster{HpcClusterId: h.ID, Name: h.Name, Description: h.Desc})
	}
	return resp, nil
}

func deleteHpcCluster(c *call) (any, *apiError) {
	id, e := c.p.Required("HpcClusterId")
	if e != nil {
		return nil, e
	}
	d := c.s.db
	h := d.Hpcs[id]
	if h == nil || h.Region != c.region {
		return nil, errNotFound("InvalidHpcClusterId.NotFound", id)
	}
	if n := d.refs[id]; n > 0 {
		return nil, errDependency("HPC cluster %s still holds %d instance(s).", id, n)
	}
	delete(d.Hpcs, id)
	return &ecs.DeleteHpcClusterResponse{RequestId: c.reqID}, nil
}
