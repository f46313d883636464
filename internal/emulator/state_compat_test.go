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
// (cmd/gpucluster-emulator --state-file) is upgraded in place, so a file written by an older build
// must load into a newer one with every record intact. testdata/state/pre-split.json was
// written by the emulator as it was before it was split into one package per product (by
// TestWritePreSplitStateFixture of commit 574f6d4, removed since so that no later build can
// rewrite it); the test below holds every later layout to it.
const (
	preSplitState     = "testdata/state/pre-split.json"
	preSplitResources = "testdata/state/pre-split.resources.json"
)

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
