package emulator

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

func init() {
	register(versionECS, "CreateSecurityGroup", route{fn: createSecurityGroup, write: true, idem: true})
	register(versionECS, "DescribeSecurityGroups", route{fn: describeSecurityGroups})
	register(versionECS, "DescribeSecurityGroupAttribute", route{fn: describeSecurityGroupAttribute})
	register(versionECS, "AuthorizeSecurityGroup", route{fn: authorizeIngress, write: true, idem: true})
	register(versionECS, "AuthorizeSecurityGroupEgress", route{fn: authorizeEgress, write: true, idem: true})
	register(versionECS, "RevokeSecurityGroup", route{fn: revokeIngress, write: true, idem: true})
	register(versionECS, "RevokeSecurityGroupEgress", route{fn: revokeEgress, write: true, idem: true})
	register(versionECS, "DeleteSecurityGroup", route{fn: deleteSecurityGroup, write: true})
	register(versionECS, "ModifySecurityGroupAttribute", route{fn: modifySecurityGroupAttribute, write: true})
}

const maxRulesPerGroup = 1000

func createSecurityGroup(c *call) (any, *apiError) {
	// VpcId is optional at the vendor: a group without one is a classic-network group, which
	// no instance in a VPC can join.
	vpcID := c.p["VpcId"]
	d := c.s.db
	if v := d.network().Vpcs[vpcID]; vpcID != "" && (v == nil || v.Region != c.region) {
		return nil, errNotFound("InvalidVpcId.NotFound", vpcID)
	}
	typ := orDefault(c.p["SecurityGroupType"], "normal")
	if typ != "normal" && typ != "enterprise" {
		return nil, errInvalid("SecurityGroupType", "must be normal or enterprise")
	}
	if e := checkSGNameDesc(c.p); e != nil {
		return nil, e
	}
	tags, e := c.p.Tags("Tag")
	if e != nil {
		return nil, e
	}
	g := &securityGroup{ID: d.newID("sg"), Region: c.region, VpcID: vpcID, Name: c.p["SecurityGroupName"],
		Desc: c.p["Description"], Type: typ, Created: c.now.UnixNano(), Tags: tags}
	d.SGs[g.ID] = g
	return &ecs.CreateSecurityGroupResponse{RequestId: c.reqID, SecurityGroupId: g.ID}, nil
}

// checkSGNameDesc applies the vendor's rules to SecurityGroupName (2-128
// characters, a letter first, not a URL) and Description (2-256 characters,
// not a URL) when they are given.
func checkSGNameDesc(p params) *apiError {
	if n := p["SecurityGroupName"]; n != "" {
		r := []rune(n)
		if len(r) < 2 || len(r) > 128 || !unicode.IsLetter(r[0]) || isURL(n) {
			return errf(400, "InvalidSecurityGroupName.Malformed",
				"SecurityGroupName %q must be 2-128 characters, start with a letter and not with http:// or https://.", n)
		}
	}
	if d := p["Description"]; d != "" {
		if n := len([]rune(d)); n < 2 || n > 256 || isURL(d) {
			return errf(400, "InvalidDescription.Malformed",
				"Description must be 2-256 characters and not start with http:// or https://.")
		}
	}
	return nil
}

