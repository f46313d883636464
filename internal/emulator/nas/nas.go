package nas

import (
	"cmp"
	"slices"
	"strings"
	"time"

	nassdk "github.com/aliyun/alibaba-cloud-sdk-go/services/nas"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

// Version is the NAS API version the emulator serves.
const Version = "2017-06-26"

// NAS actions name no RegionId in the vendor's model (the endpoint names the region), so
// every one is RegionOptional.
func init() {
	core.Register(Version, "CreateFileSystem", core.Route{Fn: createFileSystem, Write: true, Idem: true, RegionOptional: true})
	core.Register(Version, "DescribeFileSystems", core.Route{Fn: describeFileSystems, RegionOptional: true})
	core.Register(Version, "DeleteFileSystem", core.Route{Fn: deleteFileSystem, Write: true, RegionOptional: true})
	core.Register(Version, "ModifyFileSystem", core.Route{Fn: modifyFileSystem, Write: true, RegionOptional: true})
	core.Register(Version, "UpgradeFileSystem", core.Route{Fn: upgradeFileSystem, Write: true, Idem: true, RegionOptional: true})
	core.Register(Version, "CreateMountTarget", core.Route{Fn: createMountTarget, Write: true, Idem: true, RegionOptional: true})
	core.Register(Version, "DescribeMountTargets", core.Route{Fn: describeMountTargets, RegionOptional: true})
	core.Register(Version, "DeleteMountTarget", core.Route{Fn: deleteMountTarget, Write: true, RegionOptional: true})
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

func createFileSystem(c *core.Call) (any, *core.Error) {
	typ := cmp.Or(c.P["FileSystemType"], "standard")
	allowed, ok := nasStorageTypes[typ]
	if !ok {
		return nil, core.Errf(400, "InvalidFileSystemType.NotSupported", "FileSystemType %q must be standard, extreme, cpfs or cpfsse.", typ)
	}
	st, e := c.P.Required("StorageType")
	if e != nil {
		return nil, e
	}
	if allowed != nil && !slices.Contains(allowed, st) {
		return nil, core.Errf(400, "InvalidStorageType.NotSupported", "StorageType %q is not valid for FileSystemType %s: use one of %s.", st, typ, strings.Join(allowed, ", "))
	}
	proto, e := c.P.Required("ProtocolType")
	if e != nil {
		return nil, e
	}
	if !slices.Contains([]string{"NFS", "SMB", "cpfs"}, proto) {
		return nil, core.Errf(400, "InvalidProtocolType.NotSupported", "ProtocolType %q must be NFS, SMB or cpfs.", proto)
	}
	zone := c.P["ZoneId"]
	if zone == "" && typ != "standard" {
		return nil, core.ErrMissing("ZoneId")
	}
	if zone != "" && !c.Env.ZoneExists(c.Region, zone) {
		return nil, core.ErrNotFound("InvalidZoneId.NotFound", zone)
	}
	capacity, e := c.P.Int("Capacity", 0)
	if e != nil {
		return nil, e
	}
	if capacity == 0 && (typ == "extreme" || strings.HasPrefix(typ, "cpfs")) {
		return nil, core.ErrMissing("Capacity")
	}
	if mx, ok := nasMaxGiB[typ+"/"+st]; ok && int64(capacity) > mx {
		return nil, core.Errf(400, "InvalidCapacity.OutOfRange", "Capacity %d GiB exceeds the %s %s maximum of %d GiB.", capacity, typ, st, mx)
	}
	if capacity < 0 {
		return nil, core.ErrInvalid("Capacity", "must be positive")
	}
	var vpcID, vswID string
	if v := c.P["VpcId"]; v != "" {
		if emuvpc.StoreIn(c.Stores).VpcIn(c.Region, v) == nil {
			return nil, core.ErrNotFound("InvalidVpcId.NotFound", v)
		}
		vpcID = v
	}
	if v := c.P["VSwitchId"]; v != "" {
		if emuvpc.StoreIn(c.Stores).VSwitchIn(c.Region, v) == nil {
			return nil, core.ErrNotFound("InvalidVSwitchId.NotFound", v)
		}
		vswID = v
	}
	if dry, _ := c.P.Bool("DryRun", false); dry {
		return nil, core.Errf(400, "DryRunOperation", "Request validation has been passed with DryRun flag set.")
	}
	d := StoreIn(c.Stores)
	enc, _ := c.P.Int("EncryptType", 0)
	bw, _ := c.P.Int("Bandwidth", 0)
	// General-purpose NAS ids are 10 bare characters; Extreme NAS ids carry "extreme-" and
	// CPFS ids "cpfs-".
	raw := c.Env.NewID("fs")
	id := "1" + raw[len(raw)-9:]
	switch {
	case typ == "extreme":
		id = "extreme-" + raw[len(raw)-17:]
	case strings.HasPrefix(typ, "cpfs"):
		id = "cpfs-" + raw[len(raw)-16:]
	}
	f := &FileSystem{ID: id, Region: c.Region, Zone: zone, Type: typ, StorageType: st,
		Protocol: proto, Capacity: int64(capacity), Bandwidth: int64(bw), Desc: c.P["Description"], VpcID: vpcID, VSwitchID: vswID,
		Encrypt: enc, Created: c.Now.UnixNano(), Phase: "create", PhaseAt: c.Now.UnixNano()}
	d.FileSystems[f.ID] = f
	return &nassdk.CreateFileSystemResponse{RequestId: c.ReqID, FileSystemId: f.ID}, nil
}

func findFS(c *core.Call) (*FileSystem, *core.Error) {
	id, e := c.P.Required("FileSystemId")
	if e != nil {
		return nil, e
	}
	f := StoreIn(c.Stores).FileSystems[id]
	if f == nil || f.Region != c.Region {
		return nil, core.ErrNotFound("InvalidFileSystem.NotFound", id)
	}
	return f, nil
}

func sdkMountTarget(env core.Env, f *FileSystem, m MountTarget, now time.Time) nassdk.MountTarget {
	return nassdk.MountTarget{MountTargetDomain: m.Domain, VpcId: m.VpcID, VswId: m.VSwitchID, AccessGroup: m.AccessGroup,
		NetworkType: m.NetworkType, Status: env.AsyncStatus(m.Created, now, "Pending", "Active")}
}

func describeFileSystems(c *core.Call) (any, *core.Error) {
	q, e := core.ReadListQuery(c.P, "FileSystemId", 100)
	if e != nil {
		return nil, e
	}
	var list []*FileSystem
	for _, f := range StoreIn(c.Stores).FileSystems {
		if f.Region != c.Region || (c.P["FileSystemType"] != "" && c.P["FileSystemType"] != "all" && f.Type != c.P["FileSystemType"]) ||
			(c.P["VpcId"] != "" && f.VpcID != c.P["VpcId"]) || !q.Match(f.ID, f.Tags) {
			continue
		}
		list = append(list, f)
	}
	page := core.PageOf(q, list, func(x *FileSystem) string { return x.ID })
	resp := &nassdk.DescribeFileSystemsResponse{RequestId: c.ReqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(list)}
	resp.FileSystems.FileSystem = []nassdk.FileSystem{}
	for _, f := range page {
		out := nassdk.FileSystem{FileSystemId: f.ID, RegionId: f.Region, ZoneId: f.Zone, FileSystemType: f.Type,
			StorageType: f.StorageType, ProtocolType: f.Protocol, Capacity: f.Capacity, Bandwidth: f.Bandwidth,
			Description: f.Desc, VpcId: f.VpcID, EncryptType: f.Encrypt, CreateTime: core.FormatTime(f.Created),
			ChargeType: "PayAsYouGo", Status: f.Status(c.Env, c.Now)}
		out.MountTargets.MountTarget = []nassdk.MountTarget{}
		for _, m := range f.Mounts {
			mt := sdkMountTarget(c.Env, f, m, c.Now)
			out.MountTargets.MountTarget = append(out.MountTargets.MountTarget, nassdk.MountTarget{
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

func deleteFileSystem(c *core.Call) (any, *core.Error) {
	f, e := findFS(c)
	if e != nil {
		return nil, e
	}
	if len(f.Mounts) > 0 {
		return nil, core.ErrDependency("File system %s still has %d mount target(s); delete them first.", f.ID, len(f.Mounts))
	}
	delete(StoreIn(c.Stores).FileSystems, f.ID)
	return &nassdk.DeleteFileSystemResponse{RequestId: c.ReqID}, nil
}

func modifyFileSystem(c *core.Call) (any, *core.Error) {
	f, e := findFS(c)
	if e != nil {
		return nil, e
	}
	if _, ok := c.P["Description"]; ok {
		f.Desc = c.P["Description"]
	}
	return &nassdk.ModifyFileSystemResponse{RequestId: c.ReqID}, nil
}

func upgradeFileSystem(c *core.Call) (any, *core.Error) {
	f, e := findFS(c)
	if e != nil {
		return nil, e
	}
	if _, e := c.P.Required("Capacity"); e != nil {
		return nil, e
	}
	capacity, e := c.P.Int("Capacity", 0)
	if e != nil {
		return nil, e
	}
	if st := f.Status(c.Env, c.Now); st != "Running" {
		return nil, core.Errf(403, "IncorrectFileSystemStatus", "File system %s is %s; it must be Running to upgrade.", f.ID, st)
	}
	if int64(capacity) <= f.Capacity {
		return nil, core.Errf(400, "InvalidCapacity.OutOfRange", "Capacity %d GiB must be larger than the current %d GiB.", capacity, f.Capacity)
	}
	if mx, ok := nasMaxGiB[f.Type+"/"+f.StorageType]; ok && int64(capacity) > mx {
		return nil, core.Errf(400, "InvalidCapacity.OutOfRange", "Capacity %d GiB exceeds the %s %s maximum of %d GiB.", capacity, f.Type, f.StorageType, mx)
	}
	if dry, _ := c.P.Bool("DryRun", false); dry {
		return nil, core.Errf(400, "DryRunOperation", "Request validation has been passed with DryRun flag set.")
	}
	f.Capacity = int64(capacity)
	f.Phase, f.PhaseAt = "extend", c.Now.UnixNano()
	return &nassdk.UpgradeFileSystemResponse{RequestId: c.ReqID}, nil
}

func createMountTarget(c *core.Call) (any, *core.Error) {
	f, e := findFS(c)
	if e != nil {
		return nil, e
	}
	// NetworkType is required in the vendor's model ("Vpc" or "Classic"); parameters are
	// checked before the mount target quota, as the vendor validates a request before acting.
	netType, e := c.P.Required("NetworkType")
	if e != nil {
		return nil, e
	}
	if netType != "Vpc" {
		return nil, core.ErrInvalid("NetworkType", "only Vpc mount targets are supported")
	}
	vpcID, e := c.P.Required("VpcId")
	if e != nil {
		return nil, e
	}
	vswID, e := c.P.Required("VSwitchId")
	if e != nil {
		return nil, e
	}
	sw := emuvpc.StoreIn(c.Stores).VSwitchIn(c.Region, vswID)
	if sw == nil {
		return nil, core.ErrNotFound("InvalidVSwitchId.NotFound", vswID)
	}
	if sw.VpcID != vpcID {
		return nil, core.Errf(400, "InvalidParameter.Mismatch", "vSwitch %s is not in VPC %s.", vswID, vpcID)
	}
	if len(f.Mounts) >= maxMountTargets {
		return nil, core.Errf(400, "QuotaExceed.MountTarget", "File system %s already has %d mount targets (at most %d).", f.ID, len(f.Mounts), maxMountTargets)
	}
	ag := c.P["AccessGroupName"]
	if ag == "" {
		ag = "DEFAULT_VPC_GROUP_NAME"
	}
	m := MountTarget{Domain: f.ID + "-" + c.Env.NewID("m")[15:] + "." + c.Region + ".nas.aliyuncs.com", VpcID: vpcID,
		VSwitchID: vswID, AccessGroup: ag, NetworkType: netType, Created: c.Now.UnixNano()}
	f.Mounts = append(f.Mounts, m)
	return &nassdk.CreateMountTargetResponse{RequestId: c.ReqID, MountTargetDomain: m.Domain}, nil
}

func describeMountTargets(c *core.Call) (any, *core.Error) {
	f, e := findFS(c)
	if e != nil {
		return nil, e
	}
	number, size, e := core.Page(c.P, 100)
	if e != nil {
		return nil, e
	}
	var list []nassdk.MountTarget
	for _, m := range f.Mounts {
		if v := c.P["MountTargetDomain"]; v != "" && m.Domain != v {
			continue
		}
		list = append(list, sdkMountTarget(c.Env, f, m, c.Now))
	}
	lo, hi := core.PageBounds(len(list), number, size)
	resp := &nassdk.DescribeMountTargetsResponse{RequestId: c.ReqID, PageNumber: number, PageSize: size, TotalCount: len(list)}
	resp.MountTargets.MountTarget = append([]nassdk.MountTarget{}, list[lo:hi]...)
	return resp, nil
}

func deleteMountTarget(c *core.Call) (any, *core.Error) {
	f, e := findFS(c)
	if e != nil {
		return nil, e
	}
	dom, e := c.P.Required("MountTargetDomain")
	if e != nil {
		return nil, e
	}
	for i, m := range f.Mounts {
		if m.Domain == dom {
			f.Mounts = append(f.Mounts[:i:i], f.Mounts[i+1:]...)
			return &nassdk.DeleteMountTargetResponse{RequestId: c.ReqID}, nil
		}
	}
	return nil, core.ErrNotFound("InvalidMountTarget.NotFound", dom)
}
