package emulator

import "strconv"

// paramRange is an integer range the vendor's request model documents for a parameter the
// emulator otherwise only passes through (it has no behaviour behind it), so a value outside
// is refused as at the vendor. The conformance suite checks these against the SDK models.
type paramRange struct {
	name   string
	lo, hi int
}

var documentedRanges = map[string][]paramRange{
	versionECS + "/RunInstances":         {{"DeploymentSetGroupNo", 1, 7}, {"InternetMaxBandwidthOut", 0, 100}, {"Ipv6AddressCount", 1, 10}},
	versionECS + "/CreateLaunchTemplate": {{"InternetMaxBandwidthOut", 0, 100}, {"Ipv6AddressCount", 1, 10}},
	versionECS + "/DescribePrice":        {{"Amount", 1, 1000}, {"InstanceAmount", 1, 1000}, {"InternetMaxBandwidthOut", 0, 100}},
}

// checkRanges refuses a parameter outside its documented range, naming it.
func checkRanges(key string, p params) *apiError {
	for _, r := range documentedRanges[key] {
		v, ok := p[r.name]
		if !ok || v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return errInvalid(r.name, "%q is not an integer", v)
		}
		if n < r.lo || n > r.hi {
			return errInvalid(r.name, "%d is outside the valid range %d-%d", n, r.lo, r.hi)
		}
	}
	return nil
}
