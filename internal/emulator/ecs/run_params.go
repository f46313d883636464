package ecs

import (
	"fmt"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// RunInstances limits the vendor documents in the request model of RunInstances.
const (
	maxSystemDiskGiB = 2048      // SystemDisk.Size: at most 2,048 GiB whatever the category
	maxDataDisks     = 16        // DataDisk.N: N is 1 to 16
	maxUserDataBytes = 32 * 1024 // UserData: 32 KB before Base64 encoding
)

// checkDiskKind checks the category rules of a disk made from a snapshot whose size was not
// given (it takes the snapshot's): a size valid for every category stands in for it.
func checkDiskKind(name string, d *disk, fam *gpuFamily, system bool) *core.Error {
	probe := *d
	probe.Snapshot, probe.Size = "", 1261 // the PL3 minimum, inside every other range too
	if e := checkDisk(name, &probe, fam, system); e != nil {
		return e
	}
	d.PL = probe.PL
	return nil
}

// runImage picks the image of a RunInstances request in the call's region: ImageId (a public
// image or an Available custom image of the region, see runCustomImage), or the newest image of
// ImageFamily (a custom family's newest Available image, else the public family's); the vendor
// refuses both together.
func (c *call) runImage(p core.Params) (*imageInfo, *core.Error) {
	id, fam := p["ImageId"], p["ImageFamily"]
	switch {
	case id != "" && fam != "":
		return nil, core.Errf(400, "InvalidParameter.Conflict", "ImageId and ImageFamily cannot both be specified.")
	case id != "":
		if img := findImage(id); img != nil {
			return img, nil
		}
		return c.runCustomImage(id)
	case fam != "":
		if img := c.newestCustomImage(fam); img != nil {
			return img, nil
		}
		var newest *imageInfo
		for i := range publicImages {
			if img := &publicImages[i]; img.Family == fam && (newest == nil || img.ID > newest.ID) {
				newest = img
			}
		}
		if newest == nil {
			return nil, core.Errf(404, "InvalidImageFamily.NotFound", "The specified ImageFamily %q has no available image.", fam)
		}
		return newest, nil
	}
	return nil, core.ErrMissing("ImageId")
}

// runPlacement reads where a RunInstances request puts the instance. With a primary network
// interface (NetworkInterface.N.InstanceType=Primary) the vSwitch and security groups come
// from that interface and the top-level VSwitchId, SecurityGroupId and SecurityGroupIds.N are
// refused; otherwise VSwitchId and one of SecurityGroupId or SecurityGroupIds.N are needed.
func runPlacement(p core.Params) (vswID string, sgIDs []string, e *core.Error) {
	for i, m := range p.StructList("NetworkInterface") {
		if m["InstanceType"] != "Primary" {
			continue
		}
		name := fmt.Sprintf("NetworkInterface.%d", i+1)
		for _, k := range []string{"VSwitchId", "SecurityGroupId"} {
			if p[k] != "" {
				return "", nil, core.Errf(400, "InvalidParameter.Conflict", "%s cannot be specified with a primary network interface (%s.InstanceType=Primary): set %s.%s instead.", k, name, name, k)
			}
		}
		if len(p.List("SecurityGroupIds")) > 0 {
			return "", nil, core.Errf(400, "InvalidParameter.Conflict", "SecurityGroupIds.N cannot be specified with a primary network interface (%s.InstanceType=Primary): set %s.SecurityGroupIds.N instead.", name, name)
		}
		if vswID = m["VSwitchId"]; vswID == "" {
			return "", nil, core.ErrMissing(name + ".VSwitchId")
		}
		if sg := m["SecurityGroupId"]; sg != "" {
			sgIDs = append(sgIDs, sg)
		}
		sgIDs = append(sgIDs, core.Params(m).List("SecurityGroupIds")...)
		if len(sgIDs) == 0 {
			return "", nil, core.ErrMissing(name + ".SecurityGroupId")
		}
		return vswID, sgIDs, nil
	}
	if vswID = p["VSwitchId"]; vswID == "" {
		return "", nil, core.ErrMissing("VSwitchId")
	}
	sgIDs = p.List("SecurityGroupIds")
	if sg := p["SecurityGroupId"]; sg != "" {
		if len(sgIDs) > 0 {
			return "", nil, core.Errf(400, "InvalidParameter.Conflict", "SecurityGroupId and SecurityGroupIds.N cannot both be specified.")
		}
		sgIDs = []string{sg}
	}
	if len(sgIDs) == 0 {
		return "", nil, core.ErrMissing("SecurityGroupId")
	}
	return vswID, sgIDs, nil
}
