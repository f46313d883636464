package storageplan

import (
	"math"
	"testing"
)

func TestHourlyPrice(t *testing.T) {
	for _, tc := range []struct {
		backend     string
		capacityTiB int64
		want        float64
		known       bool
	}{
		// 10 TiB = 10,240 GiB x 1.4 CNY / 720 h.
		{BackendCPFSAdvance200, 10, 10240 * 1.4 / 720, true},
		{BackendCPFSAdvance200, 1, 1024 * 1.4 / 720, true},
		// 1 TiB = 1,099.511627776 GB x 0.12 CNY / 720 h.
		{BackendOSS, 1, 1099.511627776 * 0.12 / 720, true},
		{BackendCPFSAdvance100, 10, 0, false},
		{BackendNASCapacity, 10, 0, false},
		{"no-such-backend", 10, 0, false},
	} {
		got, known := HourlyPrice(tc.backend, tc.capacityTiB)
		if known != tc.known || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("HourlyPrice(%q, %d) = %v, %v; want %v, %v", tc.backend, tc.capacityTiB, got, known, tc.want, tc.known)
		}
	}
}

func TestHourlyPriceScalesWithCapacity(t *testing.T) {
	one, _ := HourlyPrice(BackendCPFSAdvance200, 1)
	ten, _ := HourlyPrice(BackendCPFSAdvance200, 10)
	if math.Abs(ten-10*one) > 1e-9 {
		t.Fatalf("10 TiB costs %v, want 10 x %v", ten, one)
	}
}

func TestPricedBackendsAreKnownBackends(t *testing.T) {
	got := PricedBackends()
	if len(got) != len(pricePerGiBMonth) {
		t.Fatalf("PricedBackends() = %v: a priced name is not a backend", got)
	}
}
