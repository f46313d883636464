package emulator

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

// TestCloudAssistantRunCommand holds RunCommand and DescribeInvocationResults to the vendor's
// references (ecs/cloud_assistant.go), through the vendor's SDK as the provider calls them: a
// Base64 script on a Running instance stays Running until the guest finishes it; Output is Base64
// unless PlainText is asked for; a non-zero exit is Failed with ExitCodeNonzero; a command nobody
// finishes is Failed with ExecutionTimeout once its Timeout has passed; one whose instance stops
// is Failed with InstanceNotRunning; a stopped instance is refused; an unknown InvokeId is not
// found.
func TestCloudAssistantRunCommand(t *testing.T) {
	e := newEnv(t, Config{BootTime: 1})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	a, b := e.runOne(f), e.runOne(f)
	run := func(script string, ids ...string) *ecs.RunCommandResponse {
		t.Helper()
		r := ecs.CreateRunCommandRequest()
		r.RegionId, r.Type, r.ContentEncoding = testRegion, "RunShellScript", "Base64"
		r.CommandContent = base64.StdEncoding.EncodeToString([]byte(script))
		r.InstanceId, r.Timeout = &ids, requests.NewInteger(60)
		resp, err := e.ecs.RunCommand(r)
		must(t, err)
		return resp
	}
	results := func(invokeID, encoding string) []ecs.InvocationResult {
		t.Helper()
		r := ecs.CreateDescribeInvocationResultsRequest()
		r.RegionId, r.InvokeId, r.ContentEncoding = testRegion, invokeID, encoding
		resp, err := e.ecs.DescribeInvocationResults(r)
		must(t, err)
		noNulls(t, decodeJSON(t, resp.GetHttpContentBytes()))
		return resp.Invocation.InvocationResults.InvocationResult
	}

	inv := run("echo hi", a, b)
	if got := results(inv.InvokeId, ""); len(got) != 2 || got[0].InvocationStatus != "Running" || got[1].InvocationStatus != "Running" {
		t.Fatalf("before the guest runs it: %+v, want two Running results", got)
	}
	pending := e.s.PendingCommands()
	if len(pending) != 2 || pending[0].Content != "echo hi" {
		t.Fatalf("pending commands %+v, want the decoded script on both instances", pending)
	}
	e.s.FinishCommand(inv.InvokeId, a, 0, "hi\n")
	e.s.FinishCommand(inv.InvokeId, b, 3, "boom\n")
	byID := map[string]ecs.InvocationResult{}
	for _, r := range results(inv.InvokeId, "") {
		byID[r.InstanceId] = r
	}
	if r := byID[a]; r.InvocationStatus != "Success" || r.ExitCode != 0 || r.Output != base64.StdEncoding.EncodeToString([]byte("hi\n")) {
		t.Errorf("instance a: %+v, want Success with its output in Base64 (the default encoding)", r)
	}
	if r := byID[b]; r.InvocationStatus != "Failed" || r.ErrorCode != "ExitCodeNonzero" || r.ExitCode != 3 {
		t.Errorf("instance b: %+v, want Failed, ExitCodeNonzero, exit code 3", r)
	}
	plain := map[string]string{}
	for _, r := range results(inv.InvokeId, "PlainText") {
		plain[r.InstanceId] = r.Output
	}
	if plain[a] != "hi\n" || plain[b] != "boom\n" {
		t.Errorf("PlainText: outputs %q, want each instance's plain output", plain)
	}

	late := run("sleep 1000", a)
	if len(e.s.PendingCommands()) != 1 { // the guest takes it
		t.Fatal("the new command is not pending")
	}
	undelivered := run("true", b) // and nobody takes this one
	e.s.clockSkew.Store(int64(2 * time.Minute))
	if r := results(late.InvokeId, "PlainText"); r[0].InvocationStatus != "Failed" || r[0].ErrorCode != "ExecutionTimeout" {
		t.Errorf("past its Timeout: %+v, want Failed with ExecutionTimeout", r[0])
	}
	if r := results(undelivered.InvokeId, "PlainText"); r[0].InvocationStatus != "Aborted" || r[0].ErrorCode != "DeliveryTimeout" {
		t.Errorf("not delivered within a minute: %+v, want Aborted with DeliveryTimeout", r[0])
	}
	if len(e.s.PendingCommands()) != 0 {
		t.Errorf("a timed-out command is still pending")
	}
	e.s.clockSkew.Store(0)

	e.ecsCall("StopInstances", params{"InstanceId.1": b})
	r := ecs.CreateRunCommandRequest()
	r.RegionId, r.Type, r.CommandContent, r.InstanceId = testRegion, "RunShellScript", "true", &[]string{b}
	if _, err := e.ecs.RunCommand(r); err == nil || !strings.Contains(err.Error(), "IncorrectInstanceStatus") {
		t.Errorf("RunCommand on a stopped instance: %v, want IncorrectInstanceStatus", err)
	}
	// A command whose instance stops before the guest runs it is finished as InstanceNotRunning
	// (DescribeInvocations reference) the next time the guest model asks, and is not handed out.
	cut := run("sleep 1000", a)
	e.ecsCall("StopInstances", params{"InstanceId.1": a})
	if p := e.s.PendingCommands(); len(p) != 0 {
		t.Errorf("pending on a stopped instance: %+v, want none", p)
	}
	if r := results(cut.InvokeId, ""); r[0].InvocationStatus != "Failed" || r[0].ErrorCode != "InstanceNotRunning" {
		t.Errorf("instance stopped under its command: %+v, want Failed with InstanceNotRunning", r[0])
	}
	q := ecs.CreateDescribeInvocationResultsRequest()
	q.RegionId, q.InvokeId = testRegion, "t-nosuch"
	if _, err := e.ecs.DescribeInvocationResults(q); err == nil || !strings.Contains(err.Error(), "InvalidInvokeId.NotFound") {
		t.Errorf("unknown InvokeId: %v, want InvalidInvokeId.NotFound", err)
	}
}
