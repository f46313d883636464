package quotas

import (
	"sort"
	"strings"

	quotasdk "github.com/aliyun/alibaba-cloud-sdk-go/services/quotas"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"
)

// specProduct is the Quota Center's "ECS Quotas by Instance Type": one quota per instance type,
// its QuotaActionCode the type ("ProductCode ... ecs-spec", "QuotaActionCode ... ecs.g5.2xlarge",
// https://www.alibabacloud.com/help/en/quota-center/developer-reference/api-quotas-2020-05-10-listproductquotas).
// For a GPU type it counts GPUs: "GPU and vGPU quotas: The maximum number of GPUs ... per account
// per region, broken down by billing method" (https://www.alibabacloud.com/help/doc-detail/25412.htm),
// and "instance quotas are allocated based on zones, instance types, billing methods, and
// network types" (https://www.alibabacloud.com/help/doc-detail/163120.htm). The dimension keys
// the emulator answers (regionId, zoneId, chargeType, networkType, resourceType) are the ones
// the vendor's own Terraform provider sets on an ecs-spec quota alarm
// (aliyun/terraform-provider-alicloud, resource_alicloud_quotas_quota_alarm_test.go: chargeType
// "PostPaid", networkType "vpc", resourceType "InstanceType"); regionId is an ecs-spec dimension
// by GetProductQuotaDimension's example
// (https://www.alibabacloud.com/help/en/quota-center/developer-reference/api-quotas-2020-05-10-getproductquotadimension).
// The vendor sizes these quotas per account from its usage and publishes no default, so the
// emulator serves only the ones PUT /_emulator/quota_center sets, for pay-as-you-go GPU types,
// keyed "<instance type>@<zone>".
const specProduct = "ecs-spec"

// specQuota is one ecs-spec quota set: the GPUs of typ pay-as-you-go in zone.
type specQuota struct {
	typ, zone string
	gpus      int
}

// specKey parses a PUT key "<instance type>@<zone>"; ok is false for any other key or a type
// the emulator's catalog does not sell with GPUs.
func specKey(key string) (typ, zone string, ok bool) {
	typ, zone, found := strings.Cut(key, "@")
	return typ, zone, found && zone != "" && emuecs.IsGPUType(typ)
}

// specQuotas are the ecs-spec quotas set for the zones of region, by type and zone.
func (s *Store) specQuotas(region string) []specQuota {
	var out []specQuota
	for k, v := range s.Set {
		if typ, zone, ok := specKey(k); ok && strings.HasPrefix(zone, region+"-") {
			out = append(out, specQuota{typ: typ, zone: zone, gpus: v})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].typ != out[j].typ {
			return out[i].typ < out[j].typ
		}
		return out[i].zone < out[j].zone
	})
	return out
}

// specItem is q as ListProductQuotas answers it, its usage the GPUs of the zone's live
// pay-as-you-go instances of the type.
func specItem(st *core.Stores, region string, q specQuota) quotasdk.QuotasItemInListProductQuotas {
	return quotasdk.QuotasItemInListProductQuotas{
		ProductCode: specProduct, QuotaActionCode: q.typ, QuotaName: q.typ + " GPUs (pay-as-you-go)", QuotaUnit: "GPUs",
		QuotaCategory: "CommonQuota", Adjustable: true, Consumable: true,
		TotalQuota: float64(q.gpus),
		TotalUsage: float64(emuecs.StoreIn(st).PayAsYouGoGPUs(region, q.zone, q.typ)),
		Dimensions: map[string]any{"regionId": region, "zoneId": q.zone, "chargeType": "PostPaid", "networkType": "vpc", "resourceType": "InstanceType"},
	}
}
