package ecs

import (
	"cmp"
	"strconv"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// checkDisk applies the ESSD rules of facts section 3.
func checkDisk(name string, d *disk, fam *gpuFamily, system bool) *core.Error {
	if d.Size == 0 && d.Snapshot != "" {
		return checkDiskKind(name, d, fam, system)
	}
	sizeErr := func(lo, hi int) *core.Error {
		code := "InvalidDataDiskSize.ValueNotSupported"
		if system {
			code = "InvalidSystemDiskSize.ValueNotSupported"
		}
		return core.Errf(400, code, "%s.Size %d GiB is not valid for %s %s: must be %d-%d GiB.", name, d.Size, d.Category, d.PL, lo, hi)
	}
	switch d.Category {
	case "cloud_essd":
		if d.PL == "" {
			d.PL = "PL1"
		}
		ranges := map[string][2]int{"PL0": {1, 65536}, "PL1": {20, 65536}, "PL2": {461, 65536}, "PL3": {1261, 65536}}
		r, ok := ranges[d.PL]
		if !ok {
			return core.Errf(400, "InvalidPerformanceLevel.ValueNotSupported", "%s.PerformanceLevel %q is not one of PL0, PL1, PL2, PL3.", name, d.PL)
		}
		if system {
			r[1] = maxSystemDiskGiB
		}
		if d.Size < r[0] || d.Size > r[1] {
			return sizeErr(r[0], r[1])
		}
	case "cloud_auto":
		d.PL = ""
		hi := 65536
		if system {
			hi = maxSystemDiskGiB
		}
		if d.Size < 1 || d.Size > hi {
			return sizeErr(1, hi)
		}
		baseline := max(min(1800+50*d.Size, 50000), 3000)
		maxProv := max(min(1000*d.Size-baseline, 50000), 0)
		if d.Iops < 0 || d.Iops > maxProv {
			return core.Errf(400, "InvalidProvisionedIops.ValueNotSupported", "%s.ProvisionedIops %d must be 0-%d for a %d GiB ESSD AutoPL disk.", name, d.Iops, maxProv, d.Size)
		}
	case "elastic_ephemeral_disk_standard", "elastic_ephemeral_disk_premium":
		if system {
			return core.Errf(400, "InvalidSystemDiskCategory.ValueNotSupported", "%s.Category %s cannot be a system disk.", name, d.Category)
		}
		if !fam.Ephemeral {
			return core.Errf(400, "InvalidDataDiskCategory.ValueNotSupported", "%s.Category %s is not supported by the %s family.", name, d.Category, fam.Family)
		}
		if d.Size < 64 || d.Size > 8192 {
			return sizeErr(64, 8192)
		}
	default:
		code := "InvalidDataDiskCategory.ValueNotSupported"
		if system {
			code = "InvalidSystemDiskCategory.ValueNotSupported"
		}
		return core.Errf(400, code, "%s.Category %q is not supported for GPU instances: use cloud_essd, cloud_auto or (data disks, newer families) elastic_ephemeral_disk_standard|premium.", name, d.Category)
	}
	if d.Category != "cloud_auto" && d.Iops != 0 {
		return core.Errf(400, "InvalidProvisionedIops.ValueNotSupported", "%s.ProvisionedIops applies to cloud_auto disks only.", name)
	}
	return nil
}

func parseDisk(name string, m map[string]string, defSize int) (disk, *core.Error) {
	d := disk{Category: cmp.Or(m["Category"], "cloud_essd"), PL: m["PerformanceLevel"], Name: m["DiskName"], Delete: true}
	var err error
	d.Snapshot = m["SnapshotId"]
	if m["Size"] == "" {
		// A disk made from a snapshot takes the snapshot's size, so Size is not needed then.
		if defSize == 0 && d.Snapshot == "" {
			return d, core.ErrMissing(name + ".Size")
		}
		d.Size = defSize
	} else if d.Size, err = strconv.Atoi(m["Size"]); err != nil {
		return d, core.ErrInvalid(name+".Size", "not an integer")
	}
	if v := m["ProvisionedIops"]; v != "" {
		if d.Iops, err = strconv.Atoi(v); err != nil {
			return d, core.ErrInvalid(name+".ProvisionedIops", "not an integer")
		}
	}
	if v := m["BurstingEnabled"]; v != "" {
		d.Burst = v == "true"
	}
	if v := m["DeleteWithInstance"]; v == "false" {
		d.Delete = false
	}
	return d, nil
}
