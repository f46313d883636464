package emulator

import (
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

// The VPC product spells its untag call UnTagResources (ECS: UntagResources).
func init() {
	register(versionVPC, "TagResources", route{fn: vpcTagResources, write: true})
	register(versionVPC, "UnTagResources", route{fn: vpcUnTagResources, write: true})
	register(versionVPC, "ListTagResources", route{fn: vpcListTagResources})
}

// vpcTags is the VPC tag API: ResourceType is case-insensitive and the
// emulator models VPC, VSWITCH, NATGATEWAY and EIP; the vendor's other types are accepted as
// names whose ids never exist here.
var vpcTags = &tagAPI{Product: "VPC", FoldCase: true, Kinds: map[string]*tagKind{
	"VPC":     {Find: findVpcTags, All: allVpcTags},
	"VSWITCH": {Find: findVSwitchTags, All: allVSwitchTags},
	// vpc_nat.go, vpc_eip.go
	"NATGATEWAY": {Find: findNatTags, All: allNatTags},
	"EIP":        {Find: findEipTags, All: allEipTags},
}}

func init() {
	for _, typ := range []string{"ROUTETABLE", "VPNGATEWAY", "COMMONBANDWIDTHPACKAGE",
		"PREFIXLIST", "PUBLICIPADDRESSPOOL", "IPV4GATEWAY", "IPV6GATEWAY", "NETWORKACL", "TRAFFICMIRRORFILTER",
		"TRAFFICMIRRORSESSION", "FLOWLOG", "HAVIP", "DHCPOPTIONSSET", "GATEWAYENDPOINT"} {
		vpcTags.Kinds[typ] = &tagKind{}
	}
}

func findVpcTags(c *call, id string) *tagTarget {
	v := c.s.db.network().Vpcs[id]
	if v == nil || v.Region != c.region {
		return nil
	}
	return &tagTarget{ID: v.ID, Tags: v.Tags, Set: func(t []tag) { v.Tags = t }}
}

func allVpcTags(c *call, filters []tag) []tagTarget {
	var out []tagTarget
	for _, v := range c.s.db.network().Vpcs {
		if v.Region == c.region && len(v.Tags) > 0 && matchTags(v.Tags, filters) {
			out = append(out, *findVpcTags(c, v.ID))
		}
	}
	sortTargets(out)
	return out
}

func findVSwitchTags(c *call, id string) *tagTarget {
	sw := c.s.db.network().VSwitches[id]
	if sw == nil || sw.Region != c.region {
		return nil
	}
	return &tagTarget{ID: sw.ID, Tags: sw.Tags, Set: func(t []tag) { sw.Tags = t }}
}

func allVSwitchTags(c *call, filters []tag) []tagTarget {
	var out []tagTarget
	for _, sw := range c.s.db.network().VSwitches {
		if sw.Region == c.region && len(sw.Tags) > 0 && matchTags(sw.Tags, filters) {
			out = append(out, *findVSwitchTags(c, sw.ID))
		}
	}
	sortTargets(out)
	return out
}

func vpcTagResources(c *call) (any, *apiError) {
	if e := vpcTags.Tag(c); e != nil {
		return nil, e
	}
	return &vpc.TagResourcesResponse{RequestId: c.reqID}, nil
}

func vpcUnTagResources(c *call) (any, *apiError) {
	// The SDK's request also carries Tag.N; its keys name tags to remove, like TagKey.N.
	var extra []string
	for _, m := range c.p.StructList("Tag") {
		if k := m["Key"]; k != "" {
			extra = append(extra, k)
		}
	}
	if e := vpcTags.Untag(c, extra...); e != nil {
		return nil, e
	}
	return &vpc.UnTagResourcesResponse{RequestId: c.reqID}, nil
}

func vpcListTagResources(c *call) (any, *apiError) {
	size, e := c.p.Int("MaxResults", tagListPageSize)
	if e != nil || size < 1 || size > tagListPageSize {
		return nil, errInvalid("MaxResults", "must be 1-%d", tagListPageSize)
	}
	for _, m := range c.p.StructList("Tag") {
		if m["Key"] == "" && m["Value"] != "" {
			return nil, errMissing("Tag.N.Key")
		}
	}
	rows, next, e := vpcTags.List(c, size, false)
	if e != nil {
		return nil, e
	}
	resp := &vpc.ListTagResourcesResponse{RequestId: c.reqID, NextToken: next}
	resp.TagResources.TagResource = make([]vpc.TagResource, 0, len(rows))
	for _, r := range rows {
		resp.TagResources.TagResource = append(resp.TagResources.TagResource,
			vpc.TagResource{ResourceType: r.Type, ResourceId: r.ID, TagKey: r.Key, TagValue: r.Value})
	}
	return resp, nil
}
