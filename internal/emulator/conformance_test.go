package emulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/conformance"
)

// The conformance suite holds every action the emulator serves to the vendor's own API models
// (conformance.Actions, generated from the alibabacloud-go SDK sources):
//   - a request with only the vendor-required parameters is not refused for a missing one;
//   - a request missing one of them is refused with MissingParameter naming it;
//   - every documented integer range is accepted at its bounds and refused one past them
//     (MaxResults, which the vendor clamps, is answered instead);
//   - the answer decodes into the SDK's response model with no field the model lacks, and
//     carries no null (an empty list is [], see nulls_test.go).

// conditionallyRequired are parameters the vendor's models document as required unless another
// parameter stands in for them, so a request with only the always-required parameters cannot
// succeed at the vendor either. Each entry quotes the model's condition.
var conditionallyRequired = map[string][]string{
	// "If you do not use LaunchTemplateId or LaunchTemplateName to specify a launch template ...
	// you must specify ImageId / set the InstanceType parameter / specify a security group ID";
	// VSwitchId: "You must set this parameter when you create an instance of the VPC type".
	"2014-05-26/RunInstances": {"ImageId", "InstanceType", "VSwitchId", "SecurityGroupId"},
	// CreateImage InstanceId: "To create a custom image from an ECS instance, you must specify
	// this parameter" (the emulator has no snapshots, the other sources). CopyImage copies "to
	// other regions": DestinationRegionId is "The ID of the destination region to which the
	// source custom image is copied".
	"2014-05-26/CreateImage": {"InstanceId"},
	// RunCommand InstanceId: "Specify at least one instance ID" unless ResourceTag picks the
	// instances (the emulator serves the instance ids).
	"2014-05-26/RunCommand": {"InstanceId.1"},
	"2014-05-26/CopyImage":  {"DestinationRegionId"},
	// "To use a launch template ..., you must use the LaunchTemplateId or LaunchTemplateName parameter".
	"2014-05-26/DeleteLaunchTemplate": {"LaunchTemplateId"},
	// A rule needs its protocol and peer: "IpProtocol ... This parameter is required" sits on the
	// Permissions.N struct, which the generator does not descend into.
	"2014-05-26/AuthorizeSecurityGroup":       {"Permissions.1.IpProtocol", "Permissions.1.PortRange", "Permissions.1.SourceCidrIp"},
	"2014-05-26/AuthorizeSecurityGroupEgress": {"Permissions.1.IpProtocol", "Permissions.1.PortRange", "Permissions.1.DestCidrIp"},
	"2014-05-26/RevokeSecurityGroup":          {"Permissions.1.IpProtocol", "Permissions.1.PortRange", "Permissions.1.SourceCidrIp"},
	"2014-05-26/RevokeSecurityGroupEgress":    {"Permissions.1.IpProtocol", "Permissions.1.PortRange", "Permissions.1.DestCidrIp"},
	// DescribePrice prices an instance type: "InstanceType ... This parameter is required when
	// ResourceType is set to instance" (the default).
	"2014-05-26/DescribePrice": {"InstanceType"},
	// An entry of an Internet NAT gateway translates a source to EIPs: SnatIp is "The EIPs in the
	// SNAT entry when you add an SNAT entry to an Internet NAT gateway", and the source is
	// SourceVSwitchId or SourceCIDR ("You cannot specify this parameter and SourceVSwtichId at the
	// same time").
	"2016-04-28/CreateSnatEntry": {"SnatIp", "SourceVSwitchId"},
	// "If NetworkType is set to VPC, VpcId is required." and "..., VSwitchId is required."
	"2017-06-26/CreateMountTarget": {"VpcId", "VSwitchId"},
	// BackendServerPort: "If the VServerGroupId parameter is not set, this parameter is required."
	"2014-05-15/CreateLoadBalancerTCPListener": {"BackendServerPort"},
	// BackendServers is "The list of backend servers that you want to add", whose entries'
	// "ServerId: Required": the action adds those servers and nothing else.
	"2014-05-15/AddBackendServers": {"BackendServers"},
	// "You must specify at least one parameter from InstanceIds and RamRoleName."
	"2014-05-26/DescribeInstanceRamRole": {"InstanceIds"},
}

