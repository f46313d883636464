package ecs

import (
	"cmp"
	"slices"
	"strings"

	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "DescribeAvailableResource", core.Route{Fn: handle(describeAvailableResource)})
	core.Register(Version, "DescribeRegions", core.Route{Fn: handle(describeRegions), NoRegion: true})
	core.Register(Version, "DescribeZones", core.Route{Fn: handle(describeZones)})
	core.Register(Version, "DescribeImages", core.Route{Fn: handle(describeImages)})
	core.Register(Version, "DescribePrice", core.Route{Fn: handle(describePrice)})
}

// stock answers how many of a type a zone has and whether stock is limited.
func (d *Store) stock(zone, typ string) (int, bool) {
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

func describeAvailableResource(c *call) (any, *core.Error) {
	dest, e := c.P.Required("DestinationResource")
	if e != nil {
		return nil, e
	}
	if !slices.Contains(availableDestinations, dest) {
		return nil, core.ErrInvalid("DestinationResource", "%q is not one of %s", dest, strings.Join(availableDestinations, ", "))
	}
	if rt := c.P["ResourceType"]; rt != "" && !slices.Contains(availableResourceTypes, rt) {
		return nil, core.ErrInvalid("ResourceType", "%q is not one of %s", rt, strings.Join(availableResourceTypes, ", "))
	}
	onlyType := normalizeType(c.P["InstanceType"])
	if onlyType != "" && instanceTypes[onlyType] == nil {
		return nil, core.Errf(400, "InvalidInstanceType.ValueNotSupported", "The specified InstanceType %q is not offered.", onlyType)
	}
	// Asked with a SpotStrategy, the vendor lists the types it sells as spot; a type sold
	// pay-as-you-go only is absent (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeavailableresource).
	spotAsked := isSpot(c.P["SpotStrategy"])
	resp := &ecssdk.DescribeAvailableResourceResponse{RequestId: c.ReqID}
	resp.AvailableZones.AvailableZone = []ecssdk.AvailableZone{}
	for _, zone := range c.zones() {
		if z := c.P["ZoneId"]; z != "" && z != zone {
			continue
		}
		var sup []ecssdk.SupportedResource
		anyStock := false
		for _, name := range instanceTypeOrder {
			if (onlyType != "" && name != onlyType) || (spotAsked && c.st.spotless(name)) {
				continue
			}
			n, limited := c.st.stock(zone, name)
			st, cat := "Available", "WithStock"
			if limited && n <= 0 {
				st, cat = "SoldOut", "WithoutStock"
			} else {
				anyStock = true
			}
			sup = append(sup, ecssdk.SupportedResource{Value: name, Status: st, StatusCategory: cat})
		}
		az := ecssdk.AvailableZone{RegionId: c.Region, ZoneId: zone, Status: "Available", StatusCategory: "WithStock"}
		if !anyStock {
			az.Status, az.StatusCategory = "SoldOut", "WithoutStock"
		}
		res := ecssdk.AvailableResource{Type: dest}
		switch dest {
		case "InstanceType":
			res.SupportedResources.SupportedResource = sup
		case "Zone":
			res.Type = "Zone"
			res.SupportedResources.SupportedResource = []ecssdk.SupportedResource{{Value: zone, Status: az.Status, StatusCategory: az.StatusCategory}}
		case "IoOptimized":
			res.SupportedResources.SupportedResource = []ecssdk.SupportedResource{{Value: "optimized", Status: "Available", StatusCategory: "WithStock"}}
		case "Network":
			res.SupportedResources.SupportedResource = []ecssdk.SupportedResource{{Value: "vpc", Status: "Available", StatusCategory: "WithStock"}}
		case "ddh":
			// The emulator has no dedicated hosts to offer.
			res.SupportedResources.SupportedResource = []ecssdk.SupportedResource{}
		case "SystemDisk", "DataDisk":
			for _, cat := range diskCategories {
				res.SupportedResources.SupportedResource = append(res.SupportedResources.SupportedResource,
					ecssdk.SupportedResource{Value: cat, Status: "Available", StatusCategory: "WithStock", Unit: "GiB", Min: 1, Max: 65536})
			}
		}
		az.AvailableResources.AvailableResource = []ecssdk.AvailableResource{res}
		resp.AvailableZones.AvailableZone = append(resp.AvailableZones.AvailableZone, az)
	}
	return resp, nil
}

func describeRegions(c *call) (any, *core.Error) {
	resp := &ecssdk.DescribeRegionsResponse{RequestId: c.ReqID}
	resp.Regions.Region = []ecssdk.Region{}
	for _, r := range c.Env.Regions() {
		resp.Regions.Region = append(resp.Regions.Region, ecssdk.Region{RegionId: r.ID, LocalName: r.LocalName,
			RegionEndpoint: "ecs." + r.ID + ".aliyuncs.com", Status: "available"})
	}
	return resp, nil
}

func describeZones(c *call) (any, *core.Error) {
	resp := &ecssdk.DescribeZonesResponse{RequestId: c.ReqID}
	resp.Zones.Zone = []ecssdk.Zone{}
	for _, z := range c.zones() {
		zone := ecssdk.Zone{ZoneId: z, LocalName: z, ZoneType: "AvailabilityZone"}
		zone.AvailableInstanceTypes.InstanceTypes = append([]string{}, instanceTypeOrder...)
		zone.AvailableResourceCreation.ResourceTypes = []string{"Instance", "Disk", "VSwitch", "IoOptimized"}
		zone.AvailableDiskCategories.DiskCategories = append([]string{}, diskCategories...)
		zone.AvailableVolumeCategories.VolumeCategories = []string{}
		resp.Zones.Zone = append(resp.Zones.Zone, zone)
	}
	return resp, nil
}

// describeImages lists the public images (ImageOwnerAlias system) and the custom images of the
// region (self); ImageOwnerAlias empty lists both (see images.go for the vendor's rules).
func describeImages(c *call) (any, *core.Error) {
	number, size, e := c.page(100)
	if e != nil {
		return nil, e
	}
	owner := c.P["ImageOwnerAlias"]
	if !slices.Contains(imageOwners, owner) {
		return nil, core.Errf(400, "InvalidImageOwnerAlias.ValueNotSupported", "The specified ImageOwnerAlias value %q is not supported: use system, self, others or marketplace.", owner)
	}
	// Status: "By default, if you do not specify this parameter, only images in the Available
	// state are returned ... You can specify multiple values for this parameter. Separate the
	// values with commas (,)" (DescribeImages).
	statuses := []string{imageAvailable}
	if v := c.P["Status"]; v != "" {
		statuses = strings.Split(v, ",")
		for _, st := range statuses {
			if !slices.Contains(imageStatuses, st) {
				return nil, core.ErrInvalid("Status", "%q is not one of %s", st, strings.Join(imageStatuses, ", "))
			}
		}
	}
	tags, e := c.P.Tags("Tag")
	if e != nil {
		return nil, e
	}
	var ids []string
	if v := c.P["ImageId"]; v != "" {
		ids = strings.Split(v, ",")
		for _, id := range ids {
			// "IDs of custom images, shared images, Alibaba Cloud Marketplace images, and community
			// images start with m" (DescribeImages ImageId). The vendor documents no not-found
			// code for DescribeImages, so an unknown custom id only matches nothing; an unknown
			// public id keeps the emulator's InvalidImageId.NotFound.
			if findImage(id) == nil && !strings.HasPrefix(id, "m-") {
				return nil, core.ErrNotFound("InvalidImageId.NotFound", id)
			}
		}
	}
	var list []ecssdk.Image
	if owner == "" || owner == "system" {
		for _, img := range publicImages {
			if (ids != nil && !slices.Contains(ids, img.ID)) || !slices.Contains(statuses, imageAvailable) ||
				(c.P["ImageName"] != "" && !matchName(img.Name, c.P["ImageName"])) || len(tags) > 0 ||
				(c.P["OSType"] != "" && c.P["OSType"] != "linux") || (c.P["ImageFamily"] != "" && c.P["ImageFamily"] != img.Family) {
				continue
			}
			list = append(list, ecssdk.Image{ImageId: img.ID, ImageName: img.Name, ImageFamily: img.Family, OSName: img.OSName,
				OSNameEn: img.OSName, Platform: img.Platform, OSType: "linux", Architecture: "x86_64", Size: img.Size,
				Status: imageAvailable, ImageOwnerAlias: "system", IsPublic: true, IsSupportIoOptimized: true,
				IsSupportCloudinit: true, Usage: "instance", Progress: "100%", CreationTime: "2024-01-01T00:00:00Z", BootMode: "BIOS"})
		}
	}
	if owner == "" || owner == "self" {
		list = append(list, c.customImagesFor(ids, statuses, tags)...)
	}
	lo, hi := core.PageBounds(len(list), number, size)
	resp := &ecssdk.DescribeImagesResponse{RequestId: c.ReqID, RegionId: c.Region, PageNumber: number, PageSize: size, TotalCount: len(list)}
	resp.Images.Image = append([]ecssdk.Image{}, list[lo:hi]...)
	return resp, nil
}

// describePrice answers from the emulator's own illustrative price table
// (catalog.go): these figures are NOT Alibaba Cloud prices.
func describePrice(c *call) (any, *core.Error) {
	rt := cmp.Or(c.P["ResourceType"], "instance")
	if rt != "instance" {
		return nil, core.ErrInvalid("ResourceType", "the emulator prices instances only")
	}
	name, e := c.P.Required("InstanceType")
	if e != nil {
		return nil, e
	}
	it := instanceTypes[normalizeType(name)]
	if it == nil {
		return nil, core.Errf(400, "InvalidInstanceType.ValueNotSupported", "The specified InstanceType %q is not offered.", name)
	}
	amount, e := c.P.Int("Amount", 1)
	if e != nil {
		return nil, e
	}
	hour := hourPrice(it)
	sysSize, _ := c.P.Int("SystemDisk.Size", 40)
	hour += diskHourPrice(cmp.Or(c.P["SystemDisk.Category"], "cloud_essd"), c.P["SystemDisk.PerformanceLevel"], sysSize)
	for _, m := range c.P.StructList("DataDisk") {
		size := 0
		if v := m["Size"]; v != "" {
			size = atoiOr(v, 0)
		}
		hour += diskHourPrice(cmp.Or(m["Category"], "cloud_essd"), m["PerformanceLevel"], size)
	}
	if s := c.P["SpotStrategy"]; s == "SpotAsPriceGo" || s == "SpotWithPriceLimit" {
		hour *= 0.3
	}
	unit := cmp.Or(c.P["PriceUnit"], "Hour")
	period, e := c.P.Int("Period", 1)
	if e != nil {
		return nil, e
	}
	// The vendor prices by Hour, Month or Year only.
	mult := map[string]float64{"Hour": 1, "Month": 720, "Year": 8760}[unit]
	if mult == 0 {
		return nil, core.Errf(400, "InvalidPriceUnit.ValueNotSupported", "PriceUnit %q is not supported: use Hour, Month or Year.", unit)
	}
	total := roundCents(hour * mult * float64(period) * float64(amount))
	resp := &ecssdk.DescribePriceResponse{RequestId: c.ReqID}
	resp.PriceInfo.Price = ecssdk.Price{OriginalPrice: total, TradePrice: total, DiscountPrice: 0, Currency: "CNY"}
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
