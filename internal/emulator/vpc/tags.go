package vpc

import (
	vpcsdk "github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// The VPC product spells its untag call UnTagResources (ECS: UntagResources).
func init() {
	core.Register(Version, "TagResources", core.Route{Fn: vpcTagResources, Write: true})
	core.Register(Version, "UnTagResources", core.Route{Fn: vpcUnTagResources, Write: true})
	core.Register(Version, "ListTagResources", core.Route{Fn: vpcListTagResources})
}

// vpcTags is the VPC tag API: ResourceType is case-insensitive and the
// emulator models VPC, VSWITCH, NATGATEWAY and EIP; the vendor's other types are accepted as
// names whose ids never exist here.
var vpcTags = &core.TagAPI[*core.Call]{Product: "VPC", FoldCase: true, Kinds: map[string]*core.TagKind[*core.Call]{
	"VPC":     {Find: findVpcTags, All: allVpcTags},
	"VSWITCH": {Find: findVSwitchTags, All: allVSwitchTags},
	// nat.go, eip.go
	"NATGATEWAY": {Find: findNatTags, All: allNatTags},
	"EIP":        {Find: findEipTags, All: allEipTags},
}}

func init() {
	for _, typ := range []string{"ROUTETABLE", "VPNGATEWAY", "COMMONBANDWIDTHPACKAGE",
		"PREFIXLIST", "PUBLICIPADDRESSPOOL", "IPV4GATEWAY", "IPV6GATEWAY", "NETWORKACL", "TRAFFICMIRRORFILTER",
		"TRAFFICMIRRORSESSION", "FLOWLOG", "HAVIP", "DHCPOPTIONSSET", "GATEWAYENDPOINT"} {
		vpcTags.Kinds[typ] = &core.TagKind[*core.Call]{}
	}
}

func findVpcTags(c *core.Call, id string) *core.TagTarget {
	v := StoreIn(c.Stores).Vpcs[id]
	if v == nil || v.Region != c.Region {
		return nil
	}
	return &core.TagTarget{ID: v.ID, Tags: v.Tags, Set: func(t []core.Tag) { v.Tags = t }}
}

func allVpcTags(c *core.Call, filters []core.Tag) []core.TagTarget {
	var out []core.TagTarget
	for _, v := range StoreIn(c.Stores).Vpcs {
		if v.Region == c.Region && len(v.Tags) > 0 && core.MatchTags(v.Tags, filters) {
			out = append(out, *findVpcTags(c, v.ID))
		}
	}
	core.SortTargets(out)
	return out
}

func findVSwitchTags(c *core.Call, id string) *core.TagTarget {
	sw := StoreIn(c.Stores).VSwitches[id]
	if sw == nil || sw.Region != c.Region {
		return nil
	}
	return &core.TagTarget{ID: sw.ID, Tags: sw.Tags, Set: func(t []core.Tag) { sw.Tags = t }}
}

func allVSwitchTags(c *core.Call, filters []core.Tag) []core.TagTarget {
	var out []core.TagTarget
	for _, sw := range StoreIn(c.Stores).VSwitches {
		if sw.Region == c.Region && len(sw.Tags) > 0 && core.MatchTags(sw.Tags, filters) {
			out = append(out, *findVSwitchTags(c, sw.ID))
		}
	}
	core.SortTargets(out)
	return out
}

func vpcTagResources(c *core.Call) (any, *core.Error) {
	if e := vpcTags.Tag(c); e != nil {
		return nil, e
	}
	return &vpcsdk.TagResourcesResponse{RequestId: c.ReqID}, nil
}

func vpcUnTagResources(c *core.Call) (any, *core.Error) {
	// The SDK's request also carries Tag.N; its keys name tags to remove, like TagKey.N.
	var extra []string
	for _, m := range c.P.StructList("Tag") {
		if k := m["Key"]; k != "" {
			extra = append(extra, k)
		}
	}
	if e := vpcTags.Untag(c, extra...); e != nil {
		return nil, e
	}
	return &vpcsdk.UnTagResourcesResponse{RequestId: c.ReqID}, nil
}

func vpcListTagResources(c *core.Call) (any, *core.Error) {
	size, e := c.P.Int("MaxResults", core.TagListPageSize)
	if e != nil || size < 1 || size > core.TagListPageSize {
		return nil, core.ErrInvalid("MaxResults", "must be 1-%d", core.TagListPageSize)
	}
	for _, m := range c.P.StructList("Tag") {
		if m["Key"] == "" && m["Value"] != "" {
			return nil, core.ErrMissing("Tag.N.Key")
		}
	}
	rows, next, e := vpcTags.List(c, size, false)
	if e != nil {
		return nil, e
	}
	resp := &vpcsdk.ListTagResourcesResponse{RequestId: c.ReqID, NextToken: next}
	resp.TagResources.TagResource = make([]vpcsdk.TagResource, 0, len(rows))
	for _, r := range rows {
		resp.TagResources.TagResource = append(resp.TagResources.TagResource,
			vpcsdk.TagResource{ResourceType: r.Type, ResourceId: r.ID, TagKey: r.Key, TagValue: r.Value})
	}
	return resp, nil
}