// clampedParams are documented ranges the vendor clamps instead of refusing ("If you set this
// parameter to a value that is greater than 100, the default value is 100").
var clampedParams = map[string]bool{"MaxResults": true}

// limitCompanions are parameters a range check sets to the same value as the one checked
// (MinAmount may not exceed Amount).
var limitCompanions = map[string]string{"MinAmount": "Amount"}

// conformanceFixture is one of each resource the actions take ids of.
type conformanceFixture struct {
	fixture
	instance, stopped, ds, hpc, lt string
	image                          string // an Available custom image of the running instance
	freeSG, freeVpc, freeVsw       string // nothing depends on these: for the Delete actions
	freeImage                      string
	names                          *int // makes each created name unique
	egress                         egressFixture
	svc                            serviceFixture
}

// serviceFixture is a NAS file system with a mount target on the fixture's vSwitch and a second
// one nothing depends on (DeleteFileSystem), and an SLB load balancer with a TCP listener and
// the running instance as its backend, beside a second one nothing depends on
// (DeleteLoadBalancer).
type serviceFixture struct {
	fs, freeFS, mountDomain string
	lb, freeLB              string
}

// slbListenerPort is the fixture listener's port; CreateLoadBalancerTCPListener adds another.
const slbListenerPort, slbNewListenerPort = "6443", "8443"

func newServiceFixture(e *env, f conformanceFixture) serviceFixture {
	e.t.Helper()
	t := e.t.(*testing.T)
	call := func(version, action string, p params, out any) {
		t.Helper()
		p["RegionId"] = testRegion
		decodeInto(t, e.rpc(version, action, p), out)
	}
	var fs, freeFS struct{ FileSystemId string }
	call(versionNAS, "CreateFileSystem", params{"ProtocolType": "NFS", "StorageType": "Capacity"}, &fs)
	call(versionNAS, "CreateFileSystem", params{"ProtocolType": "NFS", "StorageType": "Capacity"}, &freeFS)
	var mt struct{ MountTargetDomain string }
	call(versionNAS, "CreateMountTarget", params{"FileSystemId": fs.FileSystemId, "NetworkType": "Vpc",
		"VpcId": f.vpcID, "VSwitchId": f.vswID}, &mt)
	var lb, freeLB struct{ LoadBalancerId string }
	lbParams := func() params {
		return params{"AddressType": "intranet", "VSwitchId": f.vswID, "LoadBalancerSpec": "slb.s2.small"}
	}
	call(versionSLB, "CreateLoadBalancer", lbParams(), &lb)
	call(versionSLB, "CreateLoadBalancer", lbParams(), &freeLB)
	var none struct{}
	call(versionSLB, "CreateLoadBalancerTCPListener", params{"LoadBalancerId": lb.LoadBalancerId,
		"ListenerPort": slbListenerPort, "BackendServerPort": slbListenerPort, "Bandwidth": "-1"}, &none)
	call(versionSLB, "AddBackendServers", params{"LoadBalancerId": lb.LoadBalancerId,
		"BackendServers": `[{"ServerId":"` + f.instance + `","Weight":"100"}]`}, &none)
	return serviceFixture{fs: fs.FileSystemId, freeFS: freeFS.FileSystemId, mountDomain: mt.MountTargetDomain,
		lb: lb.LoadBalancerId, freeLB: freeLB.LoadBalancerId}
}

// egressFixture is an Internet NAT gateway with an EIP bound and an SNAT entry for the fixture's
// vSwitch, a second gateway nothing depends on (DeleteNatGateway), an Available EIP and one bound
// to the stopped instance (UnassociateEipAddress). Every one is past its asynchronous state.
type egressFixture struct {
	nat, snatTable, snatEntry, snatIP string
	freeNat                           string
	freeEip, boundEip                 string
}

