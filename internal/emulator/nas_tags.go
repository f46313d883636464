package emulator

import (
	"github.com/aliyun/alibaba-cloud-sdk-go/services/nas"
)

// NAS tags (API 2017-06-26): TagResources / UntagResources / ListTagResources on
// ResourceType "filesystem", the same engine as ECS and VPC. DescribeFileSystems
// reports each file system's tags and filters by Tag.N (see nas.go).
func init() {
	register(versionNAS, "TagResources", route{fn: nasTagResources, write: true, regionOptional: true})
	register(versionNAS, "UntagResources", route{fn: nasUntagResources, write: true, regionOptional: true})
	register(versionNAS, "ListTagResources", route{fn: nasListTagResources, regionOptional: true})
}

// nasTags is the NAS tag API. The vendor's only ResourceType is "filesystem",
// spelled in lower case.
var nasTags = &tagAPI{Product: "NAS", Kinds: map[string]*tagKind{
	"filesystem": {Find: findFSTags, All: allFSTags},
}}

func findFSTags(c *call, id string) *tagTarget {
	f := c.s.db.FSs[id]
	if f == nil || f.Region != c.region {
		return nil
	}
	return &tagTarget{ID: f.ID, Tags: f.Tags, Set: func(t []tag) { f.Tags = t }}
}

func allFSTags(c *call, filters []tag) []tagTarget {
	var out []tagTarget
	for _, f := range c.s.db.FSs {
		if f.Region == c.region && len(f.Tags) > 0 && matchTags(f.Tags, filters) {
			out = append(out, *findFSTags(c, f.ID))
		}
	}
	sortTargets(out)
	return out
}

func nasTagResources(c *call) (any, *apiError) {
	if e := nasTags.Tag(c); e != nil {
		return nil, e
	}
	return &nas.TagResourcesResponse{RequestId: c.reqID}, nil
}

func nasUntagResources(c *call) (any, *apiError) {
	if e := nasTags.Untag(c); e != nil {
		return nil, e
	}
	return &nas.UntagResourcesResponse{RequestId: c.reqID}, nil
}

// nasListTagResources pages by NextToken alone: the NAS request has no
// MaxResults, so every page holds up to tagListPageSize rows.
func nasListTagResources(c *call) (any, *apiError) {
	rows, next, e := nasTags.List(c, tagListPageSize, false)
	if e != nil {
		return nil, e
	}
	resp := &nas.ListTagResourcesResponse{RequestId: c.reqID, NextToken: next}
	resp.TagResources.TagResource = make([]nas.TagResource, 0, len(rows))
	for _, r := range rows {
		resp.TagResources.TagResource = append(resp.TagResources.TagResource,
			nas.TagResource{ResourceType: r.Type, ResourceId: r.ID, TagKey: r.Key, TagValue: r.Value})
	}
	return resp, nil
}

// sdkFSTags is a file system's tags as DescribeFileSystems shows them.
func sdkFSTags(f *fileSystem) []nas.Tag {
	out := make([]nas.Tag, 0, len(f.Tags))
	for _, t := range f.Tags {
		out = append(out, nas.Tag{Key: t.K, Value: t.V})
	}
	return out
}
