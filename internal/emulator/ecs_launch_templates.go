package emulator

import (
	"sort"
	"strings"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

func init() {
	register(versionECS, "CreateLaunchTemplate", route{fn: createLaunchTemplate, write: true, idem: true})
	register(versionECS, "DescribeLaunchTemplates", route{fn: describeLaunchTemplates})
	register(versionECS, "DeleteLaunchTemplate", route{fn: deleteLaunchTemplate, write: true})
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

func createLaunchTemplate(c *call) (any, *apiError) {
	name, e := c.p.Required("LaunchTemplateName")
	if e != nil {
		return nil, e
	}
	d := c.s.db
	for _, t := range d.Templates {
		if t.Region == c.region && t.Name == name {
			return nil, errf(400, "InvalidLaunchTemplateName.Duplicate", "A launch template named %q already exists.", name)
		}
	}
	t := &launchTemplate{ID: d.newID("lt"), Region: c.region, Name: name, Created: c.now.UnixNano(), Params: map[string]string{}}
	for k, v := range c.p {
		if !commonParams[k] && !templateOnlyParams[k] && !strings.HasPrefix(k, "TemplateTag.") {
			t.Params[k] = v
		}
	}
	d.Templates[t.ID] = t
	return &ecs.CreateLaunchTemplateResponse{RequestId: c.reqID, LaunchTemplateId: t.ID, LaunchTemplateVersionNumber: 1}, nil
}

// findTemplate answers the template named by LaunchTemplateId or LaunchTemplateName (nil when neither is sent).
func (c *call) findTemplate(p params) (*launchTemplate, *apiError) {
	id, name := p["LaunchTemplateId"], p["LaunchTemplateName"]
	if id == "" && name == "" {
		return nil, nil
	}
	for _, t := range c.s.db.Templates {
		if t.Region == c.region && (t.ID == id || (id == "" && t.Name == name)) {
			return t, nil
		}
	}
	return nil, errf(404, "InvalidLaunchTemplate.NotFound", "The specified launch template %q does not exist.", id+name)
}

// withLaunchTemplate answers the RunInstances parameters with those of the launch template the
// request names filled in; parameters the request sends win.
func (c *call) withLaunchTemplate() (params, *apiError) {
	t, e := c.findTemplate(c.p)
	if e != nil || t == nil {
		return c.p, e
	}
	if v := c.p["LaunchTemplateVersion"]; v != "" && v != "1" {
		return nil, errf(404, "InvalidLaunchTemplateVersion.NotFound", "Launch template %s has version 1 only, not %s.", t.ID, v)
	}
	merged := make(params, len(c.p)+len(t.Params))
	for k, v := range t.Params {
		merged[k] = v
	}
	for k, v := range c.p {
		merged[k] = v
	}
	c.p = merged
	return merged, nil
}

func describeLaunchTemplates(c *call) (any, *apiError) {
	number, size, e := c.page(50)
	if e != nil {
		return nil, e
	}
	ids, names := c.p.List("LaunchTemplateId"), c.p.List("LaunchTemplateName")
	var list []*launchTemplate
	for _, t := range c.s.db.Templates {
		if t.Region == c.region && (len(ids) == 0 || contains(ids, t.ID)) && (len(names) == 0 || contains(names, t.Name)) {
			list = append(list, t)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	lo, hi := pageBounds(len(list), number, size)
	resp := &ecs.DescribeLaunchTemplatesResponse{RequestId: c.reqID, PageNumber: number, PageSize: size, TotalCount: len(list)}
	resp.LaunchTemplateSets.LaunchTemplateSet = []ecs.LaunchTemplateSet{}
	for _, t := range list[lo:hi] {
		set := ecs.LaunchTemplateSet{LaunchTemplateId: t.ID, LaunchTemplateName: t.Name, DefaultVersionNumber: 1,
			LatestVersionNumber: 1, CreateTime: fmtTime(t.Created), ModifiedTime: fmtTime(t.Created), ResourceGroupId: defaultResourceGroup}
		set.Tags.Tag = []ecs.Tag{}
		resp.LaunchTemplateSets.LaunchTemplateSet = append(resp.LaunchTemplateSets.LaunchTemplateSet, set)
	}
	return resp, nil
}

func deleteLaunchTemplate(c *call) (any, *apiError) {
	t, e := c.findTemplate(c.p)
	if e != nil {
		return nil, e
	}
	if t == nil {
		return nil, errMissing("LaunchTemplateId")
	}
	delete(c.s.db.Templates, t.ID)
	resp := &ecs.DeleteLaunchTemplateResponse{RequestId: c.reqID, LaunchTemplateId: t.ID}
	resp.LaunchTemplateVersionNumbers.VersionNumbers = []int64{1}
	return resp, nil
}