func newEgressFixture(e *env, f conformanceFixture) egressFixture {
	e.t.Helper()
	t := e.t.(*testing.T)
	call := func(action string, p params, out any) {
		t.Helper()
		p["RegionId"] = testRegion
		decodeInto(t, e.rpc(versionVPC, action, p), out)
	}
	settle := func() { e.advance(time.Second) } // asynchronous steps take BootTime/2
	var nat, freeNat struct {
		NatGatewayId string
		SnatTableIds struct{ SnatTableId []string }
	}
	// Tagged, so that DescribeNatGateways answers carry tags the suite holds to the model.
	call("CreateNatGateway", params{"VpcId": f.vpcID, "VSwitchId": f.vswID, "Tag.1.Key": "conformance", "Tag.1.Value": "yes"}, &nat)
	call("CreateNatGateway", params{"VpcId": f.vpcID, "VSwitchId": f.vswID}, &freeNat)
	var natEip, freeEip, boundEip struct{ AllocationId, EipAddress string }
	call("AllocateEipAddress", params{}, &natEip)
	call("AllocateEipAddress", params{}, &freeEip)
	call("AllocateEipAddress", params{}, &boundEip)
	settle()
	var none struct{}
	call("AssociateEipAddress", params{"AllocationId": natEip.AllocationId, "InstanceId": nat.NatGatewayId, "InstanceType": "Nat"}, &none)
	call("AssociateEipAddress", params{"AllocationId": boundEip.AllocationId, "InstanceId": f.stopped}, &none)
	settle()
	var entry struct{ SnatEntryId string }
	call("CreateSnatEntry", params{"SnatTableId": nat.SnatTableIds.SnatTableId[0], "SnatIp": natEip.EipAddress,
		"SourceVSwitchId": f.vswID}, &entry)
	settle()
	return egressFixture{nat: nat.NatGatewayId, snatTable: nat.SnatTableIds.SnatTableId[0], snatEntry: entry.SnatEntryId,
		snatIP: natEip.EipAddress, freeNat: freeNat.NatGatewayId, freeEip: freeEip.AllocationId, boundEip: boundEip.AllocationId}
}

func newConformanceFixture(e *env) conformanceFixture {
	e.t.Helper()
	f := conformanceFixture{fixture: e.network("10.0.0.0/16", "10.0.1.0/24")}
	// The running instance carries a RAM role, so DescribeInstanceRamRole has an entry to answer.
	f.instance = e.runOne(f.fixture, params{"RamRoleName": "conformance"})
	f.stopped = e.runOne(f.fixture)
	var ds struct{ DeploymentSetId string }
	decodeInto(e.t.(*testing.T), e.ecsCall("CreateDeploymentSet", params{"Strategy": "Availability"}), &ds)
	var hpc struct{ HpcClusterId string }
	decodeInto(e.t.(*testing.T), e.ecsCall("CreateHpcCluster", params{"Name": "conformance"}), &hpc)
	var lt struct{ LaunchTemplateId string }
	decodeInto(e.t.(*testing.T), e.ecsCall("CreateLaunchTemplate", params{"LaunchTemplateName": "fixture"}), &lt)
	var sg struct{ SecurityGroupId string }
	decodeInto(e.t.(*testing.T), e.ecsCall("CreateSecurityGroup", params{"VpcId": f.vpcID}), &sg)
	f.ds, f.hpc, f.lt, f.freeSG, f.names = ds.DeploymentSetId, hpc.HpcClusterId, lt.LaunchTemplateId, sg.SecurityGroupId, new(int)
	var v struct{ VpcId, VSwitchId string }
	decodeInto(e.t.(*testing.T), e.rpc(versionVPC, "CreateVpc", params{"RegionId": testRegion, "CidrBlock": "192.168.0.0/16"}), &v)
	f.freeVpc = v.VpcId
	decodeInto(e.t.(*testing.T), e.rpc(versionVPC, "CreateVSwitch", params{"RegionId": testRegion, "VpcId": f.vpcID,
		"ZoneId": f.zone, "CidrBlock": "10.0.200.0/24"}), &v)
	f.freeVsw = v.VSwitchId
	for _, id := range []string{f.instance, f.stopped} {
		for st := e.describe([]string{id})[0].Status; st != "Running"; st = e.nextStatus(id, st) {
		}
	}
	wantAnswer(e.t.(*testing.T), e.ecsCall("StopInstances", params{"InstanceId.1": f.stopped}), 200, "")
	e.nextStatus(f.stopped, "Stopping")
	var img, freeImg struct{ ImageId string }
	decodeInto(e.t.(*testing.T), e.ecsCall("CreateImage", params{"InstanceId": f.instance}), &img)
	decodeInto(e.t.(*testing.T), e.ecsCall("CreateImage", params{"InstanceId": f.stopped}), &freeImg)
	f.image, f.freeImage = img.ImageId, freeImg.ImageId
	f.egress = newEgressFixture(e, f)
	f.svc = newServiceFixture(e, f)
	return f
}