func isURL(s string) bool { return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") }

// modifySecurityGroupAttribute renames a group or changes its description;
// a parameter not sent is left as it is.
func modifySecurityGroupAttribute(c *call) (any, *apiError) {
	g, e := c.findSG()
	if e != nil {
		return nil, e
	}
	if e := checkSGNameDesc(c.p); e != nil {
		return nil, e
	}
	if n, ok := c.p["SecurityGroupName"]; ok && n != "" {
		g.Name = n
	}
	if d, ok := c.p["Description"]; ok && d != "" {
		g.Desc = d
	}
	return &ecs.ModifySecurityGroupAttributeResponse{RequestId: c.reqID}, nil
}

func (c *call) findSG() (*securityGroup, *apiError) {
	id, e := c.p.Required("SecurityGroupId")
	if e != nil {
		return nil, e
	}
	g := c.s.db.SGs[id]
	if g == nil || g.Region != c.region {
		return nil, errNotFound("InvalidSecurityGroupId.NotFound", id)
	}
	return g, nil
}

func describeSecurityGroups(c *call) (any, *apiError) {
	number, size, e := c.page(50)
	if e != nil {
		return nil, e
	}
	// MaxResults/NextToken, the vendor's recommended paging, takes over when sent.
	tp, byToken, e := c.tokenPage(10, 1, 100)
	if e != nil {
		return nil, e
	}
	tags, e := c.p.Tags("Tag")
	if e != nil {
		return nil, e
	}
	ids, e := c.p.JSONList("SecurityGroupIds")
	if e != nil {
		return nil, e
	}
	if v := c.p["SecurityGroupId"]; v != "" {
		ids = append(ids, v)
	}
	var list []*securityGroup
	for _, g := range c.s.db.SGs {
		if g.Region != c.region || (len(ids) > 0 && !contains(ids, g.ID)) || (c.p["VpcId"] != "" && g.VpcID != c.p["VpcId"]) ||
			(c.p["SecurityGroupName"] != "" && g.Name != c.p["SecurityGroupName"]) || !matchTags(g.Tags, tags) {
			continue
		}
		list = append(list, g)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	lo, hi := pageBounds(len(list), number, size)
	resp := &ecs.DescribeSecurityGroupsResponse{RequestId: c.reqID, RegionId: c.region, PageNumber: number, PageSize: size, TotalCount: len(list)}
	if byToken {
		lo, hi, resp.NextToken = tp.bounds(len(list))
		resp.PageSize, resp.PageNumber = 0, 0
	}
	resp.SecurityGroups.SecurityGroup = []ecs.SecurityGroup{}
	for _, g := range list[lo:hi] {
		out := ecs.SecurityGroup{SecurityGroupId: g.ID, SecurityGroupName: g.Name, Description: g.Desc, SecurityGroupType: g.Type,
			VpcId: g.VpcID, CreationTime: fmtTime(g.Created), EcsCount: c.s.db.refs[g.ID], RuleCount: len(g.Rules),
			ResourceGroupId: defaultResourceGroup}
		out.Tags.Tag = []ecs.Tag{}
		for _, t := range g.Tags {
			out.Tags.Tag = append(out.Tags.Tag, ecs.Tag{Key: t.K, Value: t.V, TagKey: t.K, TagValue: t.V})
		}
		resp.SecurityGroups.SecurityGroup = append(resp.SecurityGroups.SecurityGroup, out)
	}
	return resp, nil
}

func describeSecurityGroupAttribute(c *call) (any, *apiError) {
	g, e := c.findSG()
	if e != nil {
		return nil, e
	}
	dir := orDefault(c.p["Direction"], "all")
	if dir != "all" && dir != "ingress" && dir != "egress" {
		return nil, errInvalid("Direction", "must be all, ingress or egress")
	}
	// Rules page by MaxResults (10-1000, default 500) and NextToken.
	tp, byToken, e := c.tokenPage(500, 10, 1000)
	if e != nil {
		return nil, e
	}
	if !byToken {
		tp = tokenPaging{size: 500}
	}
	resp := &ecs.DescribeSecurityGroupAttributeResponse{RequestId: c.reqID, RegionId: g.Region, SecurityGroupId: g.ID,
		SecurityGroupName: g.Name, Description: g.Desc, VpcId: g.VpcID, InnerAccessPolicy: "Accept"}
	resp.Permissions.Permission = []ecs.Permission{}
	var rules []rule
	for _, r := range g.Rules {
		if dir == "all" || r.Direction == dir {
			rules = append(rules, r)
		}
	}
	lo, hi, next := tp.bounds(len(rules))
	resp.NextToken = next
	for _, r := range rules[lo:hi] {
		p := ecs.Permission{SecurityGroupRuleId: r.ID, Direction: r.Direction, IpProtocol: r.Protocol, PortRange: r.PortRange,
			Policy: r.Policy, Priority: strconv.Itoa(r.Priority), Description: r.Desc, CreateTime: fmtTime(r.Created), NicType: "intranet"}
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
func (c *call) ruleParams(dir string) ([]rule, *apiError) {
	groups := c.p.StructList("Permissions")
	if len(groups) == 0 && c.p["IpProtocol"] != "" {
		legacy := map[string]string{}
		for _, k := range []string{"IpProtocol", "PortRange", "SourceCidrIp", "Ipv6SourceCidrIp", "SourcePrefixListId",
			"SourceGroupId", "DestCidrIp", "Ipv6DestCidrIp", "DestPrefixListId", "DestGroupId", "Policy", "Priority", "Description"} {
			if v, ok := c.p[k]; ok {
				legacy[k] = v
			}
		}
		groups = []map[string]string{legacy}
	}
	if len(groups) == 0 {
		return nil, errMissing("Permissions.1.IpProtocol")
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
			Policy: strings.ToLower(orDefault(m["Policy"], "accept")), Priority: 1, Desc: m["Description"]}
		switch r.Protocol {
		case "TCP", "UDP":
			if r.PortRange == "" {
				return nil, errMissing(name + ".PortRange")
			}
			a, b, ok := strings.Cut(r.PortRange, "/")
			lo, e1 := strconv.Atoi(a)
			hi, e2 := strconv.Atoi(b)
			if !ok || e1 != nil || e2 != nil || lo < 1 || hi > 65535 || lo > hi {
				return nil, errf(400, "InvalidPortRange.Malformed", "%s.PortRange %q must be \"from/to\" within 1-65535.", name, r.PortRange)
			}
		case "ICMP", "GRE", "ALL", "ICMPV6":
			if r.PortRange == "" {
				r.PortRange = "-1/-1"
			}
			if r.PortRange != "-1/-1" {
				return nil, errf(400, "InvalidPortRange.Malformed", "%s.PortRange must be -1/-1 for %s.", name, r.Protocol)
			}
		case "":
			return nil, errMissing(name + ".IpProtocol")
		default:
			return nil, errf(400, "InvalidIpProtocol.Malformed", "%s.IpProtocol %q must be TCP, UDP, ICMP, GRE or ALL.", name, m["IpProtocol"])
		}
		n := 0
		for _, v := range []string{r.Cidr, r.Ipv6Cidr, r.Prefix, r.Group} {
			if v != "" {
				n++
			}
		}
		if n != 1 {
			return nil, errf(400, "InvalidParameter", "%s needs exactly one of %sCidrIp, Ipv6%sCidrIp, %sPrefixListId, %sGroupId.", name, side, side, side, side)
		}
		if r.Group != "" {
			if g := c.s.db.SGs[r.Group]; g == nil || g.Region != c.region {
				return nil, errNotFound("InvalidSecurityGroupId.NotFound", r.Group)
			}
		}
		if r.Policy != "accept" && r.Policy != "drop" {
			return nil, errInvalid(name+".Policy", "must be accept or drop")
		}
		if v := m["Priority"]; v != "" {
			p, err := strconv.Atoi(v)
			if err != nil || p < 1 || p > 100 {
				return nil, errf(400, "InvalidPriority.Malformed", "%s.Priority %q must be 1-100.", name, v)
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

func (c *call) authorize(dir string) *apiError {
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
			return errf(400, "QuotaExceed.SecurityGroupRule", "Security group %s already has %d rules.", g.ID, maxRulesPerGroup)
		}
		r.ID = c.s.db.newID("sgr")
		r.Created = c.now.UnixNano()
		g.Rules = append(g.Rules, r)
	}
	return nil
}

func (c *call) revoke(dir string) *apiError {
	g, e := c.findSG()
	if e != nil {
		return e
	}
	if ids := c.p.List("SecurityGroupRuleId"); len(ids) > 0 {
		kept := g.Rules[:0:0]
		for _, r := range g.Rules {
			if !(r.Direction == dir && contains(ids, r.ID)) {
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

func authorizeIngress(c *call) (any, *apiError) {
	if e := c.authorize("ingress"); e != nil {
		return nil, e
	}
	return &ecs.AuthorizeSecurityGroupResponse{RequestId: c.reqID}, nil
}

func authorizeEgress(c *call) (any, *apiError) {
	if e := c.authorize("egress"); e != nil {
		return nil, e
	}
	return &ecs.AuthorizeSecurityGroupEgressResponse{RequestId: c.reqID}, nil
}

func revokeIngress(c *call) (any, *apiError) {
	if e := c.revoke("ingress"); e != nil {
		return nil, e
	}
	return &ecs.RevokeSecurityGroupResponse{RequestId: c.reqID}, nil
}

func revokeEgress(c *call) (any, *apiError) {
	if e := c.revoke("egress"); e != nil {
		return nil, e
	}
	return &ecs.RevokeSecurityGroupEgressResponse{RequestId: c.reqID}, nil
}

func deleteSecurityGroup(c *call) (any, *apiError) {
	g, e := c.findSG()
	if e != nil {
		return nil, e
	}
	d := c.s.db
	if n := d.refs[g.ID]; n > 0 {
		return nil, errDependency("Security group %s is still used by %d instance(s).", g.ID, n)
	}
	for _, o := range d.SGs {
		if o.ID == g.ID {
			continue
		}
		for _, r := range o.Rules {
			if r.Group == g.ID {
				return nil, errDependency("Security group %s is referenced by a rule of %s.", g.ID, o.ID)
			}
		}
	}
	delete(d.SGs, g.ID)
	return &ecs.DeleteSecurityGroupResponse{RequestId: c.reqID}, nil
}
