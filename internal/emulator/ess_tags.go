package emulator

import (
	"sort"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"
)

func init() {
	register(versionESS, "TagResources", route{fn: essTagResources, write: true})
	register(versionESS, "UntagResources", route{fn: essUntagResources, write: true})
	register(versionESS, "ListTagResources", route{fn: essListTagResources})
}

// essTags is the ESS tag API: scaling groups are its one resource type ("scalinggroup").
var essTags = &tagAPI{Product: "ESS", Kinds: map[string]*tagKind{
	"scalinggroup": {Find: findGroupTags, All: allGroupTags},
}}

func findGroupTags(c *call, id string) *tagTarget {
	g, e := c.group(id)
	if e != nil {
		return nil
	}
	return &tagTarget{ID: g.ID, Tags: g.Tags, Set: func(t []tag) { g.Tags = t }}
}

func allGroupTags(c *call, filters []tag) []tagTarget {
	var out []tagTarget
	for _, g := range c.s.db.ESS.Groups {
		if g.Region == c.region && !c.s.groupGone(g, c.now) && len(g.Tags) > 0 && matchTags(g.Tags, filters) {
			out = append(out, *findGroupTags(c, g.ID))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func essTagResources(c *call) (any, *apiError) {
	if e := essTags.Tag(c); e != nil {
		return nil, e
	}
	return &ess.TagResourcesResponse{RequestId: c.reqID}, nil
}

func essUntagResources(c *call) (any, *apiError) {
	if e := essTags.Untag(c); e != nil {
		return nil, e
	}
	return &ess.UntagResourcesResponse{RequestId: c.reqID}, nil
}

func essListTagResources(c *call) (any, *apiError) {
	rows, next, e := essTags.List(c, tagListPageSize, false)
	if e != nil {
		return nil, e
	}
	resp := &ess.ListTagResourcesResponse{RequestId: c.reqID, NextToken: next}
	resp.TagResources.TagResource = make([]ess.TagResource, 0, len(rows))
	for _, r := range rows {
		resp.TagResources.TagResource = append(resp.TagResources.TagResource,
			ess.TagResource{ResourceType: r.Type, ResourceId: r.ID, TagKey: r.Key, TagValue: r.Value})
	}
	return resp, nil
}