// values answers the wire parameters that fill one parameter of an action with something valid.
func (f conformanceFixture) values(key, param string) params {
	version, action, _ := strings.Cut(key, "/")
	switch param {
	case "RegionId":
		return params{param: testRegion}
	case "VpcId":
		if action == "DeleteVpc" {
			return params{param: f.freeVpc}
		}
		return params{param: f.vpcID}
	case "VSwitchId":
		if action == "DeleteVSwitch" {
			return params{param: f.freeVsw}
		}
		return params{param: f.vswID}
	case "SecurityGroupId":
		if action == "DeleteSecurityGroup" {
			return params{param: f.freeSG}
		}
		return params{param: f.sgID}
	case "ZoneId":
		return params{param: f.zone}
	case "InstanceId", "InstanceId.1":
		if action == "StartInstances" || action == "ModifyInstanceAttribute" || action == "DeleteInstances" {
			return params{param: f.stopped}
		}
		return params{param: f.instance}
	case "InstanceIds":
		return params{param: `["` + f.instance + `"]`}
	case "NatGatewayId":
		if action == "DeleteNatGateway" {
			return params{param: f.egress.freeNat}
		}
		return params{param: f.egress.nat}
	case "SnatTableId":
		return params{param: f.egress.snatTable}
	case "SnatEntryId":
		return params{param: f.egress.snatEntry}
	case "SnatIp":
		return params{param: f.egress.snatIP}
	case "SourceVSwitchId":
		return params{param: f.freeVsw} // the fixture's entry translates vswID already
	case "AllocationId":
		if action == "UnassociateEipAddress" {
			return params{param: f.egress.boundEip}
		}
		return params{param: f.egress.freeEip}
	case "DeploymentSetId":
		return params{param: f.ds}
	case "HpcClusterId":
		return params{param: f.hpc}
	case "LaunchTemplateId":
		return params{param: f.lt}
	case "LaunchTemplateName":
		*f.names++
		return params{param: "conformance-template-" + strconv.Itoa(*f.names)}
	case "Name":
		return params{param: "conformance"}
	case "Type":
		if action == "RunCommand" {
			return params{param: "RunShellScript"}
		}
	case "CidrBlock":
		return params{param: "10.0.9.0/24"}
	case "DestinationResource":
		return params{param: "InstanceType"}
	case "ImageId":
		switch action {
		case "CopyImage":
			return params{param: f.image}
		case "DeleteImage":
			return params{param: f.freeImage}
		}
		return params{param: "ubuntu_22_04_x64_20G_alibase_20240101.vhd"}
	case "DestinationRegionId":
		return params{param: "cn-beijing"}
	case "InstanceType":
		return params{param: "ecs.gn6i-c4g1.xlarge"}
	case "ResourceType":
		switch version {
		case versionVPC:
			return params{param: "VPC"}
		case versionNAS:
			return params{param: "filesystem"}
		}
		return params{param: "instance"}
	case "ResourceId.1":
		switch version {
		case versionVPC:
			return params{param: f.vpcID}
		case versionNAS:
			return params{param: f.svc.fs}
		case versionSLB:
			return params{param: f.svc.lb}
		}
		return params{param: f.instance}
	case "FileSystemId":
		if action == "DeleteFileSystem" {
			return params{param: f.svc.freeFS}
		}
		return params{param: f.svc.fs}
	case "MountTargetDomain":
		return params{param: f.svc.mountDomain}
	case "NetworkType":
		return params{param: "Vpc"}
	case "ProtocolType":
		return params{param: "NFS"}
	case "StorageType":
		return params{param: "Capacity"}
	case "Capacity":
		return params{param: "200"}
	case "LoadBalancerId":
		if action == "DeleteLoadBalancer" || action == "AddBackendServers" {
			return params{param: f.svc.freeLB}
		}
		return params{param: f.svc.lb}
	case "ListenerPort":
		if action == "CreateLoadBalancerTCPListener" {
			return params{param: slbNewListenerPort}
		}
		return params{param: slbListenerPort}
	case "Bandwidth":
		return params{param: "-1"}
	case "BackendServerPort":
		return params{param: slbNewListenerPort}
	case "BackendServers":
		return params{param: `[{"ServerId":"` + f.instance + `","Weight":"100"}]`}
	case "DeleteProtection":
		return params{param: "off"}
	case "RoleArn":
		return params{param: "acs:ram::1234567890123456:role/conformance"}
	case "Tag.1":
		return params{"Tag.1.Key": "conformance", "Tag.1.Value": "yes"}
	case "Permissions.1.IpProtocol":
		return params{param: "TCP"}
	case "Permissions.1.PortRange":
		return params{param: "22/22"}
	case "Permissions.1.SourceCidrIp", "Permissions.1.DestCidrIp":
		return params{param: "10.0.0.0/8"}
	}
	return params{param: "conformance"}
}

