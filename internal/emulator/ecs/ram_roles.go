package ecs

import (
	"regexp"

	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// An instance RAM role gives the programs on an instance temporary credentials from the
// instance metadata. RunInstances takes it as RamRoleName (recorded on the instance);
// DescribeInstanceRamRole reads it back.

func init() {
	core.Register(Version, "DescribeInstanceRamRole", core.Route{Fn: handle(describeInstanceRamRole)})
}

// ramRoleNamePattern is RAM's rule for a role name: "The name must be 1 to 64 characters in
// length and can contain letters, digits, periods (.), and hyphens (-)" (CreateRole, RoleName,
// https://www.alibabacloud.com/help/en/ram/developer-reference/api-ram-2015-05-01-createrole).
// The emulator has no RAM, so any name that follows the rule stands for an existing role.
var ramRoleNamePattern = regexp.MustCompile(`^[A-Za-z0-9.-]{1,64}$`)

// MaxRamRoleInstanceIDs: DescribeInstanceRamRole's InstanceIds takes "up to 100 instance IDs in
// a single request" (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinstanceramrole).
const MaxRamRoleInstanceIDs = 100

// ramRoleParam reads the RamRoleName of a request ("" when absent), refusing a name RAM would not
// accept for a role.
func ramRoleParam(p core.Params) (string, *core.Error) {
	name := p["RamRoleName"]
	if name != "" && !ramRoleNamePattern.MatchString(name) {
		return "", core.ErrInvalid("RamRoleName", "%q is not a RAM role name: use 1-64 letters, digits, '.' and '-'", name)
	}
	return name, nil
}

// describeInstanceRamRole lists the instances that carry a RAM role, filtered by InstanceIds
// (a JSON array) and/or RamRoleName; the vendor wants at least one of the two. An instance
// without a role, or an id that names no instance, is not listed.
func describeInstanceRamRole(c *call) (any, *core.Error) {
	number, size, e := c.page(50)
	if e != nil {
		return nil, e
	}
	ids, e := c.P.JSONList("InstanceIds")
	if e != nil {
		return nil, core.Errf(400, "InvalidInstanceIds.Malformed", "The specified InstanceIds are not valid: want a JSON array of instance ids, such as [\"i-1\",\"i-2\"].")
	}
	if len(ids) > MaxRamRoleInstanceIDs {
		return nil, core.ErrInvalid("InstanceIds", "at most %d ids, got %d", MaxRamRoleInstanceIDs, len(ids))
	}
	role, e := ramRoleParam(c.P)
	if e != nil {
		return nil, e
	}
	if len(ids) == 0 && role == "" {
		return nil, core.ErrMissing("InstanceIds")
	}
	d := c.st
	var cand []*instance
	if len(ids) > 0 {
		for _, id := range ids {
			if in := d.Instances[id]; in != nil {
				cand = append(cand, in)
			}
		}
		sortBySeq(cand)
	} else {
		cand = d.order
	}
	var match []*instance
	for _, in := range cand {
		if in.Region == c.Region && in.RamRole != "" && (role == "" || in.RamRole == role) && c.visible(in) {
			match = append(match, in)
		}
	}
	lo, hi := core.PageBounds(len(match), number, size)
	resp := &ecssdk.DescribeInstanceRamRoleResponse{RequestId: c.ReqID, RegionId: c.Region, TotalCount: len(match)}
	resp.InstanceRamRoleSets.InstanceRamRoleSet = []ecssdk.InstanceRamRoleSet{}
	for _, in := range match[lo:hi] {
		resp.InstanceRamRoleSets.InstanceRamRoleSet = append(resp.InstanceRamRoleSets.InstanceRamRoleSet,
			ecssdk.InstanceRamRoleSet{InstanceId: in.ID, RamRoleName: in.RamRole})
	}
	return resp, nil
}
