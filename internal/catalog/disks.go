package catalog

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// This file holds the cloud disk rules of SOURCES.md section 3 (ESSD levels,
// ESSD AutoPL and elastic ephemeral disks; vendor pages ESSD, AUTOPL and
// EPHEMERAL there).

// Disk categories the catalog knows.
const (
	DiskCategoryESSD                     = "cloud_essd"
	DiskCategoryAutoPL                   = "cloud_auto"
	DiskCategoryEphemeralStandard        = "elastic_ephemeral_disk_standard"
	DiskCategoryEphemeralPremium         = "elastic_ephemeral_disk_premium"
	LevelAutoPL                          = "AutoPL"
	ephemeralMinGiB, ephemeralMaxGiB     = 64, 8192
	autoPLMinGiB, autoPLMaxGiB           = 1, 65536
	autoPLBaselineFloor, autoPLIOPSLimit = 3000, 50000
)

// ESSDLevel is one ESSD performance level. Performance for a size of cap GiB:
// IOPS = min(BaseIOPS + IOPSPerGiB*cap, MaxIOPS),
// MB/s = min(BaseMBps + MBpsPerGiB*cap, MaxMBps).
type ESSDLevel struct {
	Name                 string
	MinGiB, MaxGiB       int
	MaxIOPS, MaxMBps     int
	BaseIOPS, IOPSPerGiB int
	BaseMBps, MBpsPerGiB float64
}

var essdLevels = []ESSDLevel{
	{Name: "PL0", MinGiB: 1, MaxGiB: 65536, MaxIOPS: 10000, MaxMBps: 180, BaseIOPS: 1800, IOPSPerGiB: 12, BaseMBps: 100, MBpsPerGiB: 0.25},
	{Name: "PL1", MinGiB: 20, MaxGiB: 65536, MaxIOPS: 50000, MaxMBps: 350, BaseIOPS: 1800, IOPSPerGiB: 50, BaseMBps: 120, MBpsPerGiB: 0.5},
	{Name: "PL2", MinGiB: 461, MaxGiB: 65536, MaxIOPS: 100000, MaxMBps: 750, BaseIOPS: 1800, IOPSPerGiB: 50, BaseMBps: 120, MBpsPerGiB: 0.5},
	{Name: "PL3", MinGiB: 1261, MaxGiB: 65536, MaxIOPS: 1000000, MaxMBps: 4000, BaseIOPS: 1800, IOPSPerGiB: 50, BaseMBps: 120, MBpsPerGiB: 0.5},
}

// ESSDLevels returns the ESSD performance levels PL0-PL3.
func ESSDLevels() []ESSDLevel { return append([]ESSDLevel(nil), essdLevels...) }

// DiskCategories returns the disk categories CheckDisk accepts.
func DiskCategories() []string {
	return []string{DiskCategoryESSD, DiskCategoryAutoPL, DiskCategoryEphemeralStandard, DiskCategoryEphemeralPremium}
}

func essdLevel(level string) (ESSDLevel, bool) {
	for _, l := range essdLevels {
		if strings.EqualFold(l.Name, strings.TrimSpace(level)) {
			return l, true
		}
	}
	return ESSDLevel{}, false
}