func (f conformanceFixture) baseRequest(key string, a conformance.Action) params {
	p := params{}
	for _, r := range append(append([]string{}, a.Required...), conditionallyRequired[key]...) {
		for k, v := range f.values(key, r) {
			p[k] = v
		}
	}
	if a.Name == "CreateVSwitch" {
		p["ZoneId"] = f.zone
	}
	return p
}

func copyParams(p params) params {
	out := make(params, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}

// errorMessage answers the Message of an error answer.
func errorMessage(a rpcAnswer) string {
	var eb struct{ Message string }
	_ = json.Unmarshal(a.body, &eb)
	return eb.Message
}

// TestConformanceCoversEveryServedAction fails when the emulator serves an action the generated
// table has not seen: run `go generate ./internal/emulator/conformance`.
func TestConformanceCoversEveryServedAction(t *testing.T) {
	uncovered := map[string]bool{}
	for _, k := range conformance.Uncovered {
		uncovered[k] = true
	}
	for _, key := range ServedActions() {
		_, modelled := conformance.Actions[key]
		if !modelled && !uncovered[key] {
			t.Errorf("%s is served but missing from the conformance table: run go generate ./internal/emulator/conformance", key)
		}
	}
	versions := map[string]bool{}
	for _, k := range conformance.Uncovered {
		version, _, _ := strings.Cut(k, "/")
		versions[productHost[version]+" "+version] = true
	}
	t.Logf("%d served actions held to the SDK models (%s)", len(conformance.Actions), strings.Join(sortedValues(conformance.Sources), ", "))
	if len(conformance.Uncovered) > 0 {
		t.Logf("%d served actions without a vendor model (%s): %s",
			len(conformance.Uncovered), strings.Join(sortedKeys(versions), ", "), strings.Join(conformance.Uncovered, ", "))
	}
}

// knownExtraFields reads the baseline of response-model divergences not fixed yet.
func knownExtraFields(t *testing.T) map[string]bool {
	b, err := os.ReadFile(filepath.Join("testdata", "conformance", "extra_response_fields.txt"))
	must(t, err)
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out[line] = true
		}
	}
	return out
}

var listIndex = regexp.MustCompile(`\[[0-9]+\]`)

