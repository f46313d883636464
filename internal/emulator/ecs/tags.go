package ecs

import (
	"strings"

	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "TagResources", core.Route{Fn: handle(tagResources), Write: true})
	core.Register(Version, "UntagResources", core.Route{Fn: handle(untagResources), Write: true})
	core.Register(Version, "ListTagResources", core.Route{Fn: handle(listTagResources)})
}

// ecsTags is the ECS tag API. Of what the provider creates, ECS tags
// instances, security groups, network interfaces (eni) and custom images; deployment sets and
// HPC clusters take no tags (their Create calls have no Tag parameter and the
// vendor's ResourceType list does not name them), so they are refused like any
// unknown type. The other types the vendor lists exist only as names here:
// the emulator has no such objects (disks carry no ids of their own).
var ecsTags = &core.TagAPI[*call]{Product: "ECS", Kinds: map[string]*core.TagKind[*call]{
	"instance":      {Find: findInstanceTags, All: allInstanceTags},
	"securitygroup": {Find: findSGTags, All: allSGTags},
	"eni":           {Find: findENITags, All: allENITags},
	"image":         {Find: findImageTags, All: allImageTags},
}}

func init() {
	for _, typ := range []string{"disk", "snapshot", "volume", "ddh", "ddhcluster", "keypair",
		"launchtemplate", "reservedinstance", "snapshotpolicy", "elasticityassurance", "capacityreservation",
		"command", "invocation", "activation", "managedinstance", "prefixlist", "portrangelist"} {
		ecsTags.Kinds[typ] = &core.TagKind[*call]{}
	}
}

func findInstanceTags(c *call, id string) *core.TagTarget {
	d := c.st
	in := d.Instances[id]
	if in == nil || in.Region != c.Region {
		return nil
	}
	return &core.TagTarget{ID: in.ID, Tags: in.Tags, Set: func(t []core.Tag) {
		// Keep the tag index current.
		d.indexTags(in, false)
		in.Tags = t
		d.indexTags(in, true)
	}}
}

func allInstanceTags(c *call, filters []core.Tag) []core.TagTarget {
	d := c.st
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
	var out []core.TagTarget
	for _, in := range cand {
		if in.Region == c.Region && len(in.Tags) > 0 && core.MatchTags(in.Tags, filters) {
			out = append(out, *findInstanceTags(c, in.ID))
		}
	}
	return out
}

func findSGTags(c *call, id string) *core.TagTarget {
	g := c.st.SGs[id]
	if g == nil || g.Region != c.Region {
		return nil
	}
	return &core.TagTarget{ID: g.ID, Tags: g.Tags, Set: func(t []core.Tag) { g.Tags = t }}
}

func allSGTags(c *call, filters []core.Tag) []core.TagTarget {
	var out []core.TagTarget
	for _, g := range c.st.SGs {
		if g.Region == c.Region && len(g.Tags) > 0 && core.MatchTags(g.Tags, filters) {
			out = append(out, *findSGTags(c, g.ID))
		}
	}
	core.SortTargets(out)
	return out
}

// primaryENI is the id of an instance's primary network interface.
func primaryENI(in *instance) string { return "eni-" + in.ID[2:] }

// eniOwner finds the instance whose interface has the given id, the way
// DescribeInstances shows interfaces (see sdkInstance).
func (d *Store) eniOwner(id string) *instance {
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

func findENITags(c *call, id string) *core.TagTarget {
	d := c.st
	in := d.eniOwner(id)
	if in == nil || in.Region != c.Region {
		return nil
	}
	var cur []core.Tag
	if e := d.ENITags[id]; e != nil {
		cur = e.Tags
	}
	return &core.TagTarget{ID: id, Tags: cur, Set: func(t []core.Tag) {
		if len(t) == 0 {
			delete(d.ENITags, id)
			return
		}
		d.ENITags[id] = &eniTags{Instance: in.ID, Tags: t}
	}}
}

func allENITags(c *call, filters []core.Tag) []core.TagTarget {
	var out []core.TagTarget
	for id, e := range c.st.ENITags {
		if in := c.st.Instances[e.Instance]; in != nil && in.Region == c.Region && core.MatchTags(e.Tags, filters) {
			out = append(out, *findENITags(c, id))
		}
	}
	core.SortTargets(out)
	return out
}

func tagResources(c *call) (any, *core.Error) {
	if e := ecsTags.Tag(c); e != nil {
		return nil, e
	}
	return &ecssdk.TagResourcesResponse{RequestId: c.ReqID}, nil
}

func untagResources(c *call) (any, *core.Error) {
	if e := ecsTags.Untag(c); e != nil {
		return nil, e
	}
	return &ecssdk.UntagResourcesResponse{RequestId: c.ReqID}, nil
}

func listTagResources(c *call) (any, *core.Error) {
	rows, next, e := ecsTags.List(c, core.TagListPageSize, true)
	if e != nil {
		return nil, e
	}
	resp := &ecssdk.ListTagResourcesResponse{RequestId: c.ReqID, NextToken: next}
	resp.TagResources.TagResource = make([]ecssdk.TagResource, 0, len(rows))
	for _, r := range rows {
		resp.TagResources.TagResource = append(resp.TagResources.TagResource,
			ecssdk.TagResource{ResourceType: r.Type, ResourceId: r.ID, TagKey: r.Key, TagValue: r.Value})
	}
	return resp, nil
}

// findImageTags finds a custom image of the call's region; public images carry no tags of the
// caller's.
func findImageTags(c *call, id string) *core.TagTarget {
	img := c.customImage(id)
	if img == nil {
		return nil
	}
	return &core.TagTarget{ID: img.ID, Tags: img.Tags, Set: func(t []core.Tag) { img.Tags = t }}
}

func allImageTags(c *call, filters []core.Tag) []core.TagTarget {
	var out []core.TagTarget
	for _, img := range c.st.imagesIn(c.Region) {
		if len(img.Tags) > 0 && core.MatchTags(img.Tags, filters) {
			out = append(out, *findImageTags(c, img.ID))
		}
	}
	core.SortTargets(out)
	return out
}
