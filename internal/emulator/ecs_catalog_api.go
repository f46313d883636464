package emulator

import (
	"strings"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

func init() {
	register(versionECS, "DescribeInstanceTypes", route{fn: describeInstanceTypes, regionOptional: true})
	register(versionECS, "DescribeAvailableResource", route{fn: describeAvailableResource})
	register(versionECS, "DescribeRegions", route{fn: describeRegions, noRegion: true})
	register(versionECS, "DescribeZones", route{fn: describeZones})
	register(versionECS, "DescribeImages", route{fn: describeImages})
	register(versionECS, "DescribePrice", route{fn: describePrice})
}

func sdkInstanceType(it *instanceTypeInfo) ecs.InstanceType {
	out := ecs.InstanceType{
		InstanceTypeId: it.Name, InstanceTypeFamily: "ecs." + it.fam.Family,
		CpuCoreCount: it.VCPU, MemorySize: it.MemGiB, GPUAmount: it.GPUs, GPUSpec: it.fam.GPUSpec,
		GPUMemorySize: it.fam.GPUMemMiB, EriQuantity: it.fam.Eri, NetworkCardQuantity: it.fam.Cards,
		InstanceBandwidthRx: int(it.NetGbits * 1024 * 1000), InstanceBandwidthTx: int(it.NetGbits * 1024 * 1000),
		InstanceCategory: "GPU-accelerated", InstanceFamilyLevel: "EnterpriseLevel", CpuArchitecture: "X86",
		NvmeSupport: "unsupported",
	}
	if strings.HasPrefix(it.fam.Family, "ebm") || strings.HasPrefix(it.fam.Family, "scc") {
		out.InstanceCategory = "ECS Bare Metal"
	}
	for i := 0; i < it.fam.Cards; i++ {
		out.NetworkCards.NetworkCardInfo = append(out.NetworkCards.NetworkCardInfo, ecs.NetworkCardInfo{NetworkCardIndex: i})
	}
	return out
}

func describeInstanceTypes(c *call) (any, *apiError) {
	want := c.p.List("InstanceTypes")
	for i := range want {
		want[i] = normalizeType(want[i])
	}
	fam := normalizeType(c.p["InstanceTypeFamily"])
	resp := &ecs.DescribeInstanceTypesResponse{RequestId: c.reqID}
	resp.InstanceTypes.InstanceType = []ecs.InstanceType{}
	for _, name := range instanceTypeOrder {
		it := instanceTypes[name]
		if (len(want) > 0 && !contains(want, name)) || (fam != "" && "ecs."+it.fam.Family != fam) ||
			(c.p["GPUSpec"] != "" && it.fam.GPUSpec != c.p["GPUSpec"]) {
			continue
		}
		resp.InstanceTypes.InstanceType = append(resp.InstanceTypes.InstanceType, sdkInstanceType(it))
	}
	return resp, nil
}

// stock answers how many of a type a zone has and whether stock is limited.
func (d *db) stock(zone, typ string) (int, bool) {
	if d.unavailable(zone, typ) != "" {
		return 0, true
	}
	if z := d.Capacity[zone]; z != nil {
		if n, ok := z[typ]; ok {
			return n, true
		}
	}
	return 0, false
}

var diskCategories = []string{"cloud_essd", "cloud_auto"}

// The documented values of DescribeAvailableResource's DestinationResource and ResourceType.
var (
	availableDestinations  = []string{"Zone", "IoOptimized", "InstanceType", "Network", "ddh", "SystemDisk", "DataDisk"}
	availableResourceTypes = []string{"instance", "disk", "reservedinstance", "ddh"}
)

func describeAvailableResource(c *call) (any, *apiError) {
	dest, e := c.p.Required("DestinationResource")
	if e != nil {
		return nil, e
	}
	if !contains(availableDestinations, dest) {
		return nil, errInvalid("DestinationResource", "%q is not one of %s", dest, strings.Join(availableDestinations, ", "))
	}
	if rt := c.p["ResourceType"]; rt != "" && !contains(availableResourceTypes, rt) {
		return nil, errInvalid("ResourceType", "%q is not one of %s", rt, strings.Join(availableResourceTypes, ", "))
	}
	onlyType := normalizeType(c.p["InstanceType"])
	if onlyType != "" && instanceTypes[onlyType] == nil {
		return nil, errf(400, "InvalidInstanceType.ValueNotSupported", "The specified InstanceType %q is not offered.", onlyType)
	}
	// Asked with a SpotStrategy, the vendor lists the types it sells as spot; a type sold
	// pay-as-you-go only is absent (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeavailableresource).
	spotAsked := isSpot(c.p["SpotStrategy"])
	resp := &ecs.DescribeAvailableResourceResponse{RequestId: c.reqID}
	resp.AvailableZones.AvailableZone = []ecs.AvailableZone{}
	for _, zone := range c.s.regions[c.region].Zones {
		if z := c.p["ZoneId"]; z != "" && z != zone {
			continue
		}
		var sup []ecs.SupportedResource
		anyStock := false
		for _, name := range instanceTypeOrder {
			if (onlyType != "" && name != onlyType) || (spotAsked && c.s.db.spotless(name)) {
				continue
			}
			n, limited := c.s.db.stock(zone, name)
			st, cat := "Available", "WithStock"
			if limited && n <= 0 {
				st, cat = "SoldOut", "WithoutStock"
			} else {
				anyStock = true
			}
			sup = append(sup, ecs.SupportedResource{Value: name, Status: st, StatusCategory: cat})
		}
		az := ecs.AvailableZone{RegionId: c.region, ZoneId: zone, Status: "Available", StatusCategory: "WithStock"}
		if !anyStock {
			az.Status, az.StatusCategory = "SoldOut", "WithoutStock"
		}
		res := ecs.AvailableResource{Type: dest}
		switch dest {
		case "InstanceType":
			res.SupportedResources.SupportedResource = sup
		case "Zone":
			res.Type = "Zone"
			res.SupportedResources.SupportedResource = []ecs.SupportedResource{{Value: zone, Status: az.Status, StatusCategory: az.StatusCategory}}
		case "IoOptimized":
			res.SupportedResources.SupportedResource = []ecs.SupportedResource{{Value: "optimized", Status: "Available", StatusCategory: "WithStock"}}
		case "Network":
			res.SupportedResources.SupportedResource = []ecs.SupportedResource{{Value: "vpc", Status: "Available", StatusCategory: "WithStock"}}
		case "ddh":
			// The emulator has no dedicated hosts to offer.
			res.SupportedResources.SupportedResource = []ecs.SupportedResource{}
		case "SystemDisk", "DataDisk":
			for _, cat := range diskCategories {
				res.SupportedResources.SupportedResource = append(res.SupportedResources.SupportedResource,
					ecs.SupportedResource{Value: cat, Status: "Available", StatusCategory: "WithStock", Unit: "GiB", Min: 1, Max: 65536})
			}
		}
		az.AvailableResources.AvailableResource = []ecs.AvailableResource{res}
		resp.AvailableZones.AvailableZone = append(resp.AvailableZones.AvailableZone, az)
	}
	return resp, nil
}

func describeRegions(c *call) (any, *apiError) {
	resp := &ecs.DescribeRegionsResponse{RequestId: c.reqID}
	resp.Regions.Region = []ecs.Region{}
	for _, r := range catalogRegions {
		if c.s.regions[r.ID] == nil {
			continue
		}
		resp.Regions.Region = append(resp.Regions.Region, ecs.Region{RegionId: r.ID, LocalName: r.LocalName,
			RegionEndpoint: "ecs." + r.ID + ".aliyuncs.com", Status: "available"})
	}
	return resp, nil
}

func describeZones(c *call) (any, *apiError) {
	resp := &ecs.DescribeZonesResponse{RequestId: c.reqID}
	resp.Zones.Zone = []ecs.Zone{}
	for _, z := range c.s.regions[c.region].Zones {
		zone := ecs.Zone{ZoneId: z, LocalName: z, ZoneType: "AvailabilityZone"}
		zone.AvailableInstanceTypes.InstanceTypes = append([]string{}, instanceTypeOrder...)
		zone.AvailableResourceCreation.ResourceTypes = []string{"Instance", "Disk", "VSwitch", "IoOptimized"}
		zone.AvailableDiskCategories.DiskCategories = append([]string{}, diskCategories...)
		zone.AvailableVolumeCategories.VolumeCategories = []string{}
		resp.Zones.Zone = append(resp.Zones.Zone, zone)
	}
	return resp, nil
}

func describeImages(c *call) (any, *apiError) {
	number, size, e := c.page(100)
	if e != nil {
		return nil, e
	}
	var ids []string
	if v := c.p["ImageId"]; v != "" {
		ids = strings.Split(v, ",")
		for _, id := range ids {
			if findImage(id) == nil {
				return nil, errNotFound("InvalidImageId.NotFound", id)
			}
		}
	}
	owner := c.p["ImageOwnerAlias"]
	var list []ecs.Image
	for _, img := range publicImages {
		if (ids != nil && !contains(ids, img.ID)) || (owner != "" && owner != "system") ||
			(c.p["ImageName"] != "" && !matchName(img.Name, c.p["ImageName"])) ||
			(c.p["OSType"] != "" && c.p["OSType"] != "linux") || (c.p["ImageFamily"] != "" && c.p["ImageFamily"] != img.Family) {
			continue
		}
		list = append(list, ecs.Image{ImageId: img.ID, ImageName: img.Name, ImageFamily: img.Family, OSName: img.OSName,
			OSNameEn: img.OSName, Platform: img.Platform, OSType: "linux", Architecture: "x86_64", Size: img.Size,
			Status: "Available", ImageOwnerAlias: "system", IsPublic: true, IsSupportIoOptimized: true,
			IsSupportCloudinit: true, Usage: "instance", Progress: "100%", CreationTime: "2024-01-01T00:00:00Z", BootMode: "BIOS"})
	}
	lo, hi := pageBounds(len(list), number, size)
	resp := &ecs.DescribeImagesResponse{RequestId: c.reqID, RegionId: c.region, PageNumber: number, PageSize: size, TotalCount: len(list)}
	resp.Images.Image = append([]ecs.Image{}, list[lo:hi]...)
	return resp, nil
}

// describePrice answers from the emulator's own illustrative price table
// (catalog.go): these figures are NOT Alibaba Cloud prices.
func describePrice(c *call) (any, *apiError) {
	rt := orDefault(c.p["ResourceType"], "instance")
	if rt != "instance" {
		return nil, errInvalid("ResourceType", "the emulator prices instances only")
	}
	name, e := c.p.Required("InstanceType")
	if e != nil {
		return nil, e
	}
	it := instanceTypes[normalizeType(name)]
	if it == nil {
		return nil, errf(400, "InvalidInstanceType.ValueNotSupported", "The specified InstanceType %q is not offered.", name)
	}
	amount, e := c.p.Int("Amount", 1)
	if e != nil {
		return nil, e
	}
	hour := hourPrice(it)
	sysSize, _ := c.p.Int("SystemDisk.Size", 40)
	hour += diskHourPrice(orDefault(c.p["SystemDisk.Category"], "cloud_essd"), c.p["SystemDisk.PerformanceLevel"], sysSize)
	for _, m := range c.p.StructList("DataDisk") {
		size := 0
		if v := m["Size"]; v != "" {
			size = atoiOr(v, 0)
		}
		hour += diskHourPrice(orDefault(m["Category"], "cloud_essd"), m["PerformanceLevel"], size)
	}
	if s := c.p["SpotStrategy"]; s == "SpotAsPriceGo" || s == "SpotWithPriceLimit" {
		hour *= 0.3
	}
	unit := orDefault(c.p["PriceUnit"], "Hour")
	period, e := c.p.Int("Period", 1)
	if e != nil {
		return nil, e
	}
	// The vendor prices by Hour, Month or Year only.
	mult := map[string]float64{"Hour": 1, "Month": 720, "Year": 8760}[unit]
	if mult == 0 {
		return nil, errf(400, "InvalidPriceUnit.ValueNotSupported", "PriceUnit %q is not supported: use Hour, Month or Year.", unit)
	}
	total := roundCents(hour * mult * float64(period) * float64(amount))
	resp := &ecs.DescribePriceResponse{RequestId: c.reqID}
	resp.PriceInfo.Price = ecs.Price{OriginalPrice: total, TradePrice: total, DiscountPrice: 0, Currency: "CNY"}
	return resp, nil
}

func atoiOr(s string, d int) int {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return d
		}
		n = n*10 + int(r-'0')
	}
	return n
}
