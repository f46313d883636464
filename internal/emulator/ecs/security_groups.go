package ecs

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "CreateSecurityGroup", core.Route{Fn: handle(createSecurityGroup), Write: true, Idem: true})
	core.Register(Version, "DescribeSecurityGroups", core.Route{Fn: handle(describeSecurityGroups)})
	core.Register(Version, "DescribeSecurityGroupAttribute", core.Route{Fn: handle(describeSecurityGroupAttribute)})
	core.Register(Version, "AuthorizeSecurityGroup", core.Route{Fn: handle(authorizeIngress), Write: true, Idem: true})
	core.Register(Version, "AuthorizeSecurityGroupEgress", core.Route{Fn: handle(authorizeEgress), Write: true, Idem: true})
	core.Register(Version, "RevokeSecurityGroup", core.Route{Fn: handle(revokeIngress), Write: true, Idem: true})
	core.Register(Version, "RevokeSecurityGroupEgress", core.Route{Fn: handle(revokeEgress), Write: true, Idem: true})
	core.Register(Version, "DeleteSecurityGroup", core.Route{Fn: handle(deleteSecurityGroup), Write: true})
	core.Register(Version, "ModifySecurityGroupAttribute", core.Route{Fn: handle(modifySecurityGroupAttribute), Write: true})
}

const maxRulesPerGroup = 1000

func createSecurityGroup(c *call) (any, *core.Error) {
	// VpcId is optional at the vendor: a group without one is a classic-network group, which
	// no instance in a VPC can join.
	vpcID := c.P["VpcId"]
	d := c.st
	if v := c.network().Vpcs[vpcID]; vpcID != "" && (v == nil || v.Region != c.Region) {
		return nil, core.ErrNotFound("InvalidVpcId.NotFound", vpcID)
	}
	typ := cmp.Or(c.P["SecurityGroupType"], "normal")
	if typ != "normal" && typ != "enterprise" {
		return nil, core.ErrInvalid("SecurityGroupType", "must be normal or enterprise")
	}
	if e := checkSGNameDesc(c.P); e != nil {
		return nil, e
	}
	tags, e := c.P.Tags("Tag")
	if e != nil {
		return nil, e
	}
	g := &securityGroup{ID: c.Env.NewID("sg"), Region: c.Region, VpcID: vpcID, Name: c.P["SecurityGroupName"],
		Desc: c.P["Description"], Type: typ, Created: c.Now.UnixNano(), Tags: tags}
	d.SGs[g.ID] = g
	return &ecssdk.CreateSecurityGroupResponse{RequestId: c.ReqID, SecurityGroupId: g.ID}, nil
}

// checkSGNameDesc applies the vendor's rules to SecurityGroupName (2-128
// characters, a letter first, not a URL) and Description (2-256 characters,
// not a URL) when they are given.
func checkSGNameDesc(p core.Params) *core.Error {
	if n := p["SecurityGroupName"]; n != "" {
		r := []rune(n)
		if len(r) < 2 || len(r) > 128 || !unicode.IsLetter(r[0]) || isURL(n) {
			return core.Errf(400, "InvalidSecurityGroupName.Malformed",
				"SecurityGroupName %q must be 2-128 characters, start with a letter and not with http:// or https://.", n)
		}
	}
	if d := p["Description"]; d != "" {
		if n := len([]rune(d)); n < 2 || n > 256 || isURL(d) {
			return core.Errf(400, "InvalidDescription.Malformed",
				"Description must be 2-256 characters and not start with http:// or https://.")
		}
	}
	return nil
}

