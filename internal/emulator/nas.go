package emulator

import (
	"strings"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/nas"
)

// NAS actions name no RegionId in the vendor's model (the endpoint names the region), so
// every one is regionOptional.
func init() {
	register(versionNAS, "CreateFileSystem", route{fn: createFileSystem, write: true, idem: true, regionOptional: true})
	register(versionNAS, "DescribeFileSystems", route{fn: describeFileSystems, regionOptional: true})
	register(versionNAS, "DeleteFileSystem", route{fn: deleteFileSystem, write: true, regionOptional: true})
	register(versionNAS, "ModifyFileSystem", route{fn: modifyFileSystem, write: true, regionOptional: true})
	register(versionNAS, "UpgradeFileSystem", route{fn: upgradeFileSystem, write: true, idem: true, regionOptional: true})
	register(versionNAS, "CreateMountTarget", route{fn: createMountTarget, write: true, idem: true, regionOptional: true})
	register(versionNAS, "DescribeMountTargets", route{fn: describeMountTargets, regionOptional: true})
	register(versionNAS, "DeleteMountTarget", route{fn: deleteMountTarget, write: true, regionOptional: true})
}

// nasStorageTypes is facts section 3: FileSystemType -> StorageType values.
var nasStorageTypes = map[string][]string{
	"standard": {"Performance", "Capacity", "Premium"},
	"extreme":  {"standard", "advance"},
	"cpfs":     {"advance_100", "advance_200", "economic"},
	"cpfsse":   nil, // storage types for cpfsse are not stated in the facts; any is accepted
}

// nasMaxGiB is the maximum size per storage class from the facts (GiB);
// classes without a stated maximum are absent.
var nasMaxGiB = map[string]int64{
	"standard/Capacity":    10 << 20, // 10 PiB
	"standard/Premium":     1 << 20,  // 1 PiB
	"standard/Performance": 1 << 20,  // 1 PiB
	"extreme/standard":     256 << 10,
	"extreme/advance":      256 << 10,
}

const maxMountTargets = 2

func (s *Server) fsStatus(f *fileSystem, now time.Time) string {
	if f.Phase == "extend" {
		return s.asyncStatus(f.PhaseAt, now, "Extending", "Running")
	}
	return s.asyncStatus(f.PhaseAt, now, "Pending", "Running")
}

func createFileSystem(c *call) (any, *apiError) {
	typ := orDefault(c.p["FileSystemType"], "standard")
	allowed, ok := nasStorageTypes[typ]
	if !ok {
		return nil, errf(400, "InvalidFileSystemType.NotSupported", "FileSystemType %q must be standard, extreme, cpfs or cpfsse.", typ)
	}
	st, e := c.p.Required("StorageType")
	if e != nil {
		return nil, e
	}
	if allowed != nil && !contains(allowed, st) {
		return nil, errf(400, "InvalidStorageType.NotSupported", "StorageType %q is not valid for FileSystemType %s: use one of %s.", st, typ, strings.Join(allowed, ", "))
	}
	proto, e := c.p.Required("ProtocolType")
	if e != nil {
		return nil, e
	}
	if !contains([]string{"NFS", "SMB", "cpfs"}, proto) {
		return nil, errf(400, "InvalidProtocolType.NotSupported", "ProtocolType %q must be NFS, SMB or cpfs.", proto)
	}
	zone := c.p["ZoneId"]
	if zone == "" && typ != "standard" {
		return nil, errMissing("ZoneId")
	}
	if zone != "" && !c.s.zoneExists(c.region, zone) {
		return nil, errNotFound("InvalidZoneId.NotFound", zone)
	}
	capacity, e := c.p.Int("Capacity", 0)
	if e != nil {
		return nil, e
	}
	if capacity == 0 && (typ == "extreme" || strings.HasPrefix(typ, "cpfs")) {
		return nil, errMissing("Capacity")
	}
	if mx, ok := nasMaxGiB[typ+"/"+st]; ok && int64(capacity) > mx {
		return nil, errf(400, "InvalidCapacity.OutOfRange", "Capacity %d GiB exceeds the %s %s maximum of %d GiB.", capacity, typ, st, mx)
	}
	if capacity < 0 {
		return nil, errInvalid("Capacity", "must be positive")
	}
	var vpcID, vswID string
	if v := c.p["VpcId"]; v != "" {
		if vv := c.s.db.network().Vpcs[v]; vv == nil || vv.Region != c.region {
			return nil, errNotFound("InvalidVpcId.NotFound", v)
		}
		vpcID = v
	}
	if v := c.p["VSwitchId"]; v != "" {
		if sw := c.s.db.network().VSwitches[v]; sw == nil || sw.Region != c.region {
			return nil, errNotFound("InvalidVSwitchId.NotFound", v)
		}
		vswID = v
	}
	if dry, _ := c.p.Bool("DryRun", false); dry {
		return nil, errf(400, "DryRunOperation", "Request validation has been passed with DryRun flag set.")
	}
	d := c.s.db
	enc, _ := c.p.Int("EncryptType", 0)
	bw, _ := c.p.Int("Bandwidth", 0)
	// General-purpose NAS ids are 10 bare characters; Extreme NAS ids carry "extreme-" and
	// CPFS ids "cpfs-".
	raw := d.newID("fs")
	id := "1" + raw[len(raw)-9:]
	switch {
	case typ == "extreme":
		id = "extreme-" + raw[len(raw)-17:]
	case strings.HasPrefix(typ, "cpfs"):
		id = "cpfs-" + raw[len(raw)-16:]
	}
	f := &fileSystem{ID: id, Region: c.region, Zone: zone, Type: typ, StorageType: st,
		Protocol: proto, Capacity: int64(capacity), Bandwidth: int64(bw), Desc: c.p["Description"], VpcID: vpcID, VSwitchID: vswID,
		Encrypt: enc, Created: c.now.UnixNano(), Phase: "create", PhaseAt: c.now.UnixNano()}
	d.FSs[f.ID] = f
	return &nas.CreateFileSystemResponse{RequestId: c.reqID, FileSystemId: f.ID}, nil
}

