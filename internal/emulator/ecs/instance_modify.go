package ecs

import (
	"encoding/base64"
	"slices"
	"time"

	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "ModifyInstanceAttribute", core.Route{Fn: handle(modifyInstanceAttribute), Write: true, RegionOptional: true})
	core.Register(Version, "ModifyInstanceAutoReleaseTime", core.Route{Fn: handle(modifyInstanceAutoReleaseTime), Write: true, RegionOptional: true})
	core.Register(Version, "DescribeUserData", core.Route{Fn: handle(describeUserData)})
}

// describeUserData returns an instance's user data, Base64 as it was given to RunInstances.
func describeUserData(c *call) (any, *core.Error) {
	in, e := c.findInstance()
	if e != nil {
		return nil, e
	}
	return &ecssdk.DescribeUserDataResponse{RequestId: c.ReqID, InstanceId: in.ID, UserData: in.UserData, RegionId: in.Region}, nil
}

// autoReleaseParam reads AutoReleaseTime (yyyy-MM-ddTHH:mm:ssZ or
// yyyy-MM-ddTHH:mmZ, UTC) as unix seconds; 0 when absent.
func (c *call) autoReleaseParam() (int64, *core.Error) {
	v := c.P["AutoReleaseTime"]
	if v == "" {
		return 0, nil
	}
	t, err := time.Parse(core.TimeFormat, v)
	if err != nil {
		if t, err = time.Parse("2006-01-02T15:04Z", v); err != nil {
			return 0, core.ErrInvalid("AutoReleaseTime", "use yyyy-MM-ddTHH:mm:ssZ (UTC)")
		}
	}
	// The vendor wants at least 30 minutes ahead; the emulator only requires
	// the future so tests can watch a release happen.
	if !t.After(c.Now) {
		return 0, core.ErrInvalid("AutoReleaseTime", "%s is not in the future", v)
	}
	return t.Unix(), nil
}

// findInstance reads InstanceId; an instance past its release time is gone.
func (c *call) findInstance() (*instance, *core.Error) {
	id, e := c.P.Required("InstanceId")
	if e != nil {
		return nil, e
	}
	in := c.st.Instances[id]
	if in == nil || in.Region != c.Region || (in.AutoRelease != 0 && in.AutoRelease <= c.Now.Unix()) {
		return nil, core.ErrNotFound("InvalidInstanceId.NotFound", id)
	}
	return in, nil
}

// modifyInstanceAutoReleaseTime sets or, without AutoReleaseTime, cancels the
// release time of a pay-as-you-go instance.
func modifyInstanceAutoReleaseTime(c *call) (any, *core.Error) {
	in, e := c.findInstance()
	if e != nil {
		return nil, e
	}
	if in.ChargeType == "PrePaid" {
		return nil, core.Errf(400, "InvalidInstanceChargeType.ValueNotSupported",
			"Instance %s is subscription (PrePaid); only pay-as-you-go instances have a release time.", in.ID)
	}
	at, e := c.autoReleaseParam()
	if e != nil {
		return nil, e
	}
	in.AutoRelease = at
	return &ecssdk.ModifyInstanceAutoReleaseTimeResponse{RequestId: c.ReqID}, nil
}

// modifyInstanceAttribute changes the name, host name, description, user data
// (only while Stopped, as the vendor requires), password (accepted, never
// stored) and security groups of an instance. Parameters not sent are kept.
func modifyInstanceAttribute(c *call) (any, *core.Error) {
	in, e := c.findInstance()
	if e != nil {
		return nil, e
	}
	p := c.P
	if n := p["InstanceName"]; n != "" {
		if r := []rune(n); len(r) < 2 || len(r) > 128 || isURL(n) {
			return nil, core.Errf(400, "InvalidInstanceName.Malformed", "InstanceName must be 2-128 characters and not start with http:// or https://.")
		}
	}
	if h := p["HostName"]; h != "" && (len(h) < 2 || len(h) > 64) {
		return nil, core.Errf(400, "InvalidHostName.Malformed", "HostName must be 2-64 characters.")
	}
	if d := p["Description"]; d != "" && (len([]rune(d)) > 256 || isURL(d)) {
		return nil, core.Errf(400, "InvalidDescription.Malformed", "Description must be at most 256 characters and not start with http:// or https://.")
	}
	userData, hasUserData := p["UserData"]
	if hasUserData {
		if _, err := base64.StdEncoding.DecodeString(userData); err != nil {
			return nil, core.Errf(400, "InvalidUserData.Base64FormatInvalid", "UserData must be Base64-encoded.")
		}
		if st := c.status(in); st != "Stopped" {
			return nil, core.ErrStatus("The current status of instance %s (%s) does not support changing UserData: stop it first.", in.ID, st)
		}
	}
	sgs := p.List("SecurityGroupIds")
	if len(sgs) > 0 {
		if len(sgs) > 5 {
			return nil, core.ErrInvalid("SecurityGroupIds", "at most 5 security groups, got %d", len(sgs))
		}
		for _, id := range sgs {
			g := c.st.SGs[id]
			if g == nil || g.Region != c.Region {
				return nil, core.ErrNotFound("InvalidSecurityGroupId.NotFound", id)
			}
			if g.VpcID != in.VpcID {
				return nil, core.Errf(400, "InvalidSecurityGroupId.VPCMismatch", "Security group %s belongs to %s, instance %s to %s.", id, g.VpcID, in.ID, in.VpcID)
			}
		}
	}

	if v := p["InstanceName"]; v != "" {
		in.Name = v
	}
	if v := p["HostName"]; v != "" {
		in.HostName = v
	}
	if v := p["Description"]; v != "" {
		in.Desc = v
	}
	if hasUserData {
		in.UserData = userData
	}
	if len(sgs) > 0 {
		d := c.st
		for _, sg := range in.SGs {
			d.decRef(sg)
		}
		// A new slice: instances created together share theirs.
		in.SGs = dedupe(sgs)
		for _, sg := range in.SGs {
			d.refs[sg]++
		}
	}
	return &ecssdk.ModifyInstanceAttributeResponse{RequestId: c.ReqID}, nil
}

func dedupe(l []string) []string {
	out := make([]string, 0, len(l))
	for _, v := range l {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
