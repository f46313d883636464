package vpc

import (
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// Addresses are handed out past the vendor-reserved first ones, never twice.
func TestNextAddressSkipsTheReservedAndNeverRepeats(t *testing.T) {
	sw := &VSwitch{CIDR: "10.0.1.0/24"}
	if a, b := sw.NextAddress(), sw.NextAddress(); a != "10.0.1.3" || b != "10.0.1.4" {
		t.Fatalf("first addresses %s, %s; want 10.0.1.3, 10.0.1.4", a, b)
	}
}

// A VPC or vSwitch of another region does not exist for a call made in this one.
func TestLookupsAreRegional(t *testing.T) {
	s := &Store{}
	s.Init()
	s.Vpcs["vpc-1"] = &VPC{ID: "vpc-1", Region: "cn-beijing"}
	s.VSwitches["vsw-1"] = &VSwitch{ID: "vsw-1", Region: "cn-beijing"}
	if s.VpcIn("cn-beijing", "vpc-1") == nil || s.VSwitchIn("cn-beijing", "vsw-1") == nil {
		t.Fatal("not found in their own region")
	}
	if s.VpcIn("cn-shanghai", "vpc-1") != nil || s.VSwitchIn("cn-shanghai", "vsw-1") != nil {
		t.Fatal("found from another region")
	}
}

// The first dependent that holds a network answers for it; one that holds nothing lets the next
// speak.
func TestDependentsAnswerInTurn(t *testing.T) {
	saved := dependents
	t.Cleanup(func() { dependents = saved })
	dependents = nil
	RegisterDependent(Dependent{Rank: 2, Vpc: func(*core.Call, string) *core.Error { return nil }})
	RegisterDependent(Dependent{Rank: 3, VSwitch: func(_ *core.Call, id string) *core.Error {
		return core.ErrDependency("vSwitch %s is held", id)
	}})
	if e := VpcDependency(nil, "vpc-1"); e != nil {
		t.Fatalf("DeleteVpc refused with nothing holding the VPC: %v", e)
	}
	if e := VSwitchDependency(nil, "vsw-1"); e == nil || e.Code != "DependencyViolation" {
		t.Fatalf("DeleteVSwitch allowed while it is held: %v", e)
	}
	// A check registered later with a lower rank speaks first: the vendor's order, not init order.
	RegisterDependent(Dependent{Rank: 1, VSwitch: func(_ *core.Call, id string) *core.Error {
		return core.Errf(400, "DependencyViolation.First", "vSwitch %s is held first", id)
	}})
	if e := VSwitchDependency(nil, "vsw-1"); e == nil || e.Code != "DependencyViolation.First" {
		t.Fatalf("checks did not run in rank order: %v", e)
	}
}
