package cloud

import (
	"slices"
	"testing"
)

// SpotOffers lists every zone for a type with spot, and leaves out a type sold without spot.
func TestSpotOffers(t *testing.T) {
	c, srv := startEmulator(t)
	ctx := testCtx(t)
	zones, err := c.ZoneIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.SetNoSpot([]string{"ecs.gn7i-c8g1.2xlarge"}); err != nil {
		t.Fatal(err)
	}
	offers, err := c.SpotOffers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := offers["ecs.gn7i-c8g1.2xlarge"]; len(got) != 0 {
		t.Errorf("type sold without spot offered in %v", got)
	}
	if got := offers["ecs.gn7i-c16g1.4xlarge"]; !slices.Equal(got, zones) {
		t.Errorf("type with spot offered in %v, want every zone %v", got, zones)
	}
}
