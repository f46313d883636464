// Package quotas serves the vendor's Quota Center (API 2020-05-10): ListProductQuotas, the
// account's quotas of one product in the region of the call, each with its TotalQuota and the
// TotalUsage the emulator counts from its live records
// (https://www.alibabacloud.com/help/en/quota-center/developer-reference/api-quotas-2020-05-10-listproductquotas).
// Only quotas whose codes a vendor page names are served; the table below cites each.
package quotas

import (
	"fmt"
	"sort"

	quotasdk "github.com/aliyun/alibaba-cloud-sdk-go/services/quotas"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuslb "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/slb"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

// Version is the Quota Center API version the emulator serves.
const Version = "2020-05-10"

func init() {
	// The Quota Center endpoint is central (the SDK's EndpointType "central"); the call's RegionId
	// is the region the answer's regional quotas are for.
	core.Register(Version, "ListProductQuotas", core.Route{Fn: listProductQuotas, RegionOptional: true})
	core.RegisterStore(storeName, func() core.Store { return &Store{} })
}

// quota is one quota the emulator serves: its product, code and name, the vendor's default and
// how the emulator counts its usage in a region.
type quota struct {
	product, code, name string
	def                 int
	usage               func(s *core.Stores, region string) int
}

// served are the quotas, by code.
var served = []quota{
	// "eip_quota_instances_num: Maximum number of EIPs that each Alibaba Cloud account can have.
	// 20" (https://www.alibabacloud.com/help/en/eip/quota-management). The EIP quotas are set
	// per region ("Quotas are set on a per-region or per-account basis", ibid.); the emulator
	// counts the region's EIPs.
	{product: "eip", code: "eip_quota_instances_num", name: "Maximum number of EIPs", def: 20,
		usage: func(s *core.Stores, region string) int {
			return inRegion(emuvpc.StoreIn(s).EIPs, region, func(e *emuvpc.EIP) string { return e.Region })
		}},
	// "slb_quota_instances_num: The maximum number of CLB instances that can be created within
	// an Alibaba Cloud account. 30" (https://www.alibabacloud.com/help/en/slb/classic-load-balancer/user-guide/quotas);
	// the Quota Center's product code for it is "slb"
	// (https://quotas.console.alibabacloud.com/products/slb/quotas?query=slb_quota_instances_num,
	// linked from the vendor's quota alert guide).
	{product: "slb", code: "slb_quota_instances_num", name: "Maximum number of CLB instances", def: 30,
		usage: func(s *core.Stores, region string) int {
			return inRegion(emuslb.StoreIn(s).LoadBalancers, region, func(lb *emuslb.LoadBalancer) string { return lb.Region })
		}},
	// "natgw_quota_nat_num_per_vpc: Maximum number of NAT gateways that can be created in each
	// VPC. 5. Adjustable: Yes" (https://www.alibabacloud.com/help/en/nat-gateway/user-guide/quotas).
	// The quota is per VPC, and the vendor's pages do not say what ListProductQuotas answers as
	// the usage of a per-VPC quota: the emulator answers the NAT gateways of the region's
	// fullest VPC, and the provider counts the stack's own VPC with DescribeNatGateways instead
	// of reading it. The product code "nat" is the one the Quota Center console lists NAT
	// Gateway under ("Products > General Quotas ... click NAT Gateway in the Networking
	// section", https://www.alibabacloud.com/help/en/nat-gateway/user-guide/manage-nat-gateway-quotas);
	// a product code the real Quota Center does not know answers no quota, which the provider
	// reports as not checked.
	{product: "nat", code: "natgw_quota_nat_num_per_vpc", name: "Maximum number of NAT gateways per VPC", def: 5,
		usage: func(s *core.Stores, region string) int {
			perVPC := map[string]int{}
			for _, n := range emuvpc.StoreIn(s).Nats {
				if n.Region == region {
					perVPC[n.VpcID]++
				}
			}
			most := 0
			for _, k := range perVPC {
				most = max(most, k)
			}
			return most
		}},
}

// inRegion counts the records of region.
func inRegion[T any](records map[string]T, region string, regionOf func(T) string) int {
	n := 0
	for _, r := range records {
		if regionOf(r) == region {
			n++
		}
	}
	return n
}

// Codes lists the served quota codes, sorted: the keys PUT /_emulator/quota_center takes.
func Codes() []string {
	out := make([]string, 0, len(served))
	for _, q := range served {
		out = append(out, q.code)
	}
	sort.Strings(out)
	return out
}

// listProductQuotas answers the product's served quotas (one, when QuotaActionCode names it),
// each for the call's region, usage counted now, and only those whose dimensions hold every
// Dimensions.N.Key = Dimensions.N.Value the call names. An unknown product answers an empty list.
func listProductQuotas(c *core.Call) (any, *core.Error) {
	product := c.P["ProductCode"]
	if product == "" {
		return nil, core.Errf(400, "MissingProductCode", "ProductCode is mandatory for this action.")
	}
	st := StoreIn(c.Stores)
	resp := &quotasdk.ListProductQuotasResponse{RequestId: c.ReqID, Quotas: []quotasdk.QuotasItemInListProductQuotas{}}
	keep := func(item quotasdk.QuotasItemInListProductQuotas) {
		if c.P["QuotaActionCode"] != "" && c.P["QuotaActionCode"] != item.QuotaActionCode {
			return
		}
		for i := 1; c.P[fmt.Sprintf("Dimensions.%d.Key", i)] != ""; i++ {
			if item.Dimensions[c.P[fmt.Sprintf("Dimensions.%d.Key", i)]] != c.P[fmt.Sprintf("Dimensions.%d.Value", i)] {
				return
			}
		}
		resp.Quotas = append(resp.Quotas, item)
	}
	for _, q := range served {
		if q.product != product {
			continue
		}
		keep(quotasdk.QuotasItemInListProductQuotas{
			ProductCode: q.product, QuotaActionCode: q.code, QuotaName: q.name,
			// The quotas are general quotas the vendor lists as adjustable (pages above).
			QuotaCategory: "CommonQuota", Adjustable: true, Consumable: true,
			TotalQuota: float64(st.total(q)),
			TotalUsage: float64(q.usage(c.Stores, c.Region)),
			Dimensions: map[string]any{"regionId": c.Region},
		})
	}
	if product == specProduct {
		for _, q := range st.specQuotas(c.Region) {
			keep(specItem(c.Stores, c.Region, q))
		}
	}
	resp.TotalCount = len(resp.Quotas)
	resp.MaxResults = len(resp.Quotas)
	return resp, nil
}
