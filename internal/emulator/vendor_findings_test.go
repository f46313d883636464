package emulator

import (
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// These tests hold the emulator to behaviour the vendor documents and that the project's own
// SDK never exercises (it always sends the parameters the emulator used to demand). They talk
// to the emulator with raw signed requests so any parameter combination can be sent.

// rpcAnswer is one raw RPC answer.
type rpcAnswer struct {
	status int
	code   string // error code, "" on success
	body   []byte
}

func (a rpcAnswer) String() string {
	return fmt.Sprintf("HTTP %d %s: %.400s", a.status, a.code, a.body)
}

// rpc sends one V1-signed request (POST, parameters in the query string, as the SDK does).
func (e *env) rpc(version, action string, p params) rpcAnswer {
	e.t.Helper()
	p["Action"], p["Version"] = action, version
	format := p["Format"]
	q := signedQuery("POST", p, "emulator", "emulator-secret")
	if format != "" && format != "JSON" {
		// signedQuery signs Format=JSON; re-sign with the format asked for.
		p["Format"] = format
		p["Signature"] = core.SignV1(core.StringToSign("POST", withoutSignature(p)), "emulator-secret")
		q = encodeParams(p)
	}
	resp, err := http.Post(e.srv.URL+"/?"+q, "application/x-www-form-urlencoded", nil)
	must(e.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	a := rpcAnswer{status: resp.StatusCode, body: body}
	if resp.StatusCode != http.StatusOK {
		var eb struct{ Code string }
		if strings.Contains(resp.Header.Get("Content-Type"), "xml") {
			_ = xml.Unmarshal(body, &eb)
		} else {
			_ = json.Unmarshal(body, &eb)
		}
		a.code = eb.Code
	}
	return a
}

func withoutSignature(p params) params {
	out := make(params, len(p))
	for k, v := range p {
		if k != "Signature" {
			out[k] = v
		}
	}
	return out
}

func encodeParams(p params) string {
	var b strings.Builder
	for k, v := range p {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(percentEncodeQuery(k) + "=" + percentEncodeQuery(v))
	}
	return b.String()
}

func percentEncodeQuery(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func (e *env) ecsCall(action string, p params) rpcAnswer {
	e.t.Helper()
	if _, ok := p["RegionId"]; !ok {
		p["RegionId"] = testRegion
	}
	return e.rpc(versionECS, action, p)
}

func wantAnswer(t *testing.T, a rpcAnswer, status int, code string) {
	t.Helper()
	if a.status != status || a.code != code {
		t.Fatalf("want HTTP %d %q, got %v", status, code, a)
	}
}

func decodeInto(t *testing.T, a rpcAnswer, v any) {
	t.Helper()
	if a.status != http.StatusOK {
		t.Fatalf("call failed: %v", a)
	}
	must(t, json.Unmarshal(a.body, v))
}

// runOne starts one instance, with any extra RunInstances parameters, and returns its id.
func (e *env) runOne(f fixture, extra ...params) string {
	e.t.Helper()
	var out struct {
		InstanceIdSets struct{ InstanceIdSet []string }
	}
	p := params{"ImageId": "ubuntu_22_04_x64_20G_alibase_20240101.vhd",
		"InstanceType": "ecs.gn6i-c4g1.xlarge", "VSwitchId": f.vswID, "SecurityGroupId": f.sgID}
	for _, x := range extra {
		for k, v := range x {
			p[k] = v
		}
	}
	a := e.ecsCall("RunInstances", p)
	if a.status != 200 {
		e.t.Fatalf("RunInstances: %v", a)
	}
	must(e.t, json.Unmarshal(a.body, &out))
	return out.InstanceIdSets.InstanceIdSet[0]
}

// The vendor documents DRYRUN.SUCCESS (not DryRunOperation) for the dry runs of StartInstances,
// StopInstances and DeleteInstances, and a dry run changes nothing.
func TestDryRunStartStopDeleteInstances(t *testing.T) {
	e := newEnv(t, Config{BootTime: 1})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	id := e.runOne(f)
	ids := `["` + id + `"]`
	wantAnswer(t, e.ecsCall("StopInstances", params{"InstanceId.1": id, "DryRun": "true"}), 400, "DRYRUN.SUCCESS")
	if st := e.describe([]string{id})[0].Status; st != "Running" {
		t.Fatalf("a dry-run stop changed the instance to %s", st)
	}
	wantAnswer(t, e.ecsCall("DeleteInstances", params{"InstanceId.1": id, "Force": "true", "DryRun": "true"}), 400, "DRYRUN.SUCCESS")
	if len(e.describe([]string{id})) != 1 {
		t.Fatal("a dry-run delete released the instance")
	}
	wantAnswer(t, e.ecsCall("StopInstances", params{"InstanceId.1": id}), 200, "")
	e.nextStatus(id, "Stopping")
	wantAnswer(t, e.ecsCall("StartInstances", params{"InstanceId.1": id, "DryRun": "true"}), 400, "DRYRUN.SUCCESS")
	if st := e.describe([]string{id})[0].Status; st != "Stopped" {
		t.Fatalf("a dry-run start changed the instance to %s", st)
	}
	// A dry run still checks the request: a running instance cannot be started.
	wantAnswer(t, e.ecsCall("StartInstances", params{"InstanceId.1": id}), 200, "")
	e.nextStatus(id, "Starting")
	wantAnswer(t, e.ecsCall("StartInstances", params{"InstanceId.1": id, "DryRun": "true"}), 403, "IncorrectInstanceStatus")
	_ = ids
}

// DescribeInstances: an explicitly empty InstanceIds list matches nothing, and MaxResults
// outside 1-100 is clamped (below 10 answers 10, above 100 answers 100).
func TestDescribeInstancesEmptyIdsAndClampedMaxResults(t *testing.T) {
	e := newEnv(t, Config{BootTime: 1})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	a := e.ecsCall("RunInstances", params{"ImageId": "ubuntu_22_04_x64_20G_alibase_20240101.vhd",
		"InstanceType": "ecs.gn6i-c4g1.xlarge", "VSwitchId": f.vswID, "SecurityGroupId": f.sgID, "Amount": "12"})
	wantAnswer(t, a, 200, "")
	type page struct {
		TotalCount int
		Instances  struct{ Instance []struct{ InstanceId string } }
	}
	var pg page
	decodeInto(t, e.ecsCall("DescribeInstances", params{"InstanceIds": "[]"}), &pg)
	if len(pg.Instances.Instance) != 0 || pg.TotalCount != 0 {
		t.Fatalf("InstanceIds=[] answered %d instances (total %d)", len(pg.Instances.Instance), pg.TotalCount)
	}
	decodeInto(t, e.ecsCall("DescribeInstances", params{"MaxResults": "101"}), &pg)
	if len(pg.Instances.Instance) != 12 {
		t.Fatalf("MaxResults 101: %d instances", len(pg.Instances.Instance))
	}
	decodeInto(t, e.ecsCall("DescribeInstances", params{"MaxResults": "0"}), &pg)
	if len(pg.Instances.Instance) != 10 {
		t.Fatalf("MaxResults 0: %d instances, want the default 10", len(pg.Instances.Instance))
	}
}

// runParams is a minimal valid RunInstances request.
func runParams(f fixture) params {
	return params{"ImageId": "ubuntu_22_04_x64_20G_alibase_20240101.vhd", "InstanceType": "ecs.gn6i-c4g1.xlarge",
		"VSwitchId": f.vswID, "SecurityGroupId": f.sgID, "DryRun": "true"}
}

func TestRunInstancesVendorRules(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	g2 := e.ecsCall("CreateSecurityGroup", params{"VpcId": f.vpcID})
	var sg2 struct{ SecurityGroupId string }
	decodeInto(t, g2, &sg2)
	primary := func(p params) params {
		delete(p, "VSwitchId")
		delete(p, "SecurityGroupId")
		p["NetworkInterface.1.InstanceType"] = "Primary"
		p["NetworkInterface.1.VSwitchId"] = f.vswID
		p["NetworkInterface.1.SecurityGroupId"] = f.sgID
		return p
	}
	bigUserData := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("#", 30000))) // 30,000 bytes raw, 40,000 encoded
	tooBig := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("#", 32*1024+1)))
	cases := []struct {
		name   string
		mod    func(p params)
		status int
		code   string
	}{
		{"minimal request", func(p params) {}, 400, "DryRunOperation"},
		{"primary network interface instead of VSwitchId/SecurityGroupId", func(p params) { primary(p) }, 400, "DryRunOperation"},
		{"primary network interface with SecurityGroupIds.N", func(p params) {
			primary(p)
			delete(p, "NetworkInterface.1.SecurityGroupId")
			p["NetworkInterface.1.SecurityGroupIds.1"] = f.sgID
		}, 400, "DryRunOperation"},
		{"VSwitchId beside a primary network interface", func(p params) { primary(p)["VSwitchId"] = f.vswID }, 400, "InvalidParameter.Conflict"},
		{"SecurityGroupId beside a primary network interface", func(p params) { primary(p)["SecurityGroupId"] = f.sgID }, 400, "InvalidParameter.Conflict"},
		{"no vSwitch at all", func(p params) { delete(p, "VSwitchId") }, 400, "MissingParameter"},
		{"no security group at all", func(p params) { delete(p, "SecurityGroupId") }, 400, "MissingParameter"},
		{"SecurityGroupId and SecurityGroupIds.N", func(p params) { p["SecurityGroupIds.1"] = sg2.SecurityGroupId }, 400, "InvalidParameter.Conflict"},
		{"SecurityGroupIds.N alone", func(p params) {
			delete(p, "SecurityGroupId")
			p["SecurityGroupIds.1"], p["SecurityGroupIds.2"] = f.sgID, sg2.SecurityGroupId
		}, 400, "DryRunOperation"},
		{"ImageFamily instead of ImageId", func(p params) { delete(p, "ImageId"); p["ImageFamily"] = "acs:ubuntu_22_04_x64" }, 400, "DryRunOperation"},
		{"ImageId and ImageFamily", func(p params) { p["ImageFamily"] = "acs:ubuntu_22_04_x64" }, 400, "InvalidParameter.Conflict"},
		{"unknown ImageFamily", func(p params) { delete(p, "ImageId"); p["ImageFamily"] = "no-such-family" }, 404, "InvalidImageFamily.NotFound"},
		{"unknown LaunchTemplateId", func(p params) { p["LaunchTemplateId"] = "lt-nope" }, 404, "InvalidLaunchTemplate.NotFound"},
		{"data disk from a snapshot without a size", func(p params) { p["DataDisk.1.SnapshotId"] = "s-0000000000000001" }, 400, "DryRunOperation"},
		{"system disk above 2048 GiB", func(p params) { p["SystemDisk.Size"] = "2049" }, 400, "InvalidSystemDiskSize.ValueNotSupported"},
		{"system disk at 2048 GiB", func(p params) { p["SystemDisk.Size"] = "2048" }, 400, "DryRunOperation"},
		{"16 data disks", func(p params) {
			for i := 1; i <= 16; i++ {
				p[fmt.Sprintf("DataDisk.%d.Size", i)] = "100"
			}
		}, 400, "DryRunOperation"},
		{"17 data disks", func(p params) {
			for i := 1; i <= 17; i++ {
				p[fmt.Sprintf("DataDisk.%d.Size", i)] = "100"
			}
		}, 400, "InvalidDataDiskCount.Exceeded"},
		{"UserData of 30,000 bytes (40,000 encoded)", func(p params) { p["UserData"] = bigUserData }, 400, "DryRunOperation"},
		{"UserData above 32 KiB before encoding", func(p params) { p["UserData"] = tooBig }, 400, "InvalidUserData.SizeExceeded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := runParams(f)
			c.mod(p)
			wantAnswer(t, e.ecsCall("RunInstances", p), c.status, c.code)
		})
	}
	// A launch template stands in for ImageId, InstanceType, VSwitchId and SecurityGroupId.
	var lt struct{ LaunchTemplateId string }
	decodeInto(t, e.ecsCall("CreateLaunchTemplate", params{"LaunchTemplateName": "gpu-node", "ImageId": "ubuntu_22_04_x64_20G_alibase_20240101.vhd",
		"InstanceType": "ecs.gn6i-c4g1.xlarge", "VSwitchId": f.vswID, "SecurityGroupId": f.sgID}), &lt)
	wantAnswer(t, e.ecsCall("RunInstances", params{"LaunchTemplateId": lt.LaunchTemplateId, "DryRun": "true"}), 400, "DryRunOperation")
	wantAnswer(t, e.ecsCall("RunInstances", params{"LaunchTemplateName": "gpu-node", "InstanceType": "ecs.nope", "DryRun": "true"}), 400, "InvalidInstanceType.ValueNotSupported")
	wantAnswer(t, e.ecsCall("DeleteLaunchTemplate", params{"LaunchTemplateId": lt.LaunchTemplateId}), 200, "")
	wantAnswer(t, e.ecsCall("RunInstances", params{"LaunchTemplateId": lt.LaunchTemplateId, "DryRun": "true"}), 404, "InvalidLaunchTemplate.NotFound")

	// A real launch through a primary network interface lands on its vSwitch and groups.
	p := primary(runParams(f))
	delete(p, "DryRun")
	a := e.ecsCall("RunInstances", p)
	var out struct {
		InstanceIdSets struct{ InstanceIdSet []string }
	}
	decodeInto(t, a, &out)
	in := e.describe(out.InstanceIdSets.InstanceIdSet)[0]
	if in.VpcAttributes.VSwitchId != f.vswID || len(in.SecurityGroupIds.SecurityGroupId) != 1 || in.SecurityGroupIds.SecurityGroupId[0] != f.sgID {
		t.Fatalf("instance from a primary interface: vsw %s groups %v", in.VpcAttributes.VSwitchId, in.SecurityGroupIds.SecurityGroupId)
	}
	if n := in.NetworkInterfaces.NetworkInterface; len(n) != 1 || n[0].Type != "Primary" {
		t.Fatalf("interfaces: %+v", n)
	}
}