func (c *call) findFS() (*fileSystem, *apiError) {
	id, e := c.p.Required("FileSystemId")
	if e != nil {
		return nil, e
	}
	f := c.s.db.FSs[id]
	if f == nil || f.Region != c.region {
		return nil, errNotFound("InvalidFileSystem.NotFound", id)
	}
	return f, nil
}

func (s *Server) sdkMountTarget(f *fileSystem, m mountTarget, now time.Time) nas.MountTarget {
	return nas.MountTarget{MountTargetDomain: m.Domain, VpcId: m.VpcID, VswId: m.VSwitchID, AccessGroup: m.AccessGroup,
		NetworkType: m.NetworkType, Status: s.asyncStatus(m.Created, now, "Pending", "Active")}
}

func describeFileSystems(c *call) (any, *apiError) {
	q, e := c.listQuery("FileSystemId", 100)
	if e != nil {
		return nil, e
	}
	var list []*fileSystem
	for _, f := range c.s.db.FSs {
		if f.Region != c.region || (c.p["FileSystemType"] != "" && c.p["FileSystemType"] != "all" && f.Type != c.p["FileSystemType"]) ||
			(c.p["VpcId"] != "" && f.VpcID != c.p["VpcId"]) || !q.Match(f.ID, f.Tags) {
			continue
		}
		list = append(list, f)
	}
	page := pageOf(q, list, func(x *fileSystem) string { return x.ID })
	resp := &nas.DescribeFileSystemsResponse{RequestId: c.reqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(list)}
	resp.FileSystems.FileSystem = []nas.FileSystem{}
	for _, f := range page {
		out := nas.FileSystem{FileSystemId: f.ID, RegionId: f.Region, ZoneId: f.Zone, FileSystemType: f.Type,
			StorageType: f.StorageType, ProtocolType: f.Protocol, Capacity: f.Capacity, Bandwidth: f.Bandwidth,
			Description: f.Desc, VpcId: f.VpcID, EncryptType: f.Encrypt, CreateTime: fmtTime(f.Created),
			ChargeType: "PayAsYouGo", Status: c.s.fsStatus(f, c.now)}
		out.MountTargets.MountTarget = []nas.MountTarget{}
		for _, m := range f.Mounts {
			mt := c.s.sdkMountTarget(f, m, c.now)
			out.MountTargets.MountTarget = append(out.MountTargets.MountTarget, nas.MountTarget{
				MountTargetDomain: mt.MountTargetDomain, VpcId: mt.VpcId, VswId: mt.VswId, AccessGroupName: mt.AccessGroup,
				NetworkType: mt.NetworkType, Status: mt.Status})
		}
		if f.VSwitchID != "" {
			out.VswIds.VswId = []string{f.VSwitchID}
		}
		out.Tags.Tag = sdkFSTags(f)
		resp.FileSystems.FileSystem = append(resp.FileSystems.FileSystem, out)
	}
	return resp, nil
}

func deleteFileSystem(c *call) (any, *apiError) {
	f, e := c.findFS()
	if e != nil {
		return nil, e
	}
	if len(f.Mounts) > 0 {
		return nil, errDependency("File system %s still has %d mount target(s); delete them first.", f.ID, len(f.Mounts))
	}
	delete(c.s.db.FSs, f.ID)
	return &nas.DeleteFileSystemResponse{RequestId: c.reqID}, nil
}

func modifyFileSystem(c *call) (any, *apiError) {
	f, e := c.findFS()
	if e != nil {
		return nil, e
	}
	if _, ok := c.p["Description"]; ok {
		f.Desc = c.p["Description"]
	}
	return &nas.ModifyFileSystemResponse{RequestId: c.reqID}, nil
}

