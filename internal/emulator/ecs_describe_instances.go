package emulator

import (
	"time"

	ecs7 "github.com/alibabacloud-go/ecs-20140526/v7/client"
)

// DescribeInstances answers with the vendor's current response model (alibabacloud-go ECS v7)
// rather than the older SDK's merged ecs.Instance: its fields are exactly the ones the vendor
// sends, so the answer needs no pruning (pruning 100 instances costs as much as encoding them,
// and this is the emulator's hottest read). Fields left nil are left out. Every value is copied:
// the answer is encoded after the state lock is released.

func ptr[T any](v T) *T { return &v }

// vendorInstance renders one instance as the vendor's DescribeInstances model.
func (s *Server) vendorInstance(in *instance, now time.Time) *ecs7.DescribeInstancesResponseBodyInstancesInstance {
	created := time.Unix(0, in.Created).UTC().Format("2006-01-02T15:04Z")
	out := &ecs7.DescribeInstancesResponseBodyInstancesInstance{
		InstanceId: ptr(in.ID), InstanceName: ptr(in.Name), HostName: ptr(in.HostName), Description: ptr(in.Desc),
		ImageId: ptr(in.Image), InstanceType: ptr(in.Type), InstanceTypeFamily: ptr(familyOf(in.Type)),
		RegionId: ptr(in.Region), ZoneId: ptr(in.Zone), Status: ptr(s.instanceStatus(in, now)),
		CreationTime: &created, StartTime: &created,
		InstanceChargeType: ptr(in.ChargeType), InternetChargeType: ptr("PayByTraffic"), SpotStrategy: ptr(in.Spot),
		InstanceNetworkType: ptr("vpc"), IoOptimized: ptr(true),
		DeploymentSetId: ptr(in.DeploySet), HpcClusterId: ptr(in.Hpc), KeyPairName: ptr(in.KeyPair), StoppedMode: ptr(in.StoppedMode),
		OSType: ptr("linux"), ExpiredTime: ptr("2099-12-31T15:59Z"),
		SecurityGroupIds: &ecs7.DescribeInstancesResponseBodyInstancesInstanceSecurityGroupIds{SecurityGroupId: ptrs(in.SGs)},
		VpcAttributes: &ecs7.DescribeInstancesResponseBodyInstancesInstanceVpcAttributes{VpcId: ptr(in.VpcID), VSwitchId: ptr(in.VSwitchID),
			PrivateIpAddress: &ecs7.DescribeInstancesResponseBodyInstancesInstanceVpcAttributesPrivateIpAddress{IpAddress: []*string{ptr(in.IP)}}},
		InnerIpAddress:  &ecs7.DescribeInstancesResponseBodyInstancesInstanceInnerIpAddress{IpAddress: []*string{}},
		PublicIpAddress: &ecs7.DescribeInstancesResponseBodyInstancesInstancePublicIpAddress{IpAddress: []*string{}},
		Tags:            &ecs7.DescribeInstancesResponseBodyInstancesInstanceTags{Tag: make([]*ecs7.DescribeInstancesResponseBodyInstancesInstanceTagsTag, 0, len(in.Tags))},
	}
	if in.PublicIP != "" {
		out.PublicIpAddress.IpAddress = []*string{ptr(in.PublicIP)}
	}
	if img := findImage(in.Image); img != nil {
		out.OSName, out.OSNameEn = &img.OSName, &img.Platform
	}
	if it := instanceTypes[in.Type]; it != nil {
		out.Cpu, out.Memory = ptr(int32(it.VCPU)), ptr(int32(it.MemGiB*1024))
		out.GPUAmount, out.GPUSpec = ptr(int32(it.GPUs)), &it.fam.GPUSpec
	}
	if in.AutoRelease != 0 {
		out.AutoReleaseTime = ptr(time.Unix(in.AutoRelease, 0).UTC().Format(timeFormat))
	}
	for i := range in.Tags {
		t := in.Tags[i]
		out.Tags.Tag = append(out.Tags.Tag, &ecs7.DescribeInstancesResponseBodyInstancesInstanceTagsTag{TagKey: ptr(t.K), TagValue: ptr(t.V)})
	}
	type nicOut = ecs7.DescribeInstancesResponseBodyInstancesInstanceNetworkInterfacesNetworkInterface
	nics := []*nicOut{{NetworkInterfaceId: ptr(primaryENI(in)), PrimaryIpAddress: ptr(in.IP), Type: ptr("Primary")}}
	for j := range in.NICs {
		n := in.NICs[j]
		if j == 0 && n.IP == in.IP {
			continue // NetworkInterface.1 on the instance's vSwitch describes the primary
		}
		nics = append(nics, &nicOut{NetworkInterfaceId: ptr(n.ID), PrimaryIpAddress: ptr(n.IP), Type: ptr("Secondary")})
	}
	out.NetworkInterfaces = &ecs7.DescribeInstancesResponseBodyInstancesInstanceNetworkInterfaces{NetworkInterface: nics}
	return out
}

func ptrs(l []string) []*string {
	out := make([]*string, len(l))
	for i := range l {
		out[i] = ptr(l[i])
	}
	return out
}
