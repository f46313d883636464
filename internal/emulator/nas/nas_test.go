package nas

import (
	"fmt"
	"strings"
	"testing"
	"time"

	nassdk "github.com/aliyun/alibaba-cloud-sdk-go/services/nas"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

const region = "cn-wulanchabu"

// testEnv is the Server as NAS sees it: one zone, a counter for ids, and asynchronous states that
// settle after a second.
type testEnv struct{ seq int }

func (e *testEnv) NewID(prefix string) string {
	e.seq++
	return fmt.Sprintf("%s-em%018d", prefix, e.seq) // as long as the Server's ids, which NAS cuts
}
func (e *testEnv) NextSeq() uint64 {
	e.seq++
	return uint64(e.seq)
}
func (e *testEnv) ZoneExists(r, z string) bool { return r == region && z == region+"-a" }
func (e *testEnv) AsyncStatus(since int64, now time.Time, pending, done string) string {
	if now.Sub(time.Unix(0, since)) < time.Second {
		return pending
	}
	return done
}

// world is a VPC with one vSwitch, as package vpc keeps them.
type world struct {
	stores       *core.Stores
	env          *testEnv
	now          time.Time
	vpcID, vswID string
}

func newWorld() *world {
	w := &world{stores: core.NewStores(), env: &testEnv{}, now: time.Unix(1_700_000_000, 0), vpcID: "vpc-1", vswID: "vsw-1"}
	net := emuvpc.StoreIn(w.stores)
	net.Vpcs[w.vpcID] = &emuvpc.VPC{ID: w.vpcID, Region: region, CIDR: "10.0.0.0/16"}
	net.VSwitches[w.vswID] = &emuvpc.VSwitch{ID: w.vswID, Region: region, VpcID: w.vpcID, Zone: region + "-a", CIDR: "10.0.1.0/24"}
	return w
}

func (w *world) call(fn core.Handler, p core.Params) (any, *core.Error) {
	return fn(&core.Call{P: p, Version: Version, Region: region, Now: w.now, ReqID: "req", Stores: w.stores, Env: w.env})
}

// A mount target holds its vSwitch and VPC against deletion, and its file system too, until it
// is deleted; the file system is Pending, then Running.
func TestMountTargetHoldsItsNetwork(t *testing.T) {
	w := newWorld()
	out, e := w.call(createFileSystem, core.Params{"ProtocolType": "NFS", "StorageType": "Capacity", "VpcId": w.vpcID})
	if e != nil {
		t.Fatal(e)
	}
	fs := out.(*nassdk.CreateFileSystemResponse).FileSystemId
	if got := StoreIn(w.stores).FileSystems[fs].Status(w.env, w.now); got != "Pending" {
		t.Fatalf("new file system is %s, want Pending", got)
	}
	if e := emuvpc.VpcDependency(w.stores, w.vpcID); e == nil || e.Code != "DependencyViolation" {
		t.Fatalf("DeleteVpc of the file system's VPC: %v", e)
	}
	out, e = w.call(createMountTarget, core.Params{"FileSystemId": fs, "NetworkType": "Vpc", "VpcId": w.vpcID, "VSwitchId": w.vswID})
	if e != nil {
		t.Fatal(e)
	}
	domain := out.(*nassdk.CreateMountTargetResponse).MountTargetDomain
	if !strings.HasPrefix(domain, fs+"-") || !strings.HasSuffix(domain, "."+region+".nas.aliyuncs.com") {
		t.Fatalf("mount target domain %q is not <file system>-<id>.<region>.nas.aliyuncs.com", domain)
	}
	if e := emuvpc.VSwitchDependency(w.stores, w.vswID); e == nil || e.Code != "DependencyViolation" {
		t.Fatalf("DeleteVSwitch of the mount target's vSwitch: %v", e)
	}
	if _, e := w.call(deleteFileSystem, core.Params{"FileSystemId": fs}); e == nil || e.Code != "DependencyViolation" {
		t.Fatalf("DeleteFileSystem with a mount target: %v", e)
	}
	if _, e := w.call(deleteMountTarget, core.Params{"FileSystemId": fs, "MountTargetDomain": domain}); e != nil {
		t.Fatal(e)
	}
	if e := emuvpc.VSwitchDependency(w.stores, w.vswID); e != nil {
		t.Fatalf("the vSwitch is still held after its mount target went: %v", e)
	}
	if _, e := w.call(deleteFileSystem, core.Params{"FileSystemId": fs}); e != nil {
		t.Fatal(e)
	}
	if e := emuvpc.VpcDependency(w.stores, w.vpcID); e != nil {
		t.Fatalf("the VPC is still held after its file system went: %v", e)
	}
}

func TestMountTargetNeedsAVSwitchOfItsVPC(t *testing.T) {
	w := newWorld()
	out, e := w.call(createFileSystem, core.Params{"ProtocolType": "NFS", "StorageType": "Capacity"})
	if e != nil {
		t.Fatal(e)
	}
	fs := out.(*nassdk.CreateFileSystemResponse).FileSystemId
	for code, p := range map[string]core.Params{
		"InvalidVSwitchId.NotFound": {"VSwitchId": "vsw-none", "VpcId": w.vpcID},
		"InvalidParameter.Mismatch": {"VSwitchId": w.vswID, "VpcId": "vpc-other"},
	} {
		p["FileSystemId"], p["NetworkType"] = fs, "Vpc"
		if _, e := w.call(createMountTarget, p); e == nil || e.Code != code {
			t.Errorf("%v: answered %v, want %s", p, e, code)
		}
	}
}
