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
var essTags = &tagAPI{product: "ESS", kinds: map[string]*tagKind{
	"scalinggroup": {find: findGroupTags, all: allGroupTags},
}}

func findGroupTags(c *call, id string) *tagTarget {
	g, e := c.group(id)
	if e != nil {
		return nil
	}
	return &tagTarget{id: g.ID, tags: g.Tags, set: func(t []tag) { g.Tags = t }}
}

func allGroupTags(c *call, filters []tag) []tagTarget {
	var out []tagTarget
	for _, g := range c.s.db.ESS.Groups {
		if g.Region == c.region && !c.s.groupGone(g, c.now) && len(g.Tags) > 0 && matchTags(g.Tags, filters) {
			out = append(out, *findGroupTags(c, g.ID))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func essTagResources(c *call) (any, *apiError) {
	if e := essTags.tag(c); e != nil {
		return nil, e
	}
	return &ess.TagResourcesResponse{RequestId: c.reqID}, nil
}

func essUntagResources(c *call) (any, *apiError) {
	if e := essTags.untag(c); e != nil {
		return nil, e
	}
	return &ess.UntagResourcesResponse{RequestId: c.reqID}, nil
}

func essListTagResources(c *call) (any, *apiError) {
	rows, next, e := essTags.list(c, tagListPageSize, false)
	if e != nil {
		return nil, e
	}
	resp := &ess.ListTagResourcesResponse{RequestId: c.reqID, NextToken: next}
	resp.TagResources.TagResource = make([]ess.TagResource, 0, len(rows))
	for _, r := range rows {
		resp.TagResources.TagResource = append(resp.TagResources.TagResource,
			ess.TagResource{ResourceType: r.typ, ResourceId: r.id, TagKey: r.key, TagValue: r.value})
	}
	return resp, nil
}
