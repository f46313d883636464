package cloud

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

// AccountQuotas are the account's ECS quotas in the client's region that a preflight holds a
// stack to, from DescribeAccountAttributes
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeaccountattributes).
// A figure the answer leaves out is 0, which internal/preflight reads as unknown. The GPU
// quota is not among the attributes the API answers; it is the Quota Center's.
type AccountQuotas struct {
	PostpaidVCPUs, PostpaidVCPUsUsed int
	SpotVCPUs, SpotVCPUsUsed         int
	SecurityGroups, ENIs             int
}

// accountQuotaNames are the attributes AccountAttributes asks for (the API takes at most 8) and
// where each goes.
var accountQuotaNames = map[string]func(*AccountQuotas) *int{
	"max-postpaid-instance-vcpu-count":  func(q *AccountQuotas) *int { return &q.PostpaidVCPUs },
	"used-postpaid-instance-vcpu-count": func(q *AccountQuotas) *int { return &q.PostpaidVCPUsUsed },
	"max-spot-instance-vcpu-count":      func(q *AccountQuotas) *int { return &q.SpotVCPUs },
	"used-spot-instance-vcpu-count":     func(q *AccountQuotas) *int { return &q.SpotVCPUsUsed },
	"max-security-groups":               func(q *AccountQuotas) *int { return &q.SecurityGroups },
	"max-elastic-network-interfaces":    func(q *AccountQuotas) *int { return &q.ENIs },
}

// AccountAttributes reads the account's quotas in the client's region; zone, when not "", asks
// for the zone's figures where the API answers per zone.
func (c *Client) AccountAttributes(ctx context.Context, zone string) (AccountQuotas, error) {
	req := ecs.CreateDescribeAccountAttributesRequest()
	req.RegionId = c.region
	req.ZoneId = zone
	names := make([]string, 0, len(accountQuotaNames))
	for n := range accountQuotaNames {
		names = append(names, n)
	}
	req.AttributeName = &names
	resp := ecs.CreateDescribeAccountAttributesResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return AccountQuotas{}, err
	}
	var q AccountQuotas
	for _, item := range resp.AccountAttributeItems.AccountAttributeItem {
		field, ok := accountQuotaNames[item.AttributeName]
		if !ok || len(item.AttributeValues.ValueItem) == 0 {
			continue
		}
		v, err := quotaValue(item.AttributeValues.ValueItem, zone)
		if err != nil {
			return AccountQuotas{}, fmt.Errorf("DescribeAccountAttributes %s: %w", item.AttributeName, err)
		}
		*field(&q) = v
	}
	return q, nil
}

// quotaValue is the value for zone among an attribute's values (the one without a zone, or the
// first, when none names it).
func quotaValue(items []ecs.ValueItem, zone string) (int, error) {
	pick := items[0]
	for _, it := range items {
		if zone != "" && it.ZoneId == zone {
			pick = it
			break
		}
	}
	v, err := strconv.Atoi(pick.Value)
	if err != nil {
		return 0, fmt.Errorf("value %q is not a whole number", pick.Value)
	}
	return v, nil
}