func TestConformance(t *testing.T) {
	known := knownExtraFields(t)
	var seenMu sync.Mutex
	seen := map[string]bool{}
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		for k := range known {
			if !seen[k] {
				t.Errorf("%s is listed in testdata/conformance/extra_response_fields.txt but no longer sent: delete the line", k)
			}
		}
	})
	keys := make([]string, 0, len(conformance.Actions))
	for k := range conformance.Actions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		a := conformance.Actions[key]
		t.Run(strings.ReplaceAll(key, "/", "_"), func(t *testing.T) {
			e := newEnv(t, Config{BootTime: time.Millisecond})
			f := newConformanceFixture(e)
			base := f.baseRequest(key, a)
			call := func(p params) rpcAnswer { return e.rpc(a.Version, a.Name, copyParams(p)) }

			// Only the required parameters: never refused for a missing one; the answer fits
			// the SDK's response model.
			var unpruned []byte
			e.s.seeUnpruned = func(k string, body []byte) {
				if k == key {
					unpruned = bytes.Clone(body)
				}
			}
			ok := call(base)
			e.s.seeUnpruned = nil
			if strings.HasPrefix(ok.code, "Missing") {
				t.Fatalf("refused a request with every vendor-required parameter (%v): %v", keysOf(base), ok)
			}
			if ok.status != 200 {
				t.Fatalf("a request with the vendor-required parameters %v failed, so the checks below would prove nothing: %v", keysOf(base), ok)
			}
			var doc map[string]any
			must(t, json.Unmarshal(ok.body, &doc))
			noNulls(t, doc)
			model := conformance.ResponseBodies[key]
			var extras []string
			switch {
			case model != nil:
				extras = extraFields(doc, reflect.TypeOf(model), "")
			case responseTrees[key] != nil:
				// A model read from a checkout (the module is not on the Go module proxy): its
				// types cannot be imported, so the answer is held to the model's field names.
				model = "the " + conformance.Sources[a.Version] + " response model"
				extras = extraShapeFields(doc, responseTrees[key], "")
			}
			if model != nil {
				for _, extra := range extras {
					entry := key + " " + listIndex.ReplaceAllString(extra, "[]")
					seenMu.Lock()
					seen[entry] = true
					seenMu.Unlock()
					if !known[entry] {
						t.Errorf("answer field %s is not in the SDK response model %v", extra, modelName(model))
					}
				}
				// Pruning trims the answer to the model, so the checks above see the model's
				// names only. What it trimmed must be the SDK struct's empty fields: a value the
				// emulator filled in under a name the model lacks would be lost without a trace.
				if tree := responseTrees[key]; tree != nil && unpruned != nil {
					var raw any
					must(t, json.Unmarshal(unpruned, &raw))
					for _, path := range filledOutsideShape(raw, tree, "") {
						t.Errorf("the emulator fills %s, which the vendor's response model %v lacks: pruning drops it; write it under the model's field name or leave it empty", path, modelName(model))
					}
				}
				for _, path := range blankListEntries(doc, "") {
					t.Errorf("answer list entry %s holds only empty fields: the emulator wrote its fields under names the SDK response model %v lacks, and pruning dropped them", path, modelName(model))
				}
			}

			// Each required parameter left out: MissingParameter naming it.
			for _, r := range a.Required {
				p := copyParams(base)
				for k := range f.values(key, r) {
					delete(p, k)
				}
				got := call(p)
				name := strings.TrimSuffix(r, ".1")
				if got.code != "MissingParameter" || !strings.Contains(errorMessage(got), name) {
					t.Errorf("without %s: want MissingParameter naming it, got %v", r, got)
				}
			}

			// Documented integer ranges, at and one past each bound.
			for _, l := range a.Limits {
				for _, c := range limitCases(l) {
					p := copyParams(base)
					p[l.Param] = strconv.FormatInt(c.value, 10)
					if comp := limitCompanions[l.Param]; comp != "" && c.inside {
						p[comp] = p[l.Param]
					}
					got := call(p)
					named := got.status != 200 && strings.Contains(errorMessage(got), l.Param)
					switch {
					case c.inside && named:
						t.Errorf("%s=%d is inside the documented range (%s) but was refused: %v", l.Param, c.value, a.Doc[l.Param], got)
					case !c.inside && clampedParams[l.Param] && got.status != 200:
						t.Errorf("%s=%d is outside the documented range (%s), which the vendor clamps, but was refused: %v", l.Param, c.value, a.Doc[l.Param], got)
					case !c.inside && !clampedParams[l.Param] && !named:
						t.Errorf("%s=%d is outside the documented range (%s) but was not refused naming it: %v", l.Param, c.value, a.Doc[l.Param], got)
					}
				}
			}
		})
	}
}

type limitCase struct {
	value  int64
	inside bool
}

func limitCases(l conformance.Limit) []limitCase {
	var out []limitCase
	if l.Min != conformance.NoBound {
		out = append(out, limitCase{l.Min, true})
		if l.Min > 0 {
			out = append(out, limitCase{l.Min - 1, false})
		}
	}
	if l.Max != conformance.NoBound {
		out = append(out, limitCase{l.Max, true}, limitCase{l.Max + 1, false})
	}
	return out
}

