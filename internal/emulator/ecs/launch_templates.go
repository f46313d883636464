package ecs

import (
	"slices"
	"sort"
	"strings"

	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "CreateLaunchTemplate", core.Route{Fn: handle(createLaunchTemplate), Write: true, Idem: true})
	core.Register(Version, "DescribeLaunchTemplates", core.Route{Fn: handle(describeLaunchTemplates)})
	core.Register(Version, "DeleteLaunchTemplate", core.Route{Fn: handle(deleteLaunchTemplate), Write: true})
}

// launchTemplate keeps the RunInstances parameters a template was created with (one version):
// CreateLaunchTemplate and RunInstances name them alike (ImageId, InstanceType, VSwitchId,
// SecurityGroupId, SystemDisk.Category, DataDisk.N.Size, NetworkInterface.N.VSwitchId, ...).
type launchTemplate struct {
	ID      string            `json:"id"`
	Region  string            `json:"region"`
	Name    string            `json:"name"`
	Created int64             `json:"created"`
	Params  map[string]string `json:"params"`
}

// templateOnlyParams describe the template itself, not the instances it launches.
var templateOnlyParams = map[string]bool{
	"Action": true, "Version": true, "RegionId": true, "LaunchTemplateName": true, "VersionDescription": true,
	"TemplateResourceGroupId": true, "ResourceGroupId": true,
}

func createLaunchTemplate(c *call) (any, *core.Error) {
	name, e := c.P.Required("LaunchTemplateName")
	if e != nil {
		return nil, e
	}
	d := c.st
	for _, t := range d.Templates {
		if t.Region == c.Region && t.Name == name {
			return nil, core.Errf(400, "InvalidLaunchTemplateName.Duplicate", "A launch template named %q already exists.", name)
		}
	}
	t := &launchTemplate{ID: c.Env.NewID("lt"), Region: c.Region, Name: name, Created: c.Now.UnixNano(), Params: map[string]string{}}
	for k, v := range c.P {
		if !core.IsCommonParam(k) && !templateOnlyParams[k] && !strings.HasPrefix(k, "TemplateTag.") {
			t.Params[k] = v
		}
	}
	d.Templates[t.ID] = t
	return &ecssdk.CreateLaunchTemplateResponse{RequestId: c.ReqID, LaunchTemplateId: t.ID, LaunchTemplateVersionNumber: 1}, nil
}

// findTemplate answers the template named by LaunchTemplateId or LaunchTemplateName (nil when neither is sent).
func (c *call) findTemplate(p core.Params) (*launchTemplate, *core.Error) {
	id, name := p["LaunchTemplateId"], p["LaunchTemplateName"]
	if id == "" && name == "" {
		return nil, nil
	}
	for _, t := range c.st.Templates {
		if t.Region == c.Region && (t.ID == id || (id == "" && t.Name == name)) {
			return t, nil
		}
	}
	return nil, core.Errf(404, "InvalidLaunchTemplate.NotFound", "The specified launch template %q does not exist.", id+name)
}

// withLaunchTemplate answers the RunInstances parameters with those of the launch template the
// request names filled in; parameters the request sends win.
func (c *call) withLaunchTemplate() (core.Params, *core.Error) {
	t, e := c.findTemplate(c.P)
	if e != nil || t == nil {
		return c.P, e
	}
	if v := c.P["LaunchTemplateVersion"]; v != "" && v != "1" {
		return nil, core.Errf(404, "InvalidLaunchTemplateVersion.NotFound", "Launch template %s has version 1 only, not %s.", t.ID, v)
	}
	merged := make(core.Params, len(c.P)+len(t.Params))
	for k, v := range t.Params {
		merged[k] = v
	}
	for k, v := range c.P {
		merged[k] = v
	}
	c.P = merged
	return merged, nil
}

func describeLaunchTemplates(c *call) (any, *core.Error) {
	number, size, e := c.page(50)
	if e != nil {
		return nil, e
	}
	ids, names := c.P.List("LaunchTemplateId"), c.P.List("LaunchTemplateName")
	var list []*launchTemplate
	for _, t := range c.st.Templates {
		if t.Region == c.Region && (len(ids) == 0 || slices.Contains(ids, t.ID)) && (len(names) == 0 || slices.Contains(names, t.Name)) {
			list = append(list, t)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	lo, hi := core.PageBounds(len(list), number, size)
	resp := &ecssdk.DescribeLaunchTemplatesResponse{RequestId: c.ReqID, PageNumber: number, PageSize: size, TotalCount: len(list)}
	resp.LaunchTemplateSets.LaunchTemplateSet = []ecssdk.LaunchTemplateSet{}
	for _, t := range list[lo:hi] {
		set := ecssdk.LaunchTemplateSet{LaunchTemplateId: t.ID, LaunchTemplateName: t.Name, DefaultVersionNumber: 1,
			LatestVersionNumber: 1, CreateTime: core.FormatTime(t.Created), ModifiedTime: core.FormatTime(t.Created), ResourceGroupId: core.DefaultResourceGroup}
		set.Tags.Tag = []ecssdk.Tag{}
		resp.LaunchTemplateSets.LaunchTemplateSet = append(resp.LaunchTemplateSets.LaunchTemplateSet, set)
	}
	return resp, nil
}

func deleteLaunchTemplate(c *call) (any, *core.Error) {
	t, e := c.findTemplate(c.P)
	if e != nil {
		return nil, e
	}
	if t == nil {
		return nil, core.ErrMissing("LaunchTemplateId")
	}
	delete(c.st.Templates, t.ID)
	resp := &ecssdk.DeleteLaunchTemplateResponse{RequestId: c.ReqID, LaunchTemplateId: t.ID}
	resp.LaunchTemplateVersionNumbers.VersionNumbers = []int64{1}
	return resp, nil
}
