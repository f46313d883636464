package ess

import (
	"cmp"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"

	esssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ess"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "CreateScalingConfiguration", core.Route{Fn: handle(createScalingConfiguration), Write: true, Idem: true})
	core.Register(Version, "DescribeScalingConfigurations", core.Route{Fn: handle(describeScalingConfigurations)})
	core.Register(Version, "ModifyScalingConfiguration", core.Route{Fn: handle(modifyScalingConfiguration), Write: true})
	core.Register(Version, "DeleteScalingConfiguration", core.Route{Fn: handle(deleteScalingConfiguration), Write: true})
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

func launchParams(p core.Params) map[string]string {
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
func (c *call) readConfig(cf *scalingConfig, g *scalingGroup, modify bool) *core.Error {
	p := c.P
	if types := p.List("InstanceTypes"); len(types) > 0 {
		cf.Types = types
	} else if t := p["InstanceType"]; t != "" {
		cf.Types = []string{t}
	}
	if len(cf.Types) == 0 {
		return core.ErrMissing("InstanceTypes.1")
	}
	if len(cf.Types) > essMaxInstanceTypes {
		return core.ErrInvalid("InstanceTypes", "at most %d instance types, got %d", essMaxInstanceTypes, len(cf.Types))
	}
	for i, t := range cf.Types {
		if _, ok := core.ECS().InstanceType(t); !ok {
			return core.Errf(400, "InvalidInstanceType.ValueNotSupported", "InstanceTypes.%d %q is not offered by the emulator's catalog.", i+1, t)
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
	// The image and the RAM role are checked as RunInstances checks them, and refused now
	// rather than at the group's first scale-out.
	if e := core.ECS().CheckLaunch(c.Call, launch); e != nil {
		return e
	}
	sgs := core.Params(launch).List("SecurityGroupIds")
	if v := launch["SecurityGroupId"]; v != "" {
		sgs = append(sgs, v)
	}
	if len(sgs) == 0 {
		return core.ErrMissing("SecurityGroupId")
	}
	for _, id := range sgs {
		sg, ok := core.ECS().SecurityGroup(c.Call, id)
		if !ok || sg.Region != c.Region {
			return core.ErrNotFound("InvalidSecurityGroupId.NotFound", id)
		}
		if sg.VpcID != g.VpcID {
			return core.Errf(400, "InvalidSecurityGroupId.VPCMismatch", "Security group %s is in %s; the scaling group's VPC is %s.", id, sg.VpcID, g.VpcID)
		}
	}
	if s := launch["SpotStrategy"]; s != "" && !slices.Contains([]string{"NoSpot", "SpotAsPriceGo", "SpotWithPriceLimit"}, s) {
		return core.ErrInvalid("SpotStrategy", "must be NoSpot, SpotAsPriceGo or SpotWithPriceLimit")
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

func createScalingConfiguration(c *call) (any, *core.Error) {
	c.purgeESS()
	g, e := c.writableGroup()
	if e != nil {
		return nil, e
	}
	cf := &scalingConfig{Group: g.ID, Region: c.Region, Created: c.Now.UnixNano()}
	if e := c.readConfig(cf, g, false); e != nil {
		return nil, e
	}
	cf.ID = c.Env.NewID("asc")
	if cf.Name == "" {
		cf.Name = cf.ID
	}
	c.st.Configs[cf.ID] = cf
	return &esssdk.CreateScalingConfigurationResponse{RequestId: c.ReqID, ScalingConfigurationId: cf.ID}, nil
}

func (c *call) config() (*scalingConfig, *scalingGroup, *core.Error) {
	id, e := c.P.Required("ScalingConfigurationId")
	if e != nil {
		return nil, nil, e
	}
	cf := c.st.Configs[id]
	if cf == nil || cf.Region != c.Region {
		return nil, nil, core.ErrNotFound("InvalidScalingConfigurationId.NotFound", id)
	}
	g, e := c.group(cf.Group)
	if e != nil {
		return nil, nil, core.ErrNotFound("InvalidScalingConfigurationId.NotFound", id)
	}
	return cf, g, nil
}

// modifyScalingConfiguration changes the launch settings of new instances; the group's running
// instances keep theirs (the provider rolls them).
func modifyScalingConfiguration(c *call) (any, *core.Error) {
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
	return &esssdk.ModifyScalingConfigurationResponse{RequestId: c.ReqID}, nil
}

func deleteScalingConfiguration(c *call) (any, *core.Error) {
	c.purgeESS()
	cf, g, e := c.config()
	if e != nil {
		return nil, e
	}
	if g.Config == cf.ID {
		return nil, core.Errf(400, "IncorrectScalingConfigurationStatus", "Scaling configuration %s is the active configuration of scaling group %s.", cf.ID, g.ID)
	}
	delete(c.st.Configs, cf.ID)
	return &esssdk.DeleteScalingConfigurationResponse{RequestId: c.ReqID}, nil
}

func describeScalingConfigurations(c *call) (any, *core.Error) {
	q, e := core.ReadListQuery(c.P, "", 50)
	if e != nil {
		return nil, e
	}
	ids := c.P.List("ScalingConfigurationId")
	names := c.P.List("ScalingConfigurationName")
	groupID := c.P["ScalingGroupId"]
	var match []*scalingConfig
	for _, cf := range c.st.Configs {
		if cf.Region != c.Region || groupID != "" && cf.Group != groupID {
			continue
		}
		if _, e := c.group(cf.Group); e != nil {
			continue
		}
		if len(ids) > 0 && !slices.Contains(ids, cf.ID) || len(names) > 0 && !slices.Contains(names, cf.Name) {
			continue
		}
		match = append(match, cf)
	}
	resp := &esssdk.DescribeScalingConfigurationsResponse{RequestId: c.ReqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(match)}
	resp.ScalingConfigurations.ScalingConfiguration = []esssdk.ScalingConfigurationInDescribeScalingConfigurations{}
	for _, cf := range core.PageOf(q, match, func(cf *scalingConfig) string { return cf.ID }) {
		resp.ScalingConfigurations.ScalingConfiguration = append(resp.ScalingConfigurations.ScalingConfiguration, c.vendorConfig(cf))
	}
	return resp, nil
}

func (c *call) vendorConfig(cf *scalingConfig) esssdk.ScalingConfigurationInDescribeScalingConfigurations {
	l := core.Params(cf.Launch)
	state := "Inactive"
	if g := c.st.Groups[cf.Group]; g != nil && g.Config == cf.ID {
		state = "Active"
	}
	out := esssdk.ScalingConfigurationInDescribeScalingConfigurations{
		ScalingConfigurationId: cf.ID, ScalingConfigurationName: cf.Name, ScalingGroupId: cf.Group,
		LifecycleState: state,
		ImageId:        l["ImageId"], ImageFamily: l["ImageFamily"], SecurityGroupId: l["SecurityGroupId"],
		SpotStrategy:       cmp.Or(l["SpotStrategy"], "NoSpot"),
		SystemDiskCategory: cmp.Or(l["SystemDisk.Category"], "cloud_essd"), SystemDiskPerformanceLevel: l["SystemDisk.PerformanceLevel"],
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
		dd := esssdk.DataDisk{Category: m["Category"], PerformanceLevel: m["PerformanceLevel"], SnapshotId: m["SnapshotId"], DiskName: m["DiskName"]}
		if n, e := (core.Params{"s": m["Size"]}).Int("s", 0); e == nil {
			dd.Size = n
		}
		dd.DeleteWithInstance = m["DeleteWithInstance"] != "false"
		out.DataDisks.DataDisk = append(out.DataDisks.DataDisk, dd)
	}
	tags := append([]core.Tag{}, cf.Tags...)
	sort.Slice(tags, func(i, j int) bool { return tags[i].K < tags[j].K })
	out.Tags.Tag = []esssdk.Tag{}
	for _, t := range tags {
		out.Tags.Tag = append(out.Tags.Tag, esssdk.Tag{Key: t.K, Value: t.V})
	}
	return out
}

// essTagsJSON reads the Tags parameter of CreateScalingConfiguration: a JSON object of up to
// 20 key/value pairs.
func essTagsJSON(v string) ([]core.Tag, *core.Error) {
	if v == "" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, core.ErrInvalid("Tags", "must be a JSON object of string keys and values")
	}
	if len(m) > 20 {
		return nil, core.Errf(400, "InvalidTagCount", "The number of tags (%d) exceeds 20.", len(m))
	}
	out := make([]core.Tag, 0, len(m))
	for k, val := range m {
		if strings.TrimSpace(k) == "" {
			return nil, core.ErrInvalid("Tags", "a tag key is empty")
		}
		out = append(out, core.Tag{K: k, V: val})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].K < out[j].K })
	return out, nil
}
