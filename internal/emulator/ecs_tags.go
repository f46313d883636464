package emulator

import (
	"strings"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

func init() {
	register(versionECS, "TagResources", route{fn: tagResources, write: true})
	register(versionECS, "UntagResources", route{fn: untagResources, write: true})
	register(versionECS, "ListTagResources", route{fn: listTagResources})
}

// ecsTags is the ECS tag API. Of what the provider creates, ECS tags
// instances, security groups and network interfaces (eni); deployment sets and
// HPC clusters take no tags (their Create calls have no Tag parameter and the
// vendor's ResourceType list does not name them), so they are refused like any
// unknown type. The other types the vendor lists exist only as names here:
// the emulator has no such objects (disks carry no ids of their own).
var ecsTags = &tagAPI{Product: "ECS", Kinds: map[string]*tagKind{
	"instance":      {Find: findInstanceTags, All: allInstanceTags},
	"securitygroup": {Find: findSGTags, All: allSGTags},
	"eni":           {Find: findENITags, All: allENITags},
}}

func init() {
	for _, typ := range []string{"disk", "snapshot", "image", "volume", "ddh", "ddhcluster", "keypair",
		"launchtemplate", "reservedinstance", "snapshotpolicy", "elasticityassurance", "capacityreservation",
		"command", "invocation", "activation", "managedinstance", "prefixlist", "portrangelist"} {
		ecsTags.Kinds[typ] = &tagKind{}
	}
}

func findInstanceTags(c *call, id string) *tagTarget {
	d := c.s.db
	in := d.Instances[id]
	if in == nil || in.Region != c.region {
		return nil
	}
	return &tagTarget{ID: in.ID, Tags: in.Tags, Set: func(t []tag) {
		// Keep the tag index current.
		d.indexTags(in, false)
		in.Tags = t
		d.indexTags(in, true)
	}}
}

func allInstanceTags(c *call, filters []tag) []tagTarget {
	d := c.s.db
	var cand []*instance
	if len(filters) > 0 {
		f := filters[0]
		v := f.V
		if v == "" {
			v = "*"
		}
		for in := range d.byTag[tagKeyIndex(f.K, v)] {
			cand = append(cand, in)
		}
		sortBySeq(cand)
	} else {
		cand = d.order
	}
	var out []tagTarget
	for _, in := range cand {
		if in.Region == c.region && len(in.Tags) > 0 && matchTags(in.Tags, filters) {
			out = append(out, *findInstanceTags(c, in.ID))
		}
	}
	return out
}

func findSGTags(c *call, id string) *tagTarget {
	g := c.s.db.SGs[id]
	if g == nil || g.Region != c.region {
		return nil
	}
	return &tagTarget{ID: g.ID, Tags: g.Tags, Set: func(t []tag) { g.Tags = t }}
}

func allSGTags(c *call, filters []tag) []tagTarget {
	var out []tagTarget
	for _, g := range c.s.db.SGs {
		if g.Region == c.region && len(g.Tags) > 0 && matchTags(g.Tags, filters) {
			out = append(out, *findSGTags(c, g.ID))
		}
	}
	sortTargets(out)
	return out
}

// primaryENI is the id of an instance's primary network interface.
func primaryENI(in *instance) string { return "eni-" + in.ID[2:] }

// eniOwner finds the instance whose interface has the given id, the way
// DescribeInstances shows interfaces (see sdkInstance).
func (d *db) eniOwner(id string) *instance {
	if !strings.HasPrefix(id, "eni-") {
		return nil
	}
	if in := d.Instances["i-"+id[4:]]; in != nil {
		return in
	}
	if e := d.ENITags[id]; e != nil {
		return d.Instances[e.Instance]
	}
	for _, in := range d.order {
		for j, n := range in.NICs {
			if n.ID == id && !(j == 0 && n.IP == in.IP) {
				return in
			}
		}
	}
	return nil
}

func findENITags(c *call, id string) *tagTarget {
	d := c.s.db
	in := d.eniOwner(id)
	if in == nil || in.Region != c.region {
		return nil
	}
	var cur []tag
	if e := d.ENITags[id]; e != nil {
		cur = e.Tags
	}
	return &tagTarget{ID: id, Tags: cur, Set: func(t []tag) {
		if len(t) == 0 {
			delete(d.ENITags, id)
			return
		}
		d.ENITags[id] = &eniTags{Instance: in.ID, Tags: t}
	}}
}

func allENITags(c *call, filters []tag) []tagTarget {
	var out []tagTarget
	for id, e := range c.s.db.ENITags {
		if in := c.s.db.Instances[e.Instance]; in != nil && in.Region == c.region && matchTags(e.Tags, filters) {
			out = append(out, *findENITags(c, id))
		}
	}
	sortTargets(out)
	return out
}

func tagResources(c *call) (any, *apiError) {
	if e := ecsTags.Tag(c); e != nil {
		return nil, e
	}
	return &ecs.TagResourcesResponse{RequestId: c.reqID}, nil
}

func untagResources(c *call) (any, *apiError) {
	if e := ecsTags.Untag(c); e != nil {
		return nil, e
	}
	return &ecs.UntagResourcesResponse{RequestId: c.reqID}, nil
}

func listTagResources(c *call) (any, *apiError) {
	rows, next, e := ecsTags.List(c, tagListPageSize, true)
	if e != nil {
		return nil, e
	}
	resp := &ecs.ListTagResourcesResponse{RequestId: c.reqID, NextToken: next}
	resp.TagResources.TagResource = make([]ecs.TagResource, 0, len(rows))
	for _, r := range rows {
		resp.TagResources.TagResource = append(resp.TagResources.TagResource,
			ecs.TagResource{ResourceType: r.Type, ResourceId: r.ID, TagKey: r.Key, TagValue: r.Value})
	}
	return resp, nil
}
