package ecs

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	ecs7 "github.com/alibabacloud-go/ecs-20140526/v7/client"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// DescribeInstances answers with the vendor's current response model (alibabacloud-go ECS v7)
// rather than the older SDK's merged ecs.Instance: its fields are exactly the ones the vendor
// sends, so the answer needs no pruning (pruning 100 instances costs as much as encoding them,
// and this is the emulator's hottest read). Fields left nil are left out. Every value is copied:
// the answer is encoded after the state lock is released.

func ptr[T any](v T) *T { return &v }

// vendorInstance renders one instance as the vendor's DescribeInstances model.
func (c *call) vendorInstance(in *instance) *ecs7.DescribeInstancesResponseBodyInstancesInstance {
	created := time.Unix(0, in.Created).UTC().Format("2006-01-02T15:04Z")
	out := &ecs7.DescribeInstancesResponseBodyInstancesInstance{
		InstanceId: ptr(in.ID), InstanceName: ptr(in.Name), HostName: ptr(in.HostName), Description: ptr(in.Desc),
		ImageId: ptr(in.Image), InstanceType: ptr(in.Type), InstanceTypeFamily: ptr(familyOf(in.Type)),
		RegionId: ptr(in.Region), ZoneId: ptr(in.Zone), Status: ptr(c.status(in)),
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
		out.AutoReleaseTime = ptr(time.Unix(in.AutoRelease, 0).UTC().Format(core.TimeFormat))
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

func describeInstances(c *call) (any, *core.Error) {
	p, d := c.P, c.st
	ids, e := p.JSONList("InstanceIds")
	if e != nil {
		return nil, e
	}
	if len(ids) > 100 {
		return nil, core.ErrInvalid("InstanceIds", "at most 100 ids, got %d", len(ids))
	}
	// An explicitly empty list ("[]") matches no instance, as at the vendor; only an absent
	// InstanceIds means every instance.
	noIDs := p["InstanceIds"] != "" && len(ids) == 0
	tags, e := p.Tags("Tag")
	if e != nil {
		return nil, e
	}
	var statuses []string
	if st := p["Status"]; st != "" {
		if !slices.Contains([]string{"Pending", "Starting", "Running", "Stopping", "Stopped"}, st) {
			return nil, core.ErrInvalid("Status", "must be Pending, Starting, Running, Stopping or Stopped")
		}
		statuses = []string{st}
	}
	tokenMode := p["NextToken"] != "" || p["MaxResults"] != ""
	var pageSize int
	if tokenMode {
		if pageSize, e = p.Int("MaxResults", 10); e != nil {
			return nil, e
		}
		// The vendor clamps MaxResults rather than refusing it: below 10 answers 10, above 100 answers 100.
		pageSize = min(max(pageSize, 10), 100)
	} else if pageSize, e = p.Int("PageSize", 10); e != nil {
		return nil, e
	} else if pageSize < 1 || pageSize > 100 {
		return nil, core.ErrInvalid("PageSize", "must be 1-100, got %d", pageSize)
	}
	pageNumber, e := p.Int("PageNumber", 1)
	if e != nil || pageNumber < 1 {
		return nil, core.ErrInvalid("PageNumber", "must be a positive integer")
	}
	var after uint64
	if t := p["NextToken"]; t != "" {
		v, err := strconv.ParseUint(t, 36, 64)
		if err != nil {
			return nil, core.Errf(400, "InvalidNextToken.Malformed", "The specified NextToken is not valid.")
		}
		after = v
	}

	// Pick the smallest candidate set an index gives, ordered by Seq.
	var cand []*instance
	switch {
	case noIDs:
	case len(ids) > 0:
		for _, id := range ids {
			if in := d.Instances[id]; in != nil {
				cand = append(cand, in)
			}
		}
		sortBySeq(cand)
	case len(tags) > 0 || p["VSwitchId"] != "":
		var best map[*instance]bool
		first := true
		for _, t := range tags {
			v := t.V
			if v == "" {
				v = "*"
			}
			set := d.byTag[tagKeyIndex(t.K, v)]
			if first || len(set) < len(best) {
				best, first = set, false
			}
		}
		if vs := p["VSwitchId"]; vs != "" {
			set := d.byVSwitch[vs]
			if first || len(set) < len(best) {
				best = set
			}
		}
		cand = make([]*instance, 0, len(best))
		for in := range best {
			cand = append(cand, in)
		}
		sortBySeq(cand)
	default:
		cand = d.order
	}
	if after > 0 {
		i := sort.Search(len(cand), func(i int) bool { return cand[i].Seq > after })
		cand = cand[i:]
	}

	match := func(in *instance) bool {
		if in.Region != c.Region || !c.visible(in) {
			return false
		}
		if v := p["VpcId"]; v != "" && in.VpcID != v {
			return false
		}
		if v := p["VSwitchId"]; v != "" && in.VSwitchID != v {
			return false
		}
		if v := p["ZoneId"]; v != "" && in.Zone != v {
			return false
		}
		if v := p["InstanceType"]; v != "" && in.Type != normalizeType(v) {
			return false
		}
		if v := p["InstanceTypeFamily"]; v != "" && familyOf(in.Type) != normalizeType(v) {
			return false
		}
		if v := p["InstanceName"]; v != "" && !matchName(in.Name, v) {
			return false
		}
		if v := p["SecurityGroupId"]; v != "" && !slices.Contains(in.SGs, v) {
			return false
		}
		if v := p["DeploymentSetId"]; v != "" && in.DeploySet != v {
			return false
		}
		if v := p["HpcClusterId"]; v != "" && in.Hpc != v {
			return false
		}
		if len(tags) > 0 && !core.MatchTags(in.Tags, tags) {
			return false
		}
		if statuses != nil && c.status(in) != statuses[0] {
			return false
		}
		return true
	}

	resp := &ecs7.DescribeInstancesResponseBody{RequestId: &c.ReqID, PageSize: ptr(int32(pageSize)), PageNumber: ptr(int32(pageNumber))}
	out := make([]*ecs7.DescribeInstancesResponseBodyInstancesInstance, 0, min(pageSize, len(cand)))
	skip := 0
	if !tokenMode {
		skip = (pageNumber - 1) * pageSize
	}
	total := 0
	var last *instance
	more := false
	for _, in := range cand {
		if !match(in) {
			continue
		}
		total++
		if skip > 0 {
			skip--
			continue
		}
		if len(out) < pageSize {
			out = append(out, c.vendorInstance(in))
			last = in
		} else {
			more = true
		}
	}
	// A page with more results after it answers a NextToken in either paging mode: aliyun-cli's
	// --pager follows NextToken alone, and on the cloud it merges every page of DescribeInstances
	// (https://github.com/aliyun/aliyun-cli/issues/407), so the vendor answers one to page-number
	// requests too.
	if more && last != nil {
		resp.NextToken = ptr(strconv.FormatUint(last.Seq, 36))
	}
	resp.TotalCount = ptr(int32(total))
	resp.Instances = &ecs7.DescribeInstancesResponseBodyInstances{Instance: out}
	return resp, nil
}

func matchName(name, pattern string) bool {
	if strings.HasSuffix(pattern, "*") {
		return strings.HasPrefix(name, strings.TrimSuffix(pattern, "*"))
	}
	return name == pattern
}

func sortBySeq(l []*instance) {
	sort.Slice(l, func(i, j int) bool { return l[i].Seq < l[j].Seq })
}