func isURL(s string) bool { return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") }

// modifySecurityGroupAttribute renames a group or changes its description;
// a parameter not sent is left as it is.
func modifySecurityGroupAttribute(c *call) (any, *core.Error) {
	g, e := c.findSG()
	if e != nil {
		return nil, e
	}
	if e := checkSGNameDesc(c.P); e != nil {
		return nil, e
	}
	if n, ok := c.P["SecurityGroupName"]; ok && n != "" {
		g.Name = n
	}
	if d, ok := c.P["Description"]; ok && d != "" {
		g.Desc = d
	}
	return &ecssdk.ModifySecurityGroupAttributeResponse{RequestId: c.ReqID}, nil
}

func (c *call) findSG() (*securityGroup, *core.Error) {
	id, e := c.P.Required("SecurityGroupId")
	if e != nil {
		return nil, e
	}
	g := c.st.SGs[id]
	if g == nil || g.Region != c.Region {
		return nil, core.ErrNotFound("InvalidSecurityGroupId.NotFound", id)
	}
	return g, nil
}

func describeSecurityGroups(c *call) (any, *core.Error) {
	number, size, e := c.page(50)
	if e != nil {
		return nil, e
	}
	// MaxResults/NextToken, the vendor's recommended paging, takes over when sent.
	tp, byToken, e := c.tokenPage(10, 1, 100)
	if e != nil {
		return nil, e
	}
	tags, e := c.P.Tags("Tag")
	if e != nil {
		return nil, e
	}
	ids, e := c.P.JSONList("SecurityGroupIds")
	if e != nil {
		return nil, e
	}
	if v := c.P["SecurityGroupId"]; v != "" {
		ids = append(ids, v)
	}
	var list []*securityGroup
	for _, g := range c.st.SGs {
		if g.Region != c.Region || (len(ids) > 0 && !slices.Contains(ids, g.ID)) || (c.P["VpcId"] != "" && g.VpcID != c.P["VpcId"]) ||
			(c.P["SecurityGroupName"] != "" && g.Name != c.P["SecurityGroupName"]) || !core.MatchTags(g.Tags, tags) {
			continue
		}
		list = append(list, g)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	lo, hi := core.PageBounds(len(list), number, size)
	resp := &ecssdk.DescribeSecurityGroupsResponse{RequestId: c.ReqID, RegionId: c.Region, PageNumber: number, PageSize: size, TotalCount: len(list)}
	if byToken {
		lo, hi, resp.NextToken = tp.bounds(len(list))
		resp.PageSize, resp.PageNumber = 0, 0
	}
	resp.SecurityGroups.SecurityGroup = []ecssdk.SecurityGroup{}
	for _, g := range list[lo:hi] {
		out := ecssdk.SecurityGroup{SecurityGroupId: g.ID, SecurityGroupName: g.Name, Description: g.Desc, SecurityGroupType: g.Type,
			VpcId: g.VpcID, CreationTime: core.FormatTime(g.Created), EcsCount: c.st.refs[g.ID], RuleCount: len(g.Rules),
			ResourceGroupId: core.DefaultResourceGroup}
		out.Tags.Tag = []ecssdk.Tag{}
		for _, t := range g.Tags {
			out.Tags.Tag = append(out.Tags.Tag, ecssdk.Tag{Key: t.K, Value: t.V, TagKey: t.K, TagValue: t.V})
		}
		resp.SecurityGroups.SecurityGroup = append(resp.SecurityGroups.SecurityGroup, out)
	}
	return resp, nil
}

func describeSecurityGroupAttribute(c *call) (any, *core.Error) {
	g, e := c.findSG()
	if e != nil {
		return nil, e
	}
	dir := cmp.Or(c.P["Direction"], "all")
	if dir != "all" && dir != "ingress" && dir != "egress" {
		return nil, core.ErrInvalid("Direction", "must be all, ingress or egress")
	}
	// Rules page by MaxResults (10-1000, default 500) and NextToken.
	tp, byToken, e := c.tokenPage(500, 10, 1000)
	if e != nil {
		return nil, e
	}
	if !byToken {
		tp = tokenPaging{size: 500}
	}
	resp := &ecssdk.DescribeSecurityGroupAttributeResponse{RequestId: c.ReqID, RegionId: g.Region, SecurityGroupId: g.ID,
		SecurityGroupName: g.Name, Description: g.Desc, VpcId: g.VpcID, InnerAccessPolicy: "Accept"}
	resp.Permissions.Permission = []ecssdk.Permission{}
	var rules []rule
	for _, r := range g.Rules {
		if dir == "all" || r.Direction == dir {
			rules = append(rules, r)
		}
	}
	lo, hi, next := tp.bounds(len(rules))
	resp.NextToken = next
	for _, r := range rules[lo:hi] {
		p := ecssdk.Permission{SecurityGroupRuleId: r.ID, Direction: r.Direction, IpProtocol: r.Protocol, PortRange: r.PortRange,
			Policy: r.Policy, Priority: strconv.Itoa(r.Priority), Description: r.Desc, CreateTime: core.FormatTime(r.Created), NicType: "intranet"}
		if r.Direction == "ingress" {
			p.SourceCidrIp, p.Ipv6SourceCidrIp, p.SourcePrefixListId, p.SourceGroupId = r.Cidr, r.Ipv6Cidr, r.Prefix, r.Group
		} else {
			p.DestCidrIp, p.Ipv6DestCidrIp, p.DestPrefixListId, p.DestGroupId = r.Cidr, r.Ipv6Cidr, r.Prefix, r.Group
		}
		resp.Permissions.Permission = append(resp.Permissions.Permission, p)
	}
	return resp, nil
}

// ruleParams reads Permissions.N.* (and the legacy top-level single-rule
// parameters) for one direction.
func (c *call) ruleParams(dir string) ([]rule, *core.Error) {
	groups := c.P.StructList("Permissions")
	if len(groups) == 0 && c.P["IpProtocol"] != "" {
		legacy := map[string]string{}
		for _, k := range []string{"IpProtocol", "PortRange", "SourceCidrIp", "Ipv6SourceCidrIp", "SourcePrefixListId",
			"SourceGroupId", "DestCidrIp", "Ipv6DestCidrIp", "DestPrefixListId", "DestGroupId", "Policy", "Priority", "Description"} {
			if v, ok := c.P[k]; ok {
				legacy[k] = v
			}
		}
		groups = []map[string]string{legacy}
	}
	if len(groups) == 0 {
		return nil, core.ErrMissing("Permissions.1.IpProtocol")
	}
	side := "Source"
	if dir == "egress" {
		side = "Dest"
	}
	var out []rule
	for i, m := range groups {
		name := fmt.Sprintf("Permissions.%d", i+1)
		r := rule{Direction: dir, Protocol: strings.ToUpper(m["IpProtocol"]), PortRange: m["PortRange"],
			Cidr: m[side+"CidrIp"], Ipv6Cidr: m["Ipv6"+side+"CidrIp"], Prefix: m[side+"PrefixListId"], Group: m[side+"GroupId"],
			Policy: strings.ToLower(cmp.Or(m["Policy"], "accept")), Priority: 1, Desc: m["Description"]}
		switch r.Protocol {
		case "TCP", "UDP":
			if r.PortRange == "" {
				return nil, core.ErrMissing(name + ".PortRange")
			}
			a, b, ok := strings.Cut(r.PortRange, "/")
			lo, e1 := strconv.Atoi(a)
			hi, e2 := strconv.Atoi(b)
			if !ok || e1 != nil || e2 != nil || lo < 1 || hi > 65535 || lo > hi {
				return nil, core.Errf(400, "InvalidPortRange.Malformed", "%s.PortRange %q must be \"from/to\" within 1-65535.", name, r.PortRange)
			}
		case "ICMP", "GRE", "ALL", "ICMPV6":
			if r.PortRange == "" {
				r.PortRange = "-1/-1"
			}
			if r.PortRange != "-1/-1" {
				return nil, core.Errf(400, "InvalidPortRange.Malformed", "%s.PortRange must be -1/-1 for %s.", name, r.Protocol)
			}
		case "":
			return nil, core.ErrMissing(name + ".IpProtocol")
		default:
			return nil, core.Errf(400, "InvalidIpProtocol.Malformed", "%s.IpProtocol %q must be TCP, UDP, ICMP, GRE or ALL.", name, m["IpProtocol"])
		}
		n := 0
		for _, v := range []string{r.Cidr, r.Ipv6Cidr, r.Prefix, r.Group} {
			if v != "" {
				n++
			}
		}
		if n != 1 {
			return nil, core.Errf(400, "InvalidParameter", "%s needs exactly one of %sCidrIp, Ipv6%sCidrIp, %sPrefixListId, %sGroupId.", name, side, side, side, side)
		}
		if r.Group != "" {
			if g := c.st.SGs[r.Group]; g == nil || g.Region != c.Region {
				return nil, core.ErrNotFound("InvalidSecurityGroupId.NotFound", r.Group)
			}
		}
		if r.Policy != "accept" && r.Policy != "drop" {
			return nil, core.ErrInvalid(name+".Policy", "must be accept or drop")
		}
		if v := m["Priority"]; v != "" {
			p, err := strconv.Atoi(v)
			if err != nil || p < 1 || p > 100 {
				return nil, core.Errf(400, "InvalidPriority.Malformed", "%s.Priority %q must be 1-100.", name, v)
			}
			r.Priority = p
		}
		out = append(out, r)
	}
	return out, nil
}

// sameRule compares everything that identifies a rule (not id, description, time).
func sameRule(a, b rule) bool {
	return a.Direction == b.Direction && a.Protocol == b.Protocol && a.PortRange == b.PortRange && a.Cidr == b.Cidr &&
		a.Ipv6Cidr == b.Ipv6Cidr && a.Prefix == b.Prefix && a.Group == b.Group && a.Policy == b.Policy && a.Priority == b.Priority
}

func (c *call) authorize(dir string) *core.Error {
	g, e := c.findSG()
	if e != nil {
		return e
	}
	rules, e := c.ruleParams(dir)
	if e != nil {
		return e
	}
	for _, r := range rules {
		dup := false
		for _, x := range g.Rules {
			if sameRule(x, r) {
				dup = true // re-adding an identical rule is a no-op
				break
			}
		}
		if dup {
			continue
		}
		if len(g.Rules) >= maxRulesPerGroup {
			return core.Errf(400, "QuotaExceed.SecurityGroupRule", "Security group %s already has %d rules.", g.ID, maxRulesPerGroup)
		}
		r.ID = c.Env.NewID("sgr")
		r.Created = c.Now.UnixNano()
		g.Rules = append(g.Rules, r)
	}
	return nil
}

func (c *call) revoke(dir string) *core.Error {
	g, e := c.findSG()
	if e != nil {
		return e
	}
	if ids := c.P.List("SecurityGroupRuleId"); len(ids) > 0 {
		kept := g.Rules[:0:0]
		for _, r := range g.Rules {
			if !(r.Direction == dir && slices.Contains(ids, r.ID)) {
				kept = append(kept, r)
			}
		}
		g.Rules = kept
		return nil
	}
	rules, e := c.ruleParams(dir)
	if e != nil {
		return e
	}
	kept := g.Rules[:0:0]
	for _, x := range g.Rules {
		drop := false
		for _, r := range rules {
			if sameRule(x, r) {
				drop = true
			}
		}
		if !drop {
			kept = append(kept, x)
		}
	}
	// Revoking a rule that does not exist succeeds, as at the vendor.
	g.Rules = kept
	return nil
}

func authorizeIngress(c *call) (any, *core.Error) {
	if e := c.authorize("ingress"); e != nil {
		return nil, e
	}
	return &ecssdk.AuthorizeSecurityGroupResponse{RequestId: c.ReqID}, nil
}

func authorizeEgress(c *call) (any, *core.Error) {
	if e := c.authorize("egress"); e != nil {
		return nil, e
	}
	return &ecssdk.AuthorizeSecurityGroupEgressResponse{RequestId: c.ReqID}, nil
}

func revokeIngress(c *call) (any, *core.Error) {
	if e := c.revoke("ingress"); e != nil {
		return nil, e
	}
	return &ecssdk.RevokeSecurityGroupResponse{RequestId: c.ReqID}, nil
}

func revokeEgress(c *call) (any, *core.Error) {
	if e := c.revoke("egress"); e != nil {
		return nil, e
	}
	return &ecssdk.RevokeSecurityGroupEgressResponse{RequestId: c.ReqID}, nil
}

func deleteSecurityGroup(c *call) (any, *core.Error) {
	g, e := c.findSG()
	if e != nil {
		return nil, e
	}
	d := c.st
	if n := d.refs[g.ID]; n > 0 {
		return nil, core.ErrDependency("Security group %s is still used by %d instance(s).", g.ID, n)
	}
	for _, o := range d.SGs {
		if o.ID == g.ID {
			continue
		}
		for _, r := range o.Rules {
			if r.Group == g.ID {
				return nil, core.ErrDependency("Security group %s is referenced by a rule of %s.", g.ID, o.ID)
			}
		}
	}
	delete(d.SGs, g.ID)
	return &ecssdk.DeleteSecurityGroupResponse{RequestId: c.ReqID}, nil
}
