package emulator

import (
	"sort"
	"strings"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"
)

func init() {
	register(versionESS, "CreateScalingConfiguration", route{fn: createScalingConfiguration, write: true, idem: true})
	register(versionESS, "DescribeScalingConfigurations", route{fn: describeScalingConfigurations})
	register(versionESS, "ModifyScalingConfiguration", route{fn: modifyScalingConfiguration, write: true})
	register(versionESS, "DeleteScalingConfiguration", route{fn: deleteScalingConfiguration, write: true})
}

// essMaxInstanceTypes: InstanceTypes.N takes 1 to 10 types, the first the most preferred.
const essMaxInstanceTypes = 10

// launchParamPrefixes are the configuration parameters ESS passes on to RunInstances under the
// same name; the rest of a request configures ESS itself.
var launchParamPrefixes = []string{
	"ImageId", "ImageFamily", "SecurityGroupId", "SecurityGroupIds.", "SystemDisk.", "DataDisk.",
	"UserData", "KeyPairName", "InstanceName", "HostName", "DeploymentSetId", "HpcClusterId",
	"SpotStrategy", "SpotPriceLimit.", "RamRoleName", "InternetMaxBandwidthOut", "NetworkInterfaces.",
}

func launchParams(p params) map[string]string {
	out := map[string]string{}
	for k, v := range p {
		for _, pre := range launchParamPrefixes {
			if k == pre || strings.HasSuffix(pre, ".") && strings.HasPrefix(k, pre) {
				out[k] = v
			}
		}
	}
	if v := p["InstanceDescription"]; v != "" {
		out["Description"] = v
	}
	return out
}

// readConfig applies a Create/ModifyScalingConfiguration request to cf and checks it: the
// types exist, the security groups are in the group's VPC, the image and disks are ones
// RunInstances would take.
func (c *call) readConfig(cf *scalingConfig, g *scalingGroup, modify bool) *apiError {
	p := c.p
	if types := p.List("InstanceTypes"); len(types) > 0 {
		cf.Types = types
	} else if t := p["InstanceType"]; t != "" {
		cf.Types = []string{t}
	}
	if len(cf.Types) == 0 {
		return errMissing("InstanceTypes.1")
	}
	if len(cf.Types) > essMaxInstanceTypes {
		return errInvalid("InstanceTypes", "at most %d instance types, got %d", essMaxInstanceTypes, len(cf.Types))
	}
	for i, t := range cf.Types {
		if instanceTypes[normalizeType(t)] == nil {
			return errf(400, "InvalidInstanceType.ValueNotSupported", "InstanceTypes.%d %q is not offered by the emulator's catalog.", i+1, t)
		}
	}
	launch := launchParams(p)
	if modify {
		// A repeated parameter (DataDisk.N, SecurityGroupIds.N, ...) given again replaces the
		// whole list, not the entries it names.
		replaced := map[string]bool{}
		for k := range launch {
			for _, pre := range launchParamPrefixes {
				if strings.HasSuffix(pre, ".") && strings.HasPrefix(k, pre) {
					replaced[pre] = true
				}
			}
		}
		merged := map[string]string{}
		for k, v := range cf.Launch {
			if pre, _, ok := strings.Cut(k, "."); !ok || !replaced[pre+"."] {
				merged[k] = v
			}
		}
		for k, v := range launch {
			merged[k] = v
		}
		launch = merged
	}
	if _, e := runImage(launch); e != nil {
		return e
	}
	// The same rule as RunInstances, refused now rather than at the group's first scale-out.
	if _, e := ramRoleParam(params(launch)); e != nil {
		return e
	}
	sgs := params(launch).List("SecurityGroupIds")
	if v := launch["SecurityGroupId"]; v != "" {
		sgs = append(sgs, v)
	}
	if len(sgs) == 0 {
		return errMissing("SecurityGroupId")
	}
	for _, id := range sgs {
		sg := c.s.db.SGs[id]
		if sg == nil || sg.Region != c.region {
			return errNotFound("InvalidSecurityGroupId.NotFound", id)
		}
		if sg.VpcID != g.VpcID {
			return errf(400, "InvalidSecurityGroupId.VPCMismatch", "Security group %s is in %s; the scaling group's VPC is %s.", id, sg.VpcID, g.VpcID)
		}
	}
	if s := launch["SpotStrategy"]; s != "" && !contains([]string{"NoSpot", "SpotAsPriceGo", "SpotWithPriceLimit"}, s) {
		return errInvalid("SpotStrategy", "must be NoSpot, SpotAsPriceGo or SpotWithPriceLimit")
	}
	if _, ok := p["Tags"]; ok || !modify {
		tags, e := essTagsJSON(p["Tags"])
		if e != nil {
			return e
		}
		cf.Tags = tags
	}
	if v := p["ScalingConfigurationName"]; v != "" {
		cf.Name = v
	}
	cf.Launch = launch
	return nil
}

func createScalingConfiguration(c *call) (any, *apiError) {
	c.purgeESS()
	g, e := c.writableGroup()
	if e != nil {
		return nil, e
	}
	cf := &scalingConfig{Group: g.ID, Region: c.region, Created: c.now.UnixNano()}
	if e := c.readConfig(cf, g, false); e != nil {
		return nil, e
	}
	cf.ID = c.s.db.newID("asc")
	if cf.Name == "" {
		cf.Name = cf.ID
	}
	c.s.db.ESS.Configs[cf.ID] = cf
	return &ess.CreateScalingConfigurationResponse{RequestId: c.reqID, ScalingConfigurationId: cf.ID}, nil
}

