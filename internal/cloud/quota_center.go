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
