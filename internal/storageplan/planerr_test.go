package storageplan

import (
	"errors"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr/planerrtest"
)

// Every error about the user's input names the storage tier attribute it is about, as data.
func TestErrorsNameTheAttribute(t *testing.T) {
	size := func(r Request) error { _, err := Size(r); return err }
	for _, tc := range []struct {
		name     string
		err      error
		sentinel error
		path     string
		value    string
	}{
		{"unknown tier", size(Request{Tier: "lukewarm", CapacityTiB: 1}), ErrInvalid, "tier", "lukewarm"},
		{"capacity below 1", size(Request{Tier: TierWarm}), ErrInvalid, "capacity_tib", "0"},
		{"negative IOPS target", size(Request{Tier: TierHot, CapacityTiB: 1, MinIOPS: -5}), ErrInvalid, "min_iops", "-5"},
		{"negative throughput target", size(Request{Tier: TierWarm, CapacityTiB: 1, MinThroughputGBps: -1.5}), ErrInvalid, "min_throughput_gbps", "-1.5"},
		{"unknown backend", size(Request{Tier: TierWarm, CapacityTiB: 1, Backend: "tape"}), ErrInvalid, "backend", "tape"},
		{"backend of another tier", size(Request{Tier: TierHot, CapacityTiB: 1, Backend: "oss"}), ErrInvalid, "backend", "oss"},
		{"IOPS beyond one disk", size(Request{Tier: TierHot, CapacityTiB: 1, MinIOPS: 2_000_000}), ErrUnreachable, "min_iops", "2000000"},
		{"IOPS beyond one disk (hint)", func() error { _, err := PL3Hint(3_000_000); return err }(), ErrUnreachable, "min_iops", "3000000"},
		{"throughput beyond the backend", size(Request{Tier: TierWarm, CapacityTiB: 100, Backend: "nas_capacity", MinThroughputGBps: 1000}), ErrUnreachable, "min_throughput_gbps", "1000"},
		{"capacity beyond every backend", size(Request{Tier: TierWarm, CapacityTiB: 100_000, Backend: "nas_extreme_standard"}), ErrUnreachable, "capacity_tib", "100000"},
		{"negative lifecycle days", Lifecycle{IAAfterDays: -1}.Validate(), ErrInvalid, "object_lifecycle.ia_after_days", "-1"},
		{"empty lifecycle", Lifecycle{}.Validate(), ErrInvalid, "object_lifecycle", ""},
		{"steps out of order", Lifecycle{IAAfterDays: 30, ArchiveAfterDays: 10}.Validate(), ErrInvalid, "object_lifecycle.archive_after_days", "10"},
		{"step too soon", Lifecycle{IAAfterDays: 30, ArchiveAfterDays: 40}.Validate(), ErrInvalid, "object_lifecycle.archive_after_days", "40"},
		{"expiry too soon after ColdArchive", Lifecycle{ColdArchiveAfterDays: 10, ExpireAfterDays: 20}.Validate(), ErrInvalid, "object_lifecycle.expire_after_days", "20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !errors.Is(tc.err, tc.sentinel) {
				t.Fatalf("want an error wrapping %v, got %v", tc.sentinel, tc.err)
			}
			planerrtest.AssertAttribute(t, tc.err, tc.path, tc.value)
		})
	}
}
