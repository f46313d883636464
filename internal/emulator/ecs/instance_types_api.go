package ecs

import (
	"slices"
	"strings"

	ecs7 "github.com/alibabacloud-go/ecs-20140526/v7/client"
	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// DescribeInstanceTypes answers with the vendor's current response model (alibabacloud-go ECS
// v7), whose fields are pointers left out when nil: a figure the catalog does not state (ENIs,
// private addresses per ENI, queues, packet rates: the vendor's family pages give them, the
// catalog does not carry them yet) is absent from the answer instead of a 0 the vendor would not
// send. The units are the API reference's, as the v7 model's field comments give them
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinstancetypes):
//   - MemorySize: "The memory size. Unit: GiB";
//   - GPUMemorySize: "The amount of GPU memory per GPU. Unit: GiB" (a float; the reference's
//     example is 32 for a 32 GB V100), so an 80 GB A100-class GPU is 80, not nvidia-smi's
//     81251 MiB;
//   - InstanceBandwidthRx/Tx: "The maximum inbound/outbound internal bandwidth. Unit: Kbit/s",
//     whose example 1024000 is the reference's 1 Gbit/s ecs.g6.large: a catalog figure of
//     N Gbit/s is N x 1024000;
//   - InstancePpsRx/Tx: "Unit: pps" (not stated by the catalog, left out).
func init() {
	core.Register(Version, "DescribeInstanceTypes", core.Route{Fn: handle(describeInstanceTypes), RegionOptional: true, VendorModel: true})
}

// kbitPerGbit converts the catalog's Gbit/s to the answer's Kbit/s (see above).
const kbitPerGbit = 1024 * 1000

func vendorInstanceType(it *instanceTypeInfo) *ecs7.DescribeInstanceTypesResponseBodyInstanceTypesInstanceType {
	category := "GPU-accelerated"
	switch {
	case strings.HasPrefix(it.fam.Family, "ebm") || strings.HasPrefix(it.fam.Family, "scc"):
		category = "ECS Bare Metal"
	case it.GPUs == 0:
		category = "General-purpose"
	}
	out := &ecs7.DescribeInstanceTypesResponseBodyInstanceTypesInstanceType{
		InstanceTypeId: ptr(it.Name), InstanceTypeFamily: ptr("ecs." + it.fam.Family),
		CpuCoreCount: ptr(int32(it.VCPU)), MemorySize: ptr(float32(it.MemGiB)), GPUAmount: ptr(int32(it.GPUs)),
		EriQuantity: ptr(int32(it.fam.Eri)), NetworkCardQuantity: ptr(int32(it.fam.Cards)),
		InstanceCategory: &category, InstanceFamilyLevel: ptr("EnterpriseLevel"), CpuArchitecture: ptr("X86"),
		NvmeSupport: ptr("unsupported"),
		NetworkCards: &ecs7.DescribeInstanceTypesResponseBodyInstanceTypesInstanceTypeNetworkCards{
			NetworkCardInfo: make([]*ecs7.DescribeInstanceTypesResponseBodyInstanceTypesInstanceTypeNetworkCardsNetworkCardInfo, 0, it.fam.Cards)},
	}
	if it.GPUs > 0 {
		out.GPUSpec, out.GPUMemorySize = &it.fam.GPUSpec, ptr(float32(it.fam.GPUMemGiB))
	}
	if it.NetGbits > 0 {
		bw := int32(it.NetGbits * kbitPerGbit)
		out.InstanceBandwidthRx, out.InstanceBandwidthTx = &bw, &bw
	}
	for i := 0; i < it.fam.Cards; i++ {
		out.NetworkCards.NetworkCardInfo = append(out.NetworkCards.NetworkCardInfo,
			&ecs7.DescribeInstanceTypesResponseBodyInstanceTypesInstanceTypeNetworkCardsNetworkCardInfo{NetworkCardIndex: ptr(int32(i))})
	}
	return out
}

// matchesTypeFilters applies the filters the provider and the Cluster Autoscaler send:
// InstanceTypes.N, InstanceTypeFamily, GPUSpec and MinimumGPUAmount/MaximumGPUAmount.
func (c *call) matchesTypeFilters(it *instanceTypeInfo, want []string) (bool, *core.Error) {
	if (len(want) > 0 && !slices.Contains(want, it.Name)) || (c.P["GPUSpec"] != "" && it.fam.GPUSpec != c.P["GPUSpec"]) {
		return false, nil
	}
	if fam := normalizeType(c.P["InstanceTypeFamily"]); fam != "" && "ecs."+it.fam.Family != fam {
		return false, nil
	}
	lo, e := c.P.Int("MinimumGPUAmount", 0)
	if e != nil {
		return false, e
	}
	hi, e := c.P.Int("MaximumGPUAmount", it.GPUs)
	if e != nil {
		return false, e
	}
	return it.GPUs >= lo && it.GPUs <= hi, nil
}

func describeInstanceTypes(c *call) (any, *core.Error) {
	want := c.P.List("InstanceTypes")
	for i := range want {
		want[i] = normalizeType(want[i])
	}
	var match []*instanceTypeInfo
	for _, name := range instanceTypeOrder {
		ok, e := c.matchesTypeFilters(instanceTypes[name], want)
		if e != nil {
			return nil, e
		}
		if ok {
			match = append(match, instanceTypes[name])
		}
	}
	// MaxResults (1-1600, default 1600) and NextToken, the request model's paging
	// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinstancetypes);
	// a request that sends neither gets every match, which the default page holds.
	tp, byToken, e := c.tokenPage(1600, 1, 1600)
	if e != nil {
		return nil, e
	}
	var next string
	if byToken {
		var lo, hi int
		lo, hi, next = tp.bounds(len(match))
		match = match[lo:hi]
	}
	if len(match) == 0 {
		// The v7 model's omitempty would leave the empty list out ("InstanceTypes":{}); the vendor
		// sends it as [] (see core.EmptyLists), which the older SDK's struct writes.
		empty := &ecssdk.DescribeInstanceTypesResponse{RequestId: c.ReqID}
		empty.InstanceTypes.InstanceType = []ecssdk.InstanceType{}
		return empty, nil
	}
	list := make([]*ecs7.DescribeInstanceTypesResponseBodyInstanceTypesInstanceType, 0, len(match))
	for _, it := range match {
		list = append(list, vendorInstanceType(it))
	}
	resp := &ecs7.DescribeInstanceTypesResponseBody{RequestId: &c.ReqID,
		InstanceTypes: &ecs7.DescribeInstanceTypesResponseBodyInstanceTypes{InstanceType: list}}
	if next != "" {
		resp.NextToken = &next
	}
	return resp, nil
}
