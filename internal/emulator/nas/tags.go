package nas

import (
	nassdk "github.com/aliyun/alibaba-cloud-sdk-go/services/nas"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// NAS tags (API 2017-06-26): TagResources / UntagResources / ListTagResources on
// ResourceType "filesystem", the same engine as ECS and VPC. DescribeFileSystems
// reports each file system's tags and filters by Tag.N (see nas.go).
func init() {
	core.Register(Version, "TagResources", core.Route{Fn: nasTagResources, Write: true, RegionOptional: true})
	core.Register(Version, "UntagResources", core.Route{Fn: nasUntagResources, Write: true, RegionOptional: true})
	core.Register(Version, "ListTagResources", core.Route{Fn: nasListTagResources, RegionOptional: true})
}

// nasTags is the NAS tag API. The vendor's only ResourceType is "filesystem",
// spelled in lower case.
var nasTags = &core.TagAPI[*core.Call]{Product: "NAS", Kinds: map[string]*core.TagKind[*core.Call]{
	"filesystem": {Find: findFSTags, All: allFSTags},
}}

func findFSTags(c *core.Call, id string) *core.TagTarget {
	f := StoreIn(c.Stores).FileSystems[id]
	if f == nil || f.Region != c.Region {
		return nil
	}
	return &core.TagTarget{ID: f.ID, Tags: f.Tags, Set: func(t []core.Tag) { f.Tags = t }}
}

func allFSTags(c *core.Call, filters []core.Tag) []core.TagTarget {
	var out []core.TagTarget
	for _, f := range StoreIn(c.Stores).FileSystems {
		if f.Region == c.Region && len(f.Tags) > 0 && core.MatchTags(f.Tags, filters) {
			out = append(out, *findFSTags(c, f.ID))
		}
	}
	core.SortTargets(out)
	return out
}

func nasTagResources(c *core.Call) (any, *core.Error) {
	if e := nasTags.Tag(c); e != nil {
		return nil, e
	}
	return &nassdk.TagResourcesResponse{RequestId: c.ReqID}, nil
}

func nasUntagResources(c *core.Call) (any, *core.Error) {
	if e := nasTags.Untag(c); e != nil {
		return nil, e
	}
	return &nassdk.UntagResourcesResponse{RequestId: c.ReqID}, nil
}

// nasListTagResources pages by NextToken alone: the NAS request has no
// MaxResults, so every page holds up to core.TagListPageSize rows.
func nasListTagResources(c *core.Call) (any, *core.Error) {
	rows, next, e := nasTags.List(c, core.TagListPageSize, false)
	if e != nil {
		return nil, e
	}
	resp := &nassdk.ListTagResourcesResponse{RequestId: c.ReqID, NextToken: next}
	resp.TagResources.TagResource = make([]nassdk.TagResource, 0, len(rows))
	for _, r := range rows {
		resp.TagResources.TagResource = append(resp.TagResources.TagResource,
			nassdk.TagResource{ResourceType: r.Type, ResourceId: r.ID, TagKey: r.Key, TagValue: r.Value})
	}
	return resp, nil
}

// sdkFSTags is a file system's tags as DescribeFileSystems shows them.
func sdkFSTags(f *FileSystem) []nassdk.Tag {
	out := make([]nassdk.Tag, 0, len(f.Tags))
	for _, t := range f.Tags {
		out = append(out, nassdk.Tag{Key: t.K, Value: t.V})
	}
	return out
}