// CheckDisk validates a disk category, performance level and size:
// cloud_essd needs a level PL0-PL3 and a size inside that level's range
// (PL0 1, PL1 20, PL2 461, PL3 1,261 GiB minimum; 65,536 GiB maximum);
// cloud_auto (ESSD AutoPL) takes 1-65,536 GiB and level "" or "AutoPL";
// elastic ephemeral disks take 64-8,192 GiB and no level. Levels are
// case-insensitive. Errors wrap ErrInvalidDisk and name the limits and a fix.
func CheckDisk(category, level string, sizeGiB int) error {
	switch strings.ToLower(strings.TrimSpace(category)) {
	case DiskCategoryESSD:
		l, ok := essdLevel(level)
		if !ok {
			return planerr.New("performance_level", level, "is not an ESSD performance level", "set performance_level to PL0, PL1, PL2 or PL3",
				fmt.Errorf("%w: ESSD performance level %q is not one of PL0, PL1, PL2, PL3", ErrInvalidDisk, level))
		}
		if sizeGiB < l.MinGiB {
			hint := ""
			fix := fmt.Sprintf("grow the disk to %d GiB", l.MinGiB)
			if fit := highestLevelFor(sizeGiB); fit != "" {
				hint = fmt.Sprintf("; use %s for %d GiB or", fit, sizeGiB)
				fix = fmt.Sprintf("use %s for %d GiB or %s", fit, sizeGiB, fix)
			} else {
				hint = "; "
			}
			return planerr.New("size_gib", strconv.Itoa(sizeGiB), fmt.Sprintf("ESSD %s needs at least %d GiB", l.Name, l.MinGiB), fix,
				fmt.Errorf("%w: ESSD %s needs at least %d GiB, got %d GiB%s grow the disk to %d GiB",
					ErrInvalidDisk, l.Name, l.MinGiB, sizeGiB, hint, l.MinGiB))
		}
		if sizeGiB > l.MaxGiB {
			return planerr.New("size_gib", strconv.Itoa(sizeGiB), fmt.Sprintf("ESSD %s allows at most %d GiB", l.Name, l.MaxGiB),
				fmt.Sprintf("set size_gib to %d or less", l.MaxGiB),
				fmt.Errorf("%w: ESSD %s allows at most %d GiB, got %d GiB", ErrInvalidDisk, l.Name, l.MaxGiB, sizeGiB))
		}
		return nil
	case DiskCategoryAutoPL:
		if lv := strings.TrimSpace(level); lv != "" && !strings.EqualFold(lv, LevelAutoPL) {
			return planerr.New("performance_level", level, DiskCategoryAutoPL+" takes no performance level", "leave performance_level unset (or AutoPL)",
				fmt.Errorf("%w: %s takes no performance level (got %q); its IOPS follow the size and ProvisionedIops", ErrInvalidDisk, DiskCategoryAutoPL, level))
		}
		return sizeRange("ESSD AutoPL ("+DiskCategoryAutoPL+")", sizeGiB, autoPLMinGiB, autoPLMaxGiB)
	case DiskCategoryEphemeralStandard, DiskCategoryEphemeralPremium:
		if strings.TrimSpace(level) != "" {
			return planerr.New("performance_level", level, category+" takes no performance level", "leave performance_level unset",
				fmt.Errorf("%w: %s takes no performance level (got %q)", ErrInvalidDisk, category, level))
		}
		return sizeRange(strings.ToLower(strings.TrimSpace(category)), sizeGiB, ephemeralMinGiB, ephemeralMaxGiB)
	}
	return planerr.New("category", category, "is not a disk category", "set category to one of "+strings.Join(DiskCategories(), ", "),
		fmt.Errorf("%w: unknown disk category %q: known categories are %s", ErrInvalidDisk, category, strings.Join(DiskCategories(), ", ")))
}

func sizeRange(what string, size, lo, hi int) error {
	if size < lo {
		return planerr.New("size_gib", strconv.Itoa(size), fmt.Sprintf("%s needs at least %d GiB", what, lo), fmt.Sprintf("set size_gib to %d or more", lo),
			fmt.Errorf("%w: %s needs at least %d GiB, got %d GiB", ErrInvalidDisk, what, lo, size))
	}
	if size > hi {
		return planerr.New("size_gib", strconv.Itoa(size), fmt.Sprintf("%s allows at most %d GiB", what, hi), fmt.Sprintf("set size_gib to %d or less", hi),
			fmt.Errorf("%w: %s allows at most %d GiB, got %d GiB", ErrInvalidDisk, what, hi, size))
	}
	return nil
}

// highestLevelFor returns the fastest ESSD level whose range holds size, or "".
func highestLevelFor(size int) string {
	best := ""
	for _, l := range essdLevels {
		if size >= l.MinGiB && size <= l.MaxGiB {
			best = l.Name
		}
	}
	return best
}

// DiskPerformance returns the maximum IOPS and throughput (MB/s, rounded
// down) of an ESSD of sizeGiB at level PL0-PL3, or the baseline IOPS of
// ESSD AutoPL for level "AutoPL" (max{min{1800+50*cap, 50000}, 3000}); AutoPL
// throughput is not stated by the vendor and is returned as 0. An unknown level
// or a size below 1 returns (0, 0). Sizes outside a level's range are not
// rejected here: call CheckDisk first.
func DiskPerformance(level string, sizeGiB int) (iops int, mbps int) {
	if sizeGiB < 1 {
		return 0, 0
	}
	if strings.EqualFold(strings.TrimSpace(level), LevelAutoPL) || strings.EqualFold(strings.TrimSpace(level), DiskCategoryAutoPL) {
		return autoPLBaseline(sizeGiB), 0
	}
	l, ok := essdLevel(level)
	if !ok {
		return 0, 0
	}
	iops = min(l.BaseIOPS+l.IOPSPerGiB*sizeGiB, l.MaxIOPS)
	mbps = int(min(l.BaseMBps+l.MBpsPerGiB*float64(sizeGiB), float64(l.MaxMBps)))
	return iops, mbps
}

func autoPLBaseline(size int) int {
	return max(min(1800+50*size, autoPLIOPSLimit), autoPLBaselineFloor)
}

// AutoPLMaxProvisionedIOPS is the largest ProvisionedIops an ESSD AutoPL disk
// of sizeGiB accepts: min{1000*cap - baseline, 50000}, and never below 0.
func AutoPLMaxProvisionedIOPS(sizeGiB int) int {
	if sizeGiB < 1 {
		return 0
	}
	return max(0, min(1000*sizeGiB-autoPLBaseline(sizeGiB), autoPLIOPSLimit))
}
