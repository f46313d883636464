package netplan

import (
	"net/netip"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr/planerrtest"
)

// Every error about the user's input names the network attribute it is about, as data.
func TestErrorsNameTheAttribute(t *testing.T) {
	parse := func(s string) error { _, err := ParseIPv4CIDR(s); return err }
	carve := func(block string, zones []string) error {
		_, err := Carve(netip.MustParsePrefix(block), zones)
		return err
	}
	for _, tc := range []struct {
		name  string
		err   error
		path  string
		value string
	}{
		{"not a CIDR", parse("10.0.0.0"), "cidr_block", "10.0.0.0"},
		{"IPv6", parse("fd00::/64"), "cidr_block", "fd00::/64"},
		{"host bits", parse("10.0.0.1/16"), "cidr_block", "10.0.0.1/16"},
		{"public range", CheckVPCCIDR(netip.MustParsePrefix("8.8.0.0/16")), "cidr_block", "8.8.0.0/16"},
		{"mask too small", CheckVPCCIDR(netip.MustParsePrefix("10.0.0.0/29")), "cidr_block", "10.0.0.0/29"},
		{"no zones", carve("10.0.0.0/16", nil), "zone_ids", ""},
		{"invalid block", func() error { _, err := Carve(netip.Prefix{}, []string{"a"}); return err }(), "cidr_block", "invalid Prefix"},
		{"block too small for the zones", carve("10.0.0.0/28", []string{"a", "b", "c"}), "cidr_block", "10.0.0.0/28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			planerrtest.AssertAttribute(t, tc.err, tc.path, tc.value)
		})
	}
}
