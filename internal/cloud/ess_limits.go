package cloud

import (
	"context"
	"fmt"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"
)

// ScalingQuota is the region's Auto Scaling quota: how many scaling groups the account may have
// and has, and the largest MaxSize a group may take.
type ScalingQuota struct {
	MaxGroups, Groups, MaxSize int
}

// ScalingGroupQuota reads it in two calls: DescribeLimitation (MaxNumberOfScalingGroups,
// MaxNumberOfMaxSize,
// https://www.alibabacloud.com/help/en/auto-scaling/developer-reference/api-gx1796) and one page
// of one DescribeScalingGroups for its TotalCount, the groups the region holds.
func (c *Client) ScalingGroupQuota(ctx context.Context) (ScalingQuota, error) {
	req := ess.CreateDescribeLimitationRequest()
	req.RegionId = c.region
	resp := ess.CreateDescribeLimitationResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return ScalingQuota{}, fmt.Errorf("DescribeLimitation: %w", err)
	}
	q := ScalingQuota{MaxGroups: resp.MaxNumberOfScalingGroups, MaxSize: resp.MaxNumberOfMaxSize}
	list := ess.CreateDescribeScalingGroupsRequest()
	list.RegionId = c.region
	list.PageNumber, list.PageSize = requests.NewInteger(1), requests.NewInteger(1)
	groups := ess.CreateDescribeScalingGroupsResponse()
	if err := c.Call(ctx, list, groups); err != nil {
		return ScalingQuota{}, fmt.Errorf("DescribeScalingGroups: %w", err)
	}
	q.Groups = groups.TotalCount
	return q, nil
}