func keysOf(p params) []string {
	out := make([]string, 0, len(p))
	for k := range p {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// blankListEntries lists the paths of list entries that are objects with no text set. The
// vendor lists things that have fields; a blank entry is what is left when the emulator fills
// fields the model lacks and pruneAnswer drops them, keeping only the model's fields at their
// zero values (a NAT gateway's tags written as Key/Value where the model says TagKey/TagValue).
func blankListEntries(doc any, path string) []string {
	var out []string
	switch v := doc.(type) {
	case map[string]any:
		for k, sub := range v {
			out = append(out, blankListEntries(sub, path+"."+k)...)
		}
	case []any:
		for i, sub := range v {
			p := path + "[" + strconv.Itoa(i) + "]"
			if _, ok := sub.(map[string]any); ok && blank(sub) {
				out = append(out, p)
				continue
			}
			out = append(out, blankListEntries(sub, p)...)
		}
	}
	return out
}

// blank reports whether a decoded JSON value holds no text: numbers and booleans count as set,
// since 0 and false say something (NetworkCardIndex 0 is the first card).
func blank(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		for _, sub := range v {
			if !blank(sub) {
				return false
			}
		}
		return true
	}
	return false
}

// extraFields lists the paths of doc's keys that the model type has no json field for.
func extraFields(doc any, t reflect.Type, path string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	switch v := doc.(type) {
	case map[string]any:
		if t.Kind() == reflect.Map || t.Kind() == reflect.Interface {
			return nil // a free-form object in the model
		}
		if t.Kind() != reflect.Struct {
			return []string{path + " (an object where the model has " + t.String() + ")"}
		}
		fields := map[string]reflect.Type{}
		for i := 0; i < t.NumField(); i++ {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name != "" && name != "-" {
				fields[name] = t.Field(i).Type
			}
		}
		for k, sub := range v {
			ft, ok := fields[k]
			if !ok {
				out = append(out, path+"."+k)
				continue
			}
			out = append(out, extraFields(sub, ft, path+"."+k)...)
		}
	case []any:
		if t.Kind() != reflect.Slice {
			return []string{path + " (a list where the model has " + t.String() + ")"}
		}
		for i, sub := range v {
			out = append(out, extraFields(sub, t.Elem(), path+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return out
}

// modelName names a response model: its SDK type, or the model a shape was read from.
func modelName(model any) string {
	if s, ok := model.(string); ok {
		return s
	}
	return reflect.TypeOf(model).String()
}

// extraShapeFields lists the paths of doc's keys that a response shape has no field for, and of
// objects where the shape has a scalar.
func extraShapeFields(doc any, n *shapeNode, path string) []string {
	var out []string
	switch v := doc.(type) {
	case map[string]any:
		if n == nil {
			return nil // a scalar or free-form field: pruneAnswer copies it whole
		}
		for k, sub := range v {
			child, ok := n.fields[k]
			if !ok {
				out = append(out, path+"."+k)
				continue
			}
			out = append(out, extraShapeFields(sub, child, path+"."+k)...)
		}
	case []any:
		for i, sub := range v {
			out = append(out, extraShapeFields(sub, n, path+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return out
}

// filledOutsideShape lists the paths of doc's fields that a response shape has no field for and
// that hold a value (not "", 0, false, null or an object or list of such).
func filledOutsideShape(doc any, n *shapeNode, path string) []string {
	var out []string
	switch v := doc.(type) {
	case map[string]any:
		if n == nil {
			return nil // a scalar or free-form field: kept whole
		}
		for k, sub := range v {
			child, ok := n.fields[k]
			switch {
			case !ok && !isEmptyJSON(sub):
				out = append(out, fmt.Sprintf("%s.%s (%v)", path, k, sub))
			case ok:
				out = append(out, filledOutsideShape(sub, child, path+"."+k)...)
			}
		}
	case []any:
		for i, sub := range v {
			out = append(out, filledOutsideShape(sub, n, path+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return out
}

func isEmptyJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case float64:
		return x == 0
	case bool:
		return !x
	case []any:
		for _, e := range x {
			if !isEmptyJSON(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !isEmptyJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

func sortedValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}
