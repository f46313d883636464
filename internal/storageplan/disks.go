package storageplan

import (
	"fmt"
	"strconv"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// DiskHint is a node-local data disk that reaches an IOPS target, in the terms
// gpucluster_node_pool.data_disks takes.
type DiskHint struct {
	Category string
	Level    string
	SizeGiB  int
	IOPS     int
	MBps     int
	Note     string
}

// HintLevel is the ESSD level the hot tier's node-local disks use.
const HintLevel = "PL3"

// PL3Hint sizes one ESSD PL3 disk per node to reach minIOPS (0: the smallest PL3), from the
// catalog's ESSD formulas: IOPS = min(1800 + 50 x GiB, 1,000,000), at least 1,261 GiB. An IOPS
// target above the level's maximum is an error naming the best one disk reaches.
func PL3Hint(minIOPS int64) (DiskHint, error) {
	var lvl catalog.ESSDLevel
	for _, l := range catalog.ESSDLevels() {
		if l.Name == HintLevel {
			lvl = l
		}
	}
	if minIOPS > int64(lvl.MaxIOPS) {
		smallestAtMax := ceilDiv(lvl.MaxIOPS-lvl.BaseIOPS, lvl.IOPSPerGiB)
		return DiskHint{}, planerr.New("min_iops", strconv.FormatInt(minIOPS, 10),
			fmt.Sprintf("one node-local disk reaches at most %d IOPS (ESSD %s)", lvl.MaxIOPS, lvl.Name),
			fmt.Sprintf("lower min_iops to %d or less, or spread the load over more nodes (the target is per node)", lvl.MaxIOPS),
			fmt.Errorf("%w: min_iops = %d cannot be met: the best reachable on one node-local disk is %d IOPS (ESSD %s from %d GiB), "+
				"and no file system in the vendor's published figures has a stated IOPS formula. Lower min_iops to %d or less, "+
				"or spread the load over more nodes (the target is per node)",
				ErrUnreachable, minIOPS, lvl.MaxIOPS, lvl.Name, smallestAtMax, lvl.MaxIOPS))
	}
	size := lvl.MinGiB
	note := ""
	if minIOPS > 0 {
		need := ceilDiv(int(minIOPS)-lvl.BaseIOPS, lvl.IOPSPerGiB)
		if need > size {
			size = need
		} else {
			note = fmt.Sprintf(" (%d GiB would reach %d IOPS, but %s starts at %d GiB)", max(need, 1), minIOPS, lvl.Name, lvl.MinGiB)
		}
	}
	if err := catalog.CheckDisk(catalog.DiskCategoryESSD, lvl.Name, size); err != nil {
		return DiskHint{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	iops, mbps := catalog.DiskPerformance(lvl.Name, size)
	target := "the smallest " + lvl.Name
	if minIOPS > 0 {
		target = fmt.Sprintf("%d IOPS per node", minIOPS)
	}
	return DiskHint{
		Category: catalog.DiskCategoryESSD, Level: lvl.Name, SizeGiB: size, IOPS: iops, MBps: mbps,
		Note: fmt.Sprintf("data_disk_hint: ESSD %s of %d GiB per node for %s%s: min(%d + %d x %d, %d) = %d IOPS, min(%g + %g x %d, %d) = %d MB/s; "+
			"the instance type caps total disk performance too",
			lvl.Name, size, target, note, lvl.BaseIOPS, lvl.IOPSPerGiB, size, lvl.MaxIOPS, iops, lvl.BaseMBps, lvl.MBpsPerGiB, size, lvl.MaxMBps, mbps),
	}, nil
}

func ceilDiv(a, b int) int {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
