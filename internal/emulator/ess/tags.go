package ess

import (
	"sort"

	esssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ess"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "TagResources", core.Route{Fn: handle(essTagResources), Write: true})
	core.Register(Version, "UntagResources", core.Route{Fn: handle(essUntagResources), Write: true})
	core.Register(Version, "ListTagResources", core.Route{Fn: handle(essListTagResources)})
}

// groupTags is the ESS tag API: scaling groups are its one resource type ("scalinggroup").
var groupTags = &core.TagAPI[*call]{Product: "ESS", Kinds: map[string]*core.TagKind[*call]{
	"scalinggroup": {Find: findGroupTags, All: allGroupTags},
}}

func findGroupTags(c *call, id string) *core.TagTarget {
	g, e := c.group(id)
	if e != nil {
		return nil
	}
	return &core.TagTarget{ID: g.ID, Tags: g.Tags, Set: func(t []core.Tag) { g.Tags = t }}
}

func allGroupTags(c *call, filters []core.Tag) []core.TagTarget {
	var out []core.TagTarget
	for _, g := range c.st.Groups {
		if g.Region == c.Region && !c.groupGone(g) && len(g.Tags) > 0 && core.MatchTags(g.Tags, filters) {
			out = append(out, *findGroupTags(c, g.ID))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func essTagResources(c *call) (any, *core.Error) {
	if e := groupTags.Tag(c); e != nil {
		return nil, e
	}
	return &esssdk.TagResourcesResponse{RequestId: c.ReqID}, nil
}

func essUntagResources(c *call) (any, *core.Error) {
	if e := groupTags.Untag(c); e != nil {
		return nil, e
	}
	return &esssdk.UntagResourcesResponse{RequestId: c.ReqID}, nil
}

func essListTagResources(c *call) (any, *core.Error) {
	rows, next, e := groupTags.List(c, core.TagListPageSize, false)
	if e != nil {
		return nil, e
	}
	resp := &esssdk.ListTagResourcesResponse{RequestId: c.ReqID, NextToken: next}
	resp.TagResources.TagResource = make([]esssdk.TagResource, 0, len(rows))
	for _, r := range rows {
		resp.TagResources.TagResource = append(resp.TagResources.TagResource,
			esssdk.TagResource{ResourceType: r.Type, ResourceId: r.ID, TagKey: r.Key, TagValue: r.Value})
	}
	return resp, nil
}