func upgradeFileSystem(c *call) (any, *apiError) {
	f, e := c.findFS()
	if e != nil {
		return nil, e
	}
	if _, e := c.p.Required("Capacity"); e != nil {
		return nil, e
	}
	capacity, e := c.p.Int("Capacity", 0)
	if e != nil {
		return nil, e
	}
	if st := c.s.fsStatus(f, c.now); st != "Running" {
		return nil, errf(403, "IncorrectFileSystemStatus", "File system %s is %s; it must be Running to upgrade.", f.ID, st)
	}
	if int64(capacity) <= f.Capacity {
		return nil, errf(400, "InvalidCapacity.OutOfRange", "Capacity %d GiB must be larger than the current %d GiB.", capacity, f.Capacity)
	}
	if mx, ok := nasMaxGiB[f.Type+"/"+f.StorageType]; ok && int64(capacity) > mx {
		return nil, errf(400, "InvalidCapacity.OutOfRange", "Capacity %d GiB exceeds the %s %s maximum of %d GiB.", capacity, f.Type, f.StorageType, mx)
	}
	if dry, _ := c.p.Bool("DryRun", false); dry {
		return nil, errf(400, "DryRunOperation", "Request validation has been passed with DryRun flag set.")
	}
	f.Capacity = int64(capacity)
	f.Phase, f.PhaseAt = "extend", c.now.UnixNano()
	return &nas.UpgradeFileSystemResponse{RequestId: c.reqID}, nil
}

func createMountTarget(c *call) (any, *apiError) {
	f, e := c.findFS()
	if e != nil {
		return nil, e
	}
	// NetworkType is required in the vendor's model ("Vpc" or "Classic"); parameters are
	// checked before the mount target quota, as the vendor validates a request before acting.
	netType, e := c.p.Required("NetworkType")
	if e != nil {
		return nil, e
	}
	if netType != "Vpc" {
		return nil, errInvalid("NetworkType", "only Vpc mount targets are supported")
	}
	vpcID, e := c.p.Required("VpcId")
	if e != nil {
		return nil, e
	}
	vswID, e := c.p.Required("VSwitchId")
	if e != nil {
		return nil, e
	}
	sw := c.s.db.network().VSwitches[vswID]
	if sw == nil || sw.Region != c.region {
		return nil, errNotFound("InvalidVSwitchId.NotFound", vswID)
	}
	if sw.VpcID != vpcID {
		return nil, errf(400, "InvalidParameter.Mismatch", "vSwitch %s is not in VPC %s.", vswID, vpcID)
	}
	if len(f.Mounts) >= maxMountTargets {
		return nil, errf(400, "QuotaExceed.MountTarget", "File system %s already has %d mount targets (at most %d).", f.ID, len(f.Mounts), maxMountTargets)
	}
	ag := c.p["AccessGroupName"]
	if ag == "" {
		ag = "DEFAULT_VPC_GROUP_NAME"
	}
	m := mountTarget{Domain: f.ID + "-" + c.s.db.newID("m")[15:] + "." + c.region + ".nas.aliyuncs.com", VpcID: vpcID,
		VSwitchID: vswID, AccessGroup: ag, NetworkType: netType, Created: c.now.UnixNano()}
	f.Mounts = append(f.Mounts, m)
	return &nas.CreateMountTargetResponse{RequestId: c.reqID, MountTargetDomain: m.Domain}, nil
}

func describeMountTargets(c *call) (any, *apiError) {
	f, e := c.findFS()
	if e != nil {
		return nil, e
	}
	number, size, e := c.page(100)
	if e != nil {
		return nil, e
	}
	var list []nas.MountTarget
	for _, m := range f.Mounts {
		if v := c.p["MountTargetDomain"]; v != "" && m.Domain != v {
			continue
		}
		list = append(list, c.s.sdkMountTarget(f, m, c.now))
	}
	lo, hi := pageBounds(len(list), number, size)
	resp := &nas.DescribeMountTargetsResponse{RequestId: c.reqID, PageNumber: number, PageSize: size, TotalCount: len(list)}
	resp.MountTargets.MountTarget = append([]nas.MountTarget{}, list[lo:hi]...)
	return resp, nil
}

func deleteMountTarget(c *call) (any, *apiError) {
	f, e := c.findFS()
	if e != nil {
		return nil, e
	}
	dom, e := c.p.Required("MountTargetDomain")
	if e != nil {
		return nil, e
	}
	for i, m := range f.Mounts {
		if m.Domain == dom {
			f.Mounts = append(f.Mounts[:i:i], f.Mounts[i+1:]...)
			return &nas.DeleteMountTargetResponse{RequestId: c.reqID}, nil
		}
	}
	return nil, errNotFound("InvalidMountTarget.NotFound", dom)
}
