package nas

import (
	"strings"
	"testing"

	nassdk "github.com/aliyun/alibaba-cloud-sdk-go/services/nas"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/producttest"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

const region = producttest.Region

func newWorld() *producttest.World { return producttest.NewWorld() }

func call(w *producttest.World, fn core.Handler, p core.Params) (any, *core.Error) {
	return w.Call(fn, Version, p)
}

// A mount target holds its vSwitch and VPC against deletion, and its file system too, until it
// is deleted; the file system is Pending, then Running.
func TestMountTargetHoldsItsNetwork(t *testing.T) {
	w := newWorld()
	out, e := call(w, createFileSystem, core.Params{"ProtocolType": "NFS", "StorageType": "Capacity", "VpcId": w.VpcID})
	if e != nil {
		t.Fatal(e)
	}
	fs := out.(*nassdk.CreateFileSystemResponse).FileSystemId
	if got := StoreIn(w.Stores).FileSystems[fs].Status(w.Env, w.Now); got != "Pending" {
		t.Fatalf("new file system is %s, want Pending", got)
	}
	// The world's VPC also has a vSwitch, which DeleteVpc names before a file system
	// (vpc.RankVSwitches): ask NAS's own check.
	if e := vpcDependency(&core.Call{Stores: w.Stores}, w.VpcID); e == nil || e.Code != "DependencyViolation" {
		t.Fatalf("DeleteVpc of the file system's VPC: %v", e)
	}
	out, e = call(w, createMountTarget, core.Params{"FileSystemId": fs, "NetworkType": "Vpc", "VpcId": w.VpcID, "VSwitchId": w.VswID})
	if e != nil {
		t.Fatal(e)
	}
	domain := out.(*nassdk.CreateMountTargetResponse).MountTargetDomain
	if !strings.HasPrefix(domain, fs+"-") || !strings.HasSuffix(domain, "."+region+".nas.aliyuncs.com") {
		t.Fatalf("mount target domain %q is not <file system>-<id>.<region>.nas.aliyuncs.com", domain)
	}
	if e := emuvpc.VSwitchDependency(&core.Call{Stores: w.Stores}, w.VswID); e == nil || e.Code != "DependencyViolation" {
		t.Fatalf("DeleteVSwitch of the mount target's vSwitch: %v", e)
	}
	if _, e := call(w, deleteFileSystem, core.Params{"FileSystemId": fs}); e == nil || e.Code != "DependencyViolation" {
		t.Fatalf("DeleteFileSystem with a mount target: %v", e)
	}
	if _, e := call(w, deleteMountTarget, core.Params{"FileSystemId": fs, "MountTargetDomain": domain}); e != nil {
		t.Fatal(e)
	}
	if e := emuvpc.VSwitchDependency(&core.Call{Stores: w.Stores}, w.VswID); e != nil {
		t.Fatalf("the vSwitch is still held after its mount target went: %v", e)
	}
	if _, e := call(w, deleteFileSystem, core.Params{"FileSystemId": fs}); e != nil {
		t.Fatal(e)
	}
	if e := vpcDependency(&core.Call{Stores: w.Stores}, w.VpcID); e != nil {
		t.Fatalf("the VPC is still held after its file system went: %v", e)
	}
}

func TestMountTargetNeedsAVSwitchOfItsVPC(t *testing.T) {
	w := newWorld()
	out, e := call(w, createFileSystem, core.Params{"ProtocolType": "NFS", "StorageType": "Capacity"})
	if e != nil {
		t.Fatal(e)
	}
	fs := out.(*nassdk.CreateFileSystemResponse).FileSystemId
	for code, p := range map[string]core.Params{
		"InvalidVSwitchId.NotFound": {"VSwitchId": "vsw-none", "VpcId": w.VpcID},
		"InvalidParameter.Mismatch": {"VSwitchId": w.VswID, "VpcId": "vpc-other"},
	} {
		p["FileSystemId"], p["NetworkType"] = fs, "Vpc"
		if _, e := call(w, createMountTarget, p); e == nil || e.Code != code {
			t.Errorf("%v: answered %v, want %s", p, e, code)
		}
	}
}
