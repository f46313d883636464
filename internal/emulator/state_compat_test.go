package emulator

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// The state file is the emulator's one durable interface: a long-running emulator
// (cmd/gpucluster-emulator -state) is upgraded in place, so a file written by an older build
// must load into a newer one with every record intact. testdata/state/pre-split.json was
// written by the emulator as it was before it was split into one package per product; the
// test below holds every later layout to it.
const (
	preSplitState     = "testdata/state/pre-split.json"
	preSplitResources = "testdata/state/pre-split.resources.json"
)

// TestWritePreSplitStateFixture rewrites the fixture from the current code. It only runs when
// asked (EMULATOR_WRITE_STATE_FIXTURE=1): the fixture's point is to stay what an older build
// wrote.
func TestWritePreSplitStateFixture(t *testing.T) {
	if os.Getenv("EMULATOR_WRITE_STATE_FIXTURE") != "1" {
		t.Skip("set EMULATOR_WRITE_STATE_FIXTURE=1 to rewrite " + preSplitState)
	}
	path := filepath.Join(t.TempDir(), "state.json")
	e := newEnv(t, Config{StateFile: path, BootTime: time.Millisecond})
	// Network, instances with tags, security group (ECS, VPC).
	f := e.essGroup(2, 4, []string{"ecs.g7.xlarge"}, nil) // ESS: a group, its configuration and 2 instances
	inst := e.runOne(f.fixture, params{"Tag.1.Key": "role", "Tag.1.Value": "fixture"})
	// NAS: a file system with a mount target in the vSwitch.
	call := func(version, action string, p params, out any) {
		t.Helper()
		p["RegionId"] = testRegion
		decodeInto(t, e.rpc(version, action, p), out)
	}
	var fs struct{ FileSystemId string }
	call(versionNAS, "CreateFileSystem", params{"ProtocolType": "NFS", "StorageType": "Capacity"}, &fs)
	var mt struct{ MountTargetDomain string }
	call(versionNAS, "CreateMountTarget", params{"FileSystemId": fs.FileSystemId, "NetworkType": "Vpc",
		"VpcId": f.vpcID, "VSwitchId": f.vswID}, &mt)
	// NAT gateway with an EIP and an SNAT entry; a second EIP on the instance (VPC).
	var nat struct {
		NatGatewayId string
		SnatTableIds struct{ SnatTableId []string }
	}
	call(versionVPC, "CreateNatGateway", params{"VpcId": f.vpcID, "VSwitchId": f.vswID, "NatType": "Enhanced", "Name": "egress"}, &nat)
	natEip, err := e.allocateEip("100", "PayByTraffic")
	must(t, err)
	must(t, e.associateEip(natEip.AllocationId, nat.NatGatewayId, "Nat"))
	_, err = e.createSnat(nat.SnatTableIds.SnatTableId[0], f.vswID, "", natEip.EipAddress)
	must(t, err)
	instEip, err := e.allocateEip("10", "PayByTraffic")
	must(t, err)
	must(t, e.associateEip(instEip.AllocationId, inst, "EcsInstance"))
	// SLB: a load balancer with a listener and the instance as backend.
	c := e.slbClient()
	lb := e.createLB(c, f.vswID, "")
	must(t, e.createListener(c, lb.LoadBalancerId, nil))
	_, err = e.addBackends(c, lb.LoadBalancerId, backendsJSON(inst))
	must(t, err)
	// STS: one credential (it expires in the fixture's future; AssumeRole purges expired ones).
	var cred struct{}
	call(versionSTS, "AssumeRole", params{"RoleArn": "acs:ram::123456789012:role/fixture", "RoleSessionName": "fixture",
		"DurationSeconds": "43200"}, &cred)

	time.Sleep(50 * time.Millisecond) // every asynchronous status settles
	res := e.s.Resources()
	e.srv.Close()
	must(t, e.s.Close())
	data, err := os.ReadFile(path)
	must(t, err)
	must(t, os.MkdirAll(filepath.Dir(preSplitState), 0o755))
	must(t, os.WriteFile(preSplitState, indentJSON(t, data), 0o644))
	resJSON, err := json.MarshalIndent(res, "", "  ")
	must(t, err)
	must(t, os.WriteFile(preSplitResources, append(resJSON, '\n'), 0o644))
}

func indentJSON(t *testing.T, data []byte) []byte {
	t.Helper()
	var v any
	must(t, json.Unmarshal(data, &v))
	out, err := json.MarshalIndent(v, "", "  ")
	must(t, err)
	return append(out, '\n')
}

// TestPreSplitStateFileLoads loads the state file the emulator wrote before the split: every
// resource /_emulator/resources listed then is listed now, and saving the loaded state writes
// the same JSON back, so no key was renamed or dropped.
func TestPreSplitStateFileLoads(t *testing.T) {
	want, err := os.ReadFile(preSplitState)
	must(t, err)
	path := filepath.Join(t.TempDir(), "state.json")
	must(t, os.WriteFile(path, want, 0o644))
	s, err := New(Config{StateFile: path, BootTime: time.Millisecond})
	must(t, err)
	got := s.Resources()
	wantRes, err := os.ReadFile(preSplitResources)
	must(t, err)
	gotRes, err := json.MarshalIndent(got, "", "  ")
	must(t, err)
	var a, b any
	must(t, json.Unmarshal(wantRes, &a))
	must(t, json.Unmarshal(gotRes, &b))
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("resources after loading %s:\n%s\nwant:\n%s", preSplitState, gotRes, wantRes)
	}
	for kind, n := range map[string]int{"instances": len(got.Instances), "vpcs": len(got.Vpcs), "vswitches": len(got.VSwitches),
		"security_groups": len(got.SecurityGroups), "file_systems": len(got.FileSystems), "nat_gateways": len(got.NatGateways),
		"snat_entries": len(got.SnatEntries), "eips": len(got.EIPs), "load_balancers": len(got.LoadBalancers),
		"scaling_groups": len(got.ScalingGroups)} {
		if n == 0 {
			t.Errorf("the fixture holds no %s: it no longer covers every product", kind)
		}
	}
	must(t, s.Close()) // writes the state back
	saved, err := os.ReadFile(path)
	must(t, err)
	var before, after any
	must(t, json.Unmarshal(want, &before))
	must(t, json.Unmarshal(saved, &after))
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("saving the loaded state changed it:\n%s\nwant:\n%s", indentJSON(t, saved), want)
	}
}
