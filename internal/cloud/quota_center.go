package cloud

import (
	"context"
	"fmt"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/quotas"
)

// quotaCenterDomain is the Quota Center's central endpoint, used when no endpoint override
// names another.
const quotaCenterDomain = "quotas.aliyuncs.com"

// CenterQuota is one Quota Center quota in the client's region: its limit and its usage.
type CenterQuota struct {
	Max, Used int
	Name      string
}

// QuotaCenterQuota reads one quota of a product in one call: ListProductQuotas with the
// product's code and the quota's QuotaActionCode
// (https://www.alibabacloud.com/help/en/quota-center/developer-reference/api-quotas-2020-05-10-listproductquotas),
// answering its TotalQuota and TotalUsage. found is false when the Quota Center lists no such
// quota for the account.
func (c *Client) QuotaCenterQuota(ctx context.Context, product, code string) (q CenterQuota, found bool, err error) {
	req := quotas.CreateListProductQuotasRequest()
	req.ProductCode, req.QuotaActionCode = product, code
	// The regional quotas are answered for the request's region (their regionId dimension).
	req.RegionId = c.region
	resp := quotas.CreateListProductQuotasResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return q, false, fmt.Errorf("ListProductQuotas %s: %w", product, err)
	}
	for _, item := range resp.Quotas {
		if item.QuotaActionCode != code {
			continue
		}
		if region, ok := item.Dimensions["regionId"].(string); ok && region != c.region {
			continue
		}
		return CenterQuota{Max: int(item.TotalQuota), Used: int(item.TotalUsage), Name: item.QuotaName}, true, nil
	}
	return q, false, nil
}

// SpecQuota is one Quota Center "ECS Quotas by Instance Type" (ecs-spec) quota of a zone of the
// client's region: how many GPUs of InstanceType the account may hold there pay-as-you-go, and
// how many it does.
type SpecQuota struct {
	InstanceType, ZoneID string
	Max, Used            int
}

// PayAsYouGoSpecQuotas reads the region's pay-as-you-go ecs-spec quotas in one ListProductQuotas
// (paged by NextToken): ProductCode ecs-spec with the regionId and chargeType dimensions
// (https://www.alibabacloud.com/help/en/quota-center/developer-reference/api-quotas-2020-05-10-listproductquotas;
// the dimension keys and PostPaid as the vendor's Terraform provider sets them on an ecs-spec
// quota). A quota without a zoneId dimension is left out: the check places nodes by zone.
func (c *Client) PayAsYouGoSpecQuotas(ctx context.Context) ([]SpecQuota, error) {
	var out []SpecQuota
	token := ""
	for {
		req := quotas.CreateListProductQuotasRequest()
		req.ProductCode = "ecs-spec"
		req.RegionId = c.region
		req.Dimensions = &[]quotas.ListProductQuotasDimensions{{Key: "regionId", Value: c.region}, {Key: "chargeType", Value: "PostPaid"}}
		req.NextToken = token
		resp := quotas.CreateListProductQuotasResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, fmt.Errorf("ListProductQuotas ecs-spec: %w", err)
		}
		for _, item := range resp.Quotas {
			zone, _ := item.Dimensions["zoneId"].(string)
			if charge, _ := item.Dimensions["chargeType"].(string); zone == "" || charge != "PostPaid" {
				continue
			}
			out = append(out, SpecQuota{InstanceType: item.QuotaActionCode, ZoneID: zone, Max: int(item.TotalQuota), Used: int(item.TotalUsage)})
		}
		if resp.NextToken == "" || resp.NextToken == token || len(resp.Quotas) == 0 {
			return out, nil
		}
		token = resp.NextToken
	}
}