func (c *call) config() (*scalingConfig, *scalingGroup, *apiError) {
	id, e := c.p.Required("ScalingConfigurationId")
	if e != nil {
		return nil, nil, e
	}
	cf := c.s.db.ESS.Configs[id]
	if cf == nil || cf.Region != c.region {
		return nil, nil, errNotFound("InvalidScalingConfigurationId.NotFound", id)
	}
	g, e := c.group(cf.Group)
	if e != nil {
		return nil, nil, errNotFound("InvalidScalingConfigurationId.NotFound", id)
	}
	return cf, g, nil
}

// modifyScalingConfiguration changes the launch settings of new instances; the group's running
// instances keep theirs (the provider rolls them).
func modifyScalingConfiguration(c *call) (any, *apiError) {
	c.purgeESS()
	cf, g, e := c.config()
	if e != nil {
		return nil, e
	}
	ncf := *cf
	if e := c.readConfig(&ncf, g, true); e != nil {
		return nil, e
	}
	*cf = ncf
	return &ess.ModifyScalingConfigurationResponse{RequestId: c.reqID}, nil
}

func deleteScalingConfiguration(c *call) (any, *apiError) {
	c.purgeESS()
	cf, g, e := c.config()
	if e != nil {
		return nil, e
	}
	if g.Config == cf.ID {
		return nil, errf(400, "IncorrectScalingConfigurationStatus", "Scaling configuration %s is the active configuration of scaling group %s.", cf.ID, g.ID)
	}
	delete(c.s.db.ESS.Configs, cf.ID)
	return &ess.DeleteScalingConfigurationResponse{RequestId: c.reqID}, nil
}

func describeScalingConfigurations(c *call) (any, *apiError) {
	q, e := c.listQuery("", 50)
	if e != nil {
		return nil, e
	}
	ids := c.p.List("ScalingConfigurationId")
	names := c.p.List("ScalingConfigurationName")
	groupID := c.p["ScalingGroupId"]
	var match []*scalingConfig
	for _, cf := range c.s.db.ESS.Configs {
		if cf.Region != c.region || groupID != "" && cf.Group != groupID {
			continue
		}
		if _, e := c.group(cf.Group); e != nil {
			continue
		}
		if len(ids) > 0 && !contains(ids, cf.ID) || len(names) > 0 && !contains(names, cf.Name) {
			continue
		}
		match = append(match, cf)
	}
	resp := &ess.DescribeScalingConfigurationsResponse{RequestId: c.reqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(match)}
	resp.ScalingConfigurations.ScalingConfiguration = []ess.ScalingConfigurationInDescribeScalingConfigurations{}
	for _, cf := range pageOf(q, match, func(cf *scalingConfig) string { return cf.ID }) {
		resp.ScalingConfigurations.ScalingConfiguration = append(resp.ScalingConfigurations.ScalingConfiguration, c.vendorConfig(cf))
	}
	return resp, nil
}

func (c *call) vendorConfig(cf *scalingConfig) ess.ScalingConfigurationInDescribeScalingConfigurations {
	l := params(cf.Launch)
	state := "Inactive"
	if g := c.s.db.ESS.Groups[cf.Group]; g != nil && g.Config == cf.ID {
		state = "Active"
	}
	out := ess.ScalingConfigurationInDescribeScalingConfigurations{
		ScalingConfigurationId: cf.ID, ScalingConfigurationName: cf.Name, ScalingGroupId: cf.Group,
		LifecycleState: state,
		ImageId:        l["ImageId"], ImageFamily: l["ImageFamily"], SecurityGroupId: l["SecurityGroupId"],
		SpotStrategy:       orDefault(l["SpotStrategy"], "NoSpot"),
		SystemDiskCategory: orDefault(l["SystemDisk.Category"], "cloud_essd"), SystemDiskPerformanceLevel: l["SystemDisk.PerformanceLevel"],
		UserData: l["UserData"], KeyPairName: l["KeyPairName"], InstanceName: l["InstanceName"], HostName: l["HostName"],
		DeploymentSetId: l["DeploymentSetId"], HpcClusterId: l["HpcClusterId"], RamRoleName: l["RamRoleName"],
		InstanceDescription: l["Description"],
		CreationTime:        time.Unix(0, cf.Created).UTC().Format("2006-01-02T15:04Z"),
	}
	if len(cf.Types) > 0 {
		out.InstanceType = cf.Types[0]
	}
	out.InstanceTypes.InstanceType = append([]string{}, cf.Types...)
	out.SecurityGroupIds.SecurityGroupId = append([]string{}, l.List("SecurityGroupIds")...)
	if n, e := l.Int("SystemDisk.Size", 0); e == nil {
		out.SystemDiskSize = n
	}
	for _, m := range l.StructList("DataDisk") {
		dd := ess.DataDisk{Category: m["Category"], PerformanceLevel: m["PerformanceLevel"], SnapshotId: m["SnapshotId"], DiskName: m["DiskName"]}
		if n, e := (params{"s": m["Size"]}).Int("s", 0); e == nil {
			dd.Size = n
		}
		dd.DeleteWithInstance = m["DeleteWithInstance"] != "false"
		out.DataDisks.DataDisk = append(out.DataDisks.DataDisk, dd)
	}
	tags := append([]tag{}, cf.Tags...)
	sort.Slice(tags, func(i, j int) bool { return tags[i].K < tags[j].K })
	out.Tags.Tag = []ess.Tag{}
	for _, t := range tags {
		out.Tags.Tag = append(out.Tags.Tag, ess.Tag{Key: t.K, Value: t.V})
	}
	return out
}
