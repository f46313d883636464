package emulator

import (
	"sort"
	"strconv"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

func init() {
	register(versionECS, "TagResources", route{fn: tagResources, write: true})
	register(versionECS, "UntagResources", route{fn: untagResources, write: true})
	register(versionECS, "ListTagResources", route{fn: listTagResources})
}

// taggable finds the tag list of an ECS resource and a setter that keeps the
// instance tag index current.
func (c *call) taggable(typ, id string) (get func() []tag, set func([]tag), e *apiError) {
	d := c.s.db
	switch typ {
	case "instance":
		in := d.Instances[id]
		if in == nil || in.Region != c.region {
			return nil, nil, errNotFound("InvalidResourceId.NotFound", id)
		}
		return func() []tag { return in.Tags }, func(t []tag) {
			d.indexTags(in, false)
			in.Tags = t
			d.indexTags(in, true)
		}, nil
	case "securitygroup":
		g := d.SGs[id]
		if g == nil || g.Region != c.region {
			return nil, nil, errNotFound("InvalidResourceId.NotFound", id)
		}
		return func() []tag { return g.Tags }, func(t []tag) { g.Tags = t }, nil
	}
	return nil, nil, errf(400, "InvalidResourceType.NotSupported", "ResourceType %q is not supported by the emulator (instance, securitygroup).", typ)
}

func tagResources(c *call) (any, *apiError) {
	typ, e := c.p.required("ResourceType")
	if e != nil {
		return nil, e
	}
	ids := c.p.list("ResourceId")
	if len(ids) == 0 {
		return nil, errMissing("ResourceId.1")
	}
	tags, e := c.p.tagsParam("Tag")
	if e != nil {
		return nil, e
	}
	if len(tags) == 0 {
		return nil, errMissing("Tag.1.Key")
	}
	var sets []func()
	for _, id := range ids {
		get, set, e := c.taggable(typ, id)
		if e != nil {
			return nil, e
		}
		nt := setTags(get(), tags)
		if len(nt) > 20 {
			return nil, errf(400, "InvalidTagCount", "Resource %s would carry %d tags; at most 20.", id, len(nt))
		}
		sets = append(sets, func() { set(nt) })
	}
	for _, f := range sets {
		f()
	}
	return &ecs.TagResourcesResponse{RequestId: c.reqID}, nil
}

func untagResources(c *call) (any, *apiError) {
	typ, e := c.p.required("ResourceType")
	if e != nil {
		return nil, e
	}
	ids := c.p.list("ResourceId")
	if len(ids) == 0 {
		return nil, errMissing("ResourceId.1")
	}
	keys := c.p.list("TagKey")
	all, _ := c.p.boolv("All", false)
	for _, id := range ids {
		get, set, e := c.taggable(typ, id)
		if e != nil {
			return nil, e
		}
		set(removeTags(get(), keys, all))
	}
	return &ecs.UntagResourcesResponse{RequestId: c.reqID}, nil
}

func listTagResources(c *call) (any, *apiError) {
	typ, e := c.p.required("ResourceType")
	if e != nil {
		return nil, e
	}
	ids := c.p.list("ResourceId")
	filters, e := c.p.tagsParam("Tag")
	if e != nil {
		return nil, e
	}
	if len(ids) == 0 && len(filters) == 0 {
		return nil, errMissing("ResourceId.1")
	}
	type res struct {
		id   string
		tags []tag
	}
	var list []res
	d := c.s.db
	if len(ids) > 0 {
		for _, id := range ids {
			get, _, e := c.taggable(typ, id)
			if e != nil {
				return nil, e
			}
			list = append(list, res{id, get()})
		}
	} else if typ == "instance" {
		f := filters[0]
		v := f.V
		if v == "" {
			v = "*"
		}
		var cand []*instance
		for in := range d.byTag[tagKeyIndex(f.K, v)] {
			cand = append(cand, in)
		}
		sortBySeq(cand)
		for _, in := range cand {
			if in.Region == c.region && matchTags(in.Tags, filters) {
				list = append(list, res{in.ID, in.Tags})
			}
		}
	} else if typ == "securitygroup" {
		for _, g := range d.SGs {
			if g.Region == c.region && matchTags(g.Tags, filters) {
				list = append(list, res{g.ID, g.Tags})
			}
		}
		sort.Slice(list, func(i, j int) bool { return list[i].id < list[j].id })
	} else {
		return nil, errf(400, "InvalidResourceType.NotSupported", "ResourceType %q is not supported by the emulator (instance, securitygroup).", typ)
	}
	var all []ecs.TagResource
	for _, r := range list {
		for _, t := range r.tags {
			all = append(all, ecs.TagResource{ResourceId: r.id, ResourceType: typ, TagKey: t.K, TagValue: t.V})
		}
	}
	start := 0
	if tok := c.p["NextToken"]; tok != "" {
		n, err := strconv.Atoi(tok)
		if err != nil || n < 0 || n > len(all) {
			return nil, errf(400, "InvalidNextToken.Malformed", "The specified NextToken is not valid.")
		}
		start = n
	}
	const pageSize = 50
	end := min(start+pageSize, len(all))
	resp := &ecs.ListTagResourcesResponse{RequestId: c.reqID}
	resp.TagResources.TagResource = append([]ecs.TagResource{}, all[start:end]...)
	if end < len(all) {
		resp.NextToken = strconv.Itoa(end)
	}
	return resp, nil
}
