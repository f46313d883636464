package cloud

import (
	"context"
	"sort"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// What the region sells: zones, instance types, their stock per zone, and prices.

// instanceTypesPageSize is MaxResults per DescribeInstanceTypes page; the API accepts up to
// 1,600.
const instanceTypesPageSize = 100

// Zone is one zone of the region.
type Zone struct {
	ID, LocalName string
}

// Zones lists the zones of the client's region (ECS DescribeZones), sorted by id.
func (c *Client) Zones(ctx context.Context) ([]Zone, error) {
	req := ecs.CreateDescribeZonesRequest()
	req.RegionId = c.region
	resp := ecs.CreateDescribeZonesResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	out := make([]Zone, 0, len(resp.Zones.Zone))
	for _, z := range resp.Zones.Zone {
		out = append(out, Zone{ID: z.ZoneId, LocalName: z.LocalName})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ZoneIDs lists the zone ids of the client's region, sorted.
func (c *Client) ZoneIDs(ctx context.Context) ([]string, error) {
	zones, err := c.Zones(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(zones))
	for _, z := range zones {
		out = append(out, z.ID)
	}
	return out, nil
}

// InstanceTypeOffer is an instance type as the region's API describes it.
type InstanceTypeOffer struct {
	// ID and Family as the API spells them ("ecs.gn8v.4xlarge", "ecs.gn8v").
	ID, Family string
	CPUCores   int
	MemoryGiB  float64
	GPUs       int
	GPUSpec    string
}

// InstanceTypes pages through DescribeInstanceTypes for one family (without its "ecs." prefix),
// or for every GPU type when family is "".
func (c *Client) InstanceTypes(ctx context.Context, family string) ([]InstanceTypeOffer, error) {
	page := 0
	return pageTokens("instance types", 0, func(token string) ([]InstanceTypeOffer, int, string, error) {
		page++
		req := ecs.CreateDescribeInstanceTypesRequest()
		req.RegionId = c.region
		req.MaxResults = requests.NewInteger(instanceTypesPageSize)
		req.NextToken = token
		if family != "" {
			req.InstanceTypeFamily = "ecs." + family
		} else {
			req.MinimumGPUAmount = requests.NewInteger(1)
		}
		resp := ecs.CreateDescribeInstanceTypesResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, 0, "", err
		}
		out := make([]InstanceTypeOffer, 0, len(resp.InstanceTypes.InstanceType))
		for _, t := range resp.InstanceTypes.InstanceType {
			out = append(out, InstanceTypeOffer{ID: t.InstanceTypeId, Family: t.InstanceTypeFamily, CPUCores: t.CpuCoreCount,
				MemoryGiB: t.MemorySize, GPUs: t.GPUAmount, GPUSpec: t.GPUSpec})
		}
		tflog.Debug(ctx, "DescribeInstanceTypes page", map[string]any{"family": family, "page": page, "types": len(out)})
		return out, len(out), resp.NextToken, nil
	})
}

// InstanceTypeStock is the stock of one instance type in one zone.
type InstanceTypeStock struct {
	ZoneID string
	// InstanceType as the API spells it (with or without the "ecs." prefix).
	InstanceType string
	// Status (Available, SoldOut) and StatusCategory (WithStock, ClosedWithoutStock...).
	Status, StatusCategory string
}

// InstanceTypeStocks asks DescribeAvailableResource once for the region (pay-as-you-go instance
// types) and returns every zone's entry for every type.
func (c *Client) InstanceTypeStocks(ctx context.Context) ([]InstanceTypeStock, error) {
	return c.instanceTypeStocks(ctx, "")
}

// SpotInstanceTypeStocks is InstanceTypeStocks for spot (SpotStrategy SpotAsPriceGo): the types
// the vendor sells pay-as-you-go only are absent from its answer
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeavailableresource).
func (c *Client) SpotInstanceTypeStocks(ctx context.Context) ([]InstanceTypeStock, error) {
	return c.instanceTypeStocks(ctx, "SpotAsPriceGo")
}

func (c *Client) instanceTypeStocks(ctx context.Context, spotStrategy string) ([]InstanceTypeStock, error) {
	req := ecs.CreateDescribeAvailableResourceRequest()
	req.RegionId = c.region
	req.DestinationResource = "InstanceType"
	req.InstanceChargeType = "PostPaid"
	req.SpotStrategy = spotStrategy
	resp := ecs.CreateDescribeAvailableResourceResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	var out []InstanceTypeStock
	for _, z := range resp.AvailableZones.AvailableZone {
		for _, r := range z.AvailableResources.AvailableResource {
			if r.Type != "InstanceType" {
				continue
			}
			for _, s := range r.SupportedResources.SupportedResource {
				out = append(out, InstanceTypeStock{ZoneID: z.ZoneId, InstanceType: s.Value, Status: s.Status, StatusCategory: s.StatusCategory})
			}
		}
	}
	return out, nil
}

// SpotOffers asks DescribeAvailableResource once for the region which instance types are sold as
// spot (SpotStrategy SpotAsPriceGo, pay-as-you-go) and answers instance type -> the zones that
// offer it as spot. Types the vendor sells pay-as-you-go only are absent from that answer
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeavailableresource);
// a zone whose entry is ClosedWithoutStock no longer sells it. An entry SoldOut WithoutStock is
// spot sold out for now, still offered: stock comes and goes, and the group's
// fallback_to_on_demand covers it. Type ids are as the API spells them.
func (c *Client) SpotOffers(ctx context.Context) (map[string][]string, error) {
	stocks, err := c.SpotInstanceTypeStocks(ctx)
	if err != nil {
		return nil, err
	}
	return SpotOffersOf(stocks), nil
}

// SpotOffersOf is SpotOffers from an answer of SpotInstanceTypeStocks already read.
func SpotOffersOf(stocks []InstanceTypeStock) map[string][]string {
	out := map[string][]string{}
	for _, s := range stocks {
		if s.StatusCategory != "ClosedWithoutStock" {
			out[s.InstanceType] = append(out[s.InstanceType], s.ZoneID)
		}
	}
	return out
}

// HourlyPrice asks DescribePrice what amount instances of a type cost per hour.
func (c *Client) HourlyPrice(ctx context.Context, instanceType, zoneID, spotStrategy string, amount int) (float64, string, error) {
	req := ecs.CreateDescribePriceRequest()
	req.RegionId = c.region
	req.ResourceType = "instance"
	req.InstanceType = instanceType
	req.ZoneId = zoneID
	req.Amount = requests.NewInteger(amount)
	if spotStrategy != "" {
		req.SpotStrategy = spotStrategy
	}
	resp := ecs.CreateDescribePriceResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return 0, "", err
	}
	return resp.PriceInfo.Price.TradePrice, resp.PriceInfo.Price.Currency, nil
}
