package storageplan

// List prices of the storage backends, so a tier's cost can join the node pools' in a cluster's
// hourly estimate. Only figures the vendor publishes are here; a backend without one has no
// entry and its price is unknown (HourlyPrice returns false), never a guess.

// HoursPerMonth is the vendor's conversion from a monthly unit price to an hourly one: both the
// CPFS and the OSS billing pages divide the monthly price by 30 days and 24 hours.
const HoursPerMonth = 30 * 24

// bytesPerGB and bytesPerGiB convert OSS's decimal GB into the GiB that capacity_tib counts.
const (
	bytesPerGB  = 1e9
	bytesPerGiB = 1 << 30
)

// pricePerGiBMonth is the pay-as-you-go list price, CNY per GiB per month (China (Hangzhou)),
// of the capacity each backend bills. Sources:
//
//   - cpfs_advance_200 (CPFS 200 MB/s/TiB baseline): 1.4 CNY/GiB/month of configured capacity,
//     https://help.aliyun.com/zh/cpfs/cpfsonecs/product-overview/billing-examples
//   - oss: Standard LRS 0.12 CNY/GB/month (decimal GB, converted to GiB below), the price the
//     vendor quotes for the Standard copy of a restored Cold Archive object,
//     https://developer.aliyun.com/ask/631608 ; billing rule (monthly price / 30 / 24):
//     https://www.alibabacloud.com/help/doc-detail/173534.htm . The bucket is priced as if all
//     its data stayed Standard: lifecycle moves to IA and Archive only lower the bill, and their
//     prices are not in the sources above.
//
// Not sourced, so left out (their price is unknown): cpfs_advance_100, the NAS Extreme classes
// and the general-purpose NAS classes (Capacity, Performance, Premium).
var pricePerGiBMonth = map[string]float64{
	BackendCPFSAdvance200: 1.4,
	BackendOSS:            0.12 * bytesPerGiB / bytesPerGB,
}

// HourlyPrice is the list price, CNY per hour, of capacityTiB on the named backend: capacity x
// price per GiB-month / HoursPerMonth. File systems bill their configured (provisioned)
// capacity; OSS and general-purpose NAS bill what is stored, so for them capacity_tib is an
// upper estimate. The second result is false when the vendor's price is not known.
func HourlyPrice(backend string, capacityTiB int64) (float64, bool) {
	perGiB, ok := pricePerGiBMonth[backend]
	if !ok {
		return 0, false
	}
	return float64(capacityTiB*GiBPerTiB) * perGiB / HoursPerMonth, true
}

// PricedBackends are the backends with a known price, for documentation.
func PricedBackends() []string {
	out := make([]string, 0, len(pricePerGiBMonth))
	for _, b := range BackendNames() {
		if _, ok := pricePerGiBMonth[b]; ok {
			out = append(out, b)
		}
	}
	return out
}
