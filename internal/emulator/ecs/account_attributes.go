package ecs

import (
	"slices"
	"strconv"
	"strings"

	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// DescribeAccountAttributes answers the account's ECS quotas in a region
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeaccountattributes):
// RegionId required, ZoneId optional, AttributeName.N with N from 1 to 8 naming the attributes;
// "This parameter is empty by default", and the emulator then answers every attribute it knows.
// The answer is the SDK's DescribeAccountAttributesResponse: one AccountAttributeItem per
// attribute, its values ValueItems that carry ZoneId, InstanceChargeType and InstanceType where
// they apply. The emulator's quotas are the region's, so a ZoneId only echoes in the vCPU items.
func init() {
	core.Register(Version, "DescribeAccountAttributes", core.Route{Fn: handle(describeAccountAttributes)})
}

// accountAttributeNames are the names the API reference lists, in its order.
var accountAttributeNames = []string{
	"instance-network-type", "max-security-groups", "max-elastic-network-interfaces",
	"max-postpaid-instance-vcpu-count", "max-spot-instance-vcpu-count",
	"used-postpaid-instance-vcpu-count", "used-spot-instance-vcpu-count",
	"max-postpaid-yundisk-capacity", "used-postpaid-yundisk-capacity", "max-dedicated-hosts",
	"supported-postpaid-instance-types", "max-axt-command-count", "max-axt-invocation-daily",
	"real-name-authentication", "max-cloud-assistant-activation-count",
}

// maxAttributeNames is the reference's "Valid values of N: 1 to 8".
const maxAttributeNames = 8

func describeAccountAttributes(c *call) (any, *core.Error) {
	names := c.P.List("AttributeName")
	if len(names) > maxAttributeNames {
		return nil, core.ErrInvalid("AttributeName", "at most %d names, got %d", maxAttributeNames, len(names))
	}
	for _, n := range names {
		if !slices.Contains(accountAttributeNames, n) {
			return nil, core.ErrInvalid("AttributeName", "%q is not one of %s", n, strings.Join(accountAttributeNames, ", "))
		}
	}
	if len(names) == 0 {
		names = accountAttributeNames
	}
	zone := c.P["ZoneId"]
	if zone != "" && !slices.Contains(c.zones(), zone) {
		return nil, core.ErrInvalid("ZoneId", "zone %q is not in region %s", zone, c.Region)
	}
	resp := &ecssdk.DescribeAccountAttributesResponse{RequestId: c.ReqID}
	resp.AccountAttributeItems.AccountAttributeItem = []ecssdk.AccountAttributeItem{}
	for _, n := range names {
		item := ecssdk.AccountAttributeItem{AttributeName: n}
		item.AttributeValues.ValueItem = c.attributeValues(n, zone)
		resp.AccountAttributeItems.AccountAttributeItem = append(resp.AccountAttributeItems.AccountAttributeItem, item)
	}
	return resp, nil
}

// attributeValues are one attribute's values.
func (c *call) attributeValues(name, zone string) []ecssdk.ValueItem {
	q := c.st.EffectiveQuotas()
	one := func(v int) []ecssdk.ValueItem { return []ecssdk.ValueItem{{Value: strconv.Itoa(v)}} }
	vcpu := func(v int, charge string) []ecssdk.ValueItem {
		return []ecssdk.ValueItem{{Value: strconv.Itoa(v), ZoneId: zone, InstanceChargeType: charge}}
	}
	switch name {
	case "instance-network-type":
		return []ecssdk.ValueItem{{Value: "vpc"}} // the emulator serves VPC networking only
	case "max-security-groups":
		return one(q.SecurityGroups)
	case "max-elastic-network-interfaces":
		return one(q.ENIs)
	case "max-postpaid-instance-vcpu-count":
		return vcpu(q.PostpaidVCPUs, "PostPaid")
	case "max-spot-instance-vcpu-count":
		return vcpu(q.SpotVCPUs, "PostPaid")
	case "used-postpaid-instance-vcpu-count":
		return vcpu(c.st.vcpusInUse(c.Region, false), "PostPaid")
	case "used-spot-instance-vcpu-count":
		return vcpu(c.st.vcpusInUse(c.Region, true), "PostPaid")
	case "max-postpaid-yundisk-capacity":
		return one(q.PostpaidDiskGiB)
	case "used-postpaid-yundisk-capacity":
		return one(c.st.dataDiskGiB(c.Region))
	case "max-dedicated-hosts":
		return one(q.DedicatedHosts)
	case "supported-postpaid-instance-types":
		out := make([]ecssdk.ValueItem, 0, len(instanceTypeOrder))
		for _, t := range instanceTypeOrder {
			out = append(out, ecssdk.ValueItem{Value: t, InstanceType: t, InstanceChargeType: "PostPaid", ZoneId: zone})
		}
		return out
	case "max-axt-command-count":
		return one(q.AxtCommands)
	case "max-axt-invocation-daily":
		return one(q.AxtInvocationDaily)
	case "real-name-authentication":
		return []ecssdk.ValueItem{{Value: "yes"}} // the emulated account is verified
	}
	return one(0) // max-cloud-assistant-activation-count: the emulator has no Cloud Assistant
}

// dataDiskGiB sums the data disks of the region's pay-as-you-go instances (the deprecated
// used-postpaid-yundisk-capacity).
func (d *Store) dataDiskGiB(region string) int {
	n := 0
	for _, in := range d.order {
		if in.Region != region || in.ChargeType == "PrePaid" {
			continue
		}
		for _, dk := range in.DataDisks {
			n += dk.Size
		}
	}
	return n
}
