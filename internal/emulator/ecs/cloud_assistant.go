package ecs

import (
	"cmp"
	"encoding/base64"
	"slices"
	"strings"
	"time"

	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// Cloud Assistant: RunCommand runs a shell script on running instances through the Cloud
// Assistant client the vendor's public Linux images carry, and DescribeInvocationResults reads
// back each instance's outcome (https://www.alibabacloud.com/help/en/ecs/user-guide/overview-10,
// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-runcommand,
// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinvocationresults).
//
// The emulator has no guest to run a script in: an invocation stays Running on each instance
// until a model of the guest beside the emulator (the node agent) finishes it with an exit code
// and an output (FinishInvocation), or until its Timeout passes, when it is Failed with
// ExecutionTimeout as the vendor reports a command that outlives its timeout.

func init() {
	core.Register(Version, "RunCommand", core.Route{Fn: handle(runCommand), Write: true})
	core.Register(Version, "DescribeInvocationResults", core.Route{Fn: handle(describeInvocationResults)})
}

// RunCommand's limits (RunCommand reference above): InstanceId "up to 100 instance IDs"; Timeout
// "Default value: 60" seconds; the Base64-encoded CommandContent at most 18 KB when the command
// is kept (KeepCommand=true) and 24 KB when it is not (the default).
const (
	maxCommandInstances        = 100
	defaultCommandTimeout      = 60
	maxKeptCommandContentBytes = 18 * 1024
	maxCommandContentBytes     = 24 * 1024
)

// commandTypes are RunCommand's Type values.
var commandTypes = []string{"RunShellScript", "RunBatScript", "RunPowerShellScript"}

// invocation is one RunCommand call: the script and, per instance, its outcome.
type invocation struct {
	ID        string                    `json:"id"`
	CommandID string                    `json:"command_id"`
	Region    string                    `json:"region"`
	Name      string                    `json:"name,omitempty"`
	Content   string                    `json:"content"` // plain text
	Timeout   int                       `json:"timeout"` // seconds
	Created   int64                     `json:"created"` // unix nanoseconds
	Results   map[string]*commandResult `json:"results"` // by instance id
	Instances []string                  `json:"instances"`
}

// commandResult is one instance's outcome of an invocation; Finished 0 while it runs, Delivered 0
// until a guest took it (PendingCommands).
type commandResult struct {
	Delivered int64  `json:"delivered,omitempty"`
	Finished  int64  `json:"finished,omitempty"`
	ExitCode  int64  `json:"exit_code"`
	Output    string `json:"output,omitempty"`
	ErrorCode string `json:"error_code,omitempty"`
}

func runCommand(c *call) (any, *core.Error) {
	typ, e := c.P.Required("Type")
	if e != nil {
		return nil, e
	}
	if !slices.Contains(commandTypes, typ) {
		return nil, core.ErrInvalid("Type", "%q is not one of %v", typ, commandTypes)
	}
	content, e := c.P.Required("CommandContent")
	if e != nil {
		return nil, e
	}
	switch c.P["ContentEncoding"] {
	case "", "PlainText":
	case "Base64":
		raw, err := base64.StdEncoding.DecodeString(content)
		if err != nil {
			return nil, core.ErrInvalid("CommandContent", "is not Base64 although ContentEncoding is Base64")
		}
		content = string(raw)
	default:
		return nil, core.ErrInvalid("ContentEncoding", "must be PlainText or Base64")
	}
	keep, e := c.P.Bool("KeepCommand", false)
	if e != nil {
		return nil, e
	}
	limit := maxCommandContentBytes
	if keep {
		limit = maxKeptCommandContentBytes
	}
	if n := base64.StdEncoding.EncodedLen(len(content)); n > limit {
		return nil, core.ErrInvalid("CommandContent", "is %d bytes in Base64, over the %d allowed", n, limit)
	}
	timeout, e := c.P.Int("Timeout", defaultCommandTimeout)
	if e != nil {
		return nil, e
	}
	list, e := c.instancesParam(maxCommandInstances)
	if e != nil {
		return nil, e
	}
	for _, in := range list {
		if st := c.status(in); st != "Running" {
			return nil, core.ErrStatus("The current status of instance %s (%s) does not support RunCommand: Cloud Assistant runs commands on Running instances.", in.ID, st)
		}
	}
	inv := &invocation{ID: c.Env.NewID("t"), CommandID: c.Env.NewID("c"), Region: c.Region, Name: c.P["Name"], Content: content,
		Timeout: timeout, Created: c.Now.UnixNano(), Results: map[string]*commandResult{}}
	for _, in := range list {
		inv.Results[in.ID] = &commandResult{}
		inv.Instances = append(inv.Instances, in.ID)
	}
	if c.st.Invocations == nil {
		c.st.Invocations = map[string]*invocation{}
	}
	c.st.Invocations[inv.ID] = inv
	return &ecssdk.RunCommandResponse{RequestId: c.ReqID, CommandId: inv.CommandID, InvokeId: inv.ID}, nil
}

// deliveryLimit: a command no guest has taken within a minute is Aborted ("make sure that the
// instance is in the Running state and the command can be sent to the instance within 1 minute",
// DescribeInvocations reference, InvocationStatus Aborted; ErrorCode DeliveryTimeout). An
// emulator without a guest model beside it (no node agent) answers this for every command.
const deliveryLimit = time.Minute

// resultStatus is an instance's InvocationStatus and ErrorCode (DescribeInvocationResults
// reference: Running, Success, Failed, Aborted; ErrorCode ExitCodeNonzero for a script that exits
// with a code other than 0, ExecutionTimeout for one that outlives Timeout, DeliveryTimeout for
// one never delivered).
func (inv *invocation) resultStatus(r *commandResult, now time.Time) (status, errorCode string) {
	switch {
	case r.Finished == 0 && r.Delivered == 0 && now.UnixNano()-inv.Created > int64(deliveryLimit):
		return "Aborted", "DeliveryTimeout"
	case r.Finished != 0 && r.ErrorCode != "":
		return "Failed", r.ErrorCode
	case r.Finished != 0 && r.ExitCode != 0:
		return "Failed", "ExitCodeNonzero"
	case r.Finished != 0:
		return "Success", ""
	case now.UnixNano()-inv.Created > int64(time.Duration(inv.Timeout)*time.Second):
		return "Failed", "ExecutionTimeout"
	}
	return "Running", ""
}

func describeInvocationResults(c *call) (any, *core.Error) {
	number, size, e := c.page(50)
	if e != nil {
		return nil, e
	}
	encoding := c.P["ContentEncoding"]
	if encoding == "" {
		encoding = "Base64" // the reference's default for Output
	}
	if encoding != "Base64" && encoding != "PlainText" {
		return nil, core.ErrInvalid("ContentEncoding", "must be PlainText or Base64")
	}
	var all []ecssdk.InvocationResult
	for _, inv := range c.sortedInvocations(c.Region) {
		if (c.P["InvokeId"] != "" && inv.ID != c.P["InvokeId"]) || (c.P["CommandId"] != "" && inv.CommandID != c.P["CommandId"]) {
			continue
		}
		for _, id := range inv.Instances {
			if c.P["InstanceId"] != "" && id != c.P["InstanceId"] {
				continue
			}
			r := inv.Results[id]
			status, code := inv.resultStatus(r, c.Now)
			if want := c.P["InvokeRecordStatus"]; want != "" && want != status {
				continue
			}
			out := r.Output
			if encoding == "Base64" {
				out = base64.StdEncoding.EncodeToString([]byte(out))
			}
			res := ecssdk.InvocationResult{InvokeId: inv.ID, CommandId: inv.CommandID, InstanceId: id, InvocationStatus: status,
				InvokeRecordStatus: status, ErrorCode: code, Output: out, Repeats: 1, Username: "root",
				StartTime: time.Unix(0, inv.Created).UTC().Format(time.RFC3339), Tags: ecssdk.TagsInDescribeInvocationResults{Tag: []ecssdk.Tag{}}}
			if status != "Running" {
				res.ExitCode = r.ExitCode
				res.FinishedTime = time.Unix(0, max(r.Finished, inv.Created)).UTC().Format(time.RFC3339)
				res.StopTime = res.FinishedTime
			}
			all = append(all, res)
		}
	}
	if c.P["InvokeId"] != "" && c.st.Invocations[c.P["InvokeId"]] == nil {
		return nil, core.ErrNotFound("InvalidInvokeId.NotFound", c.P["InvokeId"])
	}
	lo, hi := core.PageBounds(len(all), number, size)
	page := append([]ecssdk.InvocationResult{}, all[lo:hi]...)
	return &ecssdk.DescribeInvocationResultsResponse{RequestId: c.ReqID, Invocation: ecssdk.Invocation{
		PageNumber: int64(number), PageSize: int64(size), TotalCount: int64(len(all)),
		InvocationResults: ecssdk.InvocationResults{InvocationResult: page},
		Tags:              ecssdk.TagsInDescribeInvocations{Tag: []ecssdk.Tag{}},
		InvokeInstances:   ecssdk.InvokeInstancesInDescribeSendFileResults{InvokeInstance: []ecssdk.InvokeInstance{}},
	}}, nil
}

// sortedInvocations are the invocations of region ("" for every region), oldest first.
func (c *call) sortedInvocations(region string) []*invocation {
	var out []*invocation
	for _, inv := range c.st.Invocations {
		if region == "" || inv.Region == region {
			out = append(out, inv)
		}
	}
	slices.SortFunc(out, func(a, b *invocation) int {
		return cmp.Or(cmp.Compare(a.Created, b.Created), strings.Compare(a.ID, b.ID))
	})
	return out
}

// PendingCommand is a command a guest has yet to run: which invocation, on which instance, the
// script.
type PendingCommand struct {
	InvokeID, InstanceID, Content string
}

// PendingCommands lists the commands still running on live Running instances, oldest first, for
// a model of the guest. One whose instance has been released or has stopped meanwhile is
// finished with the ErrorCode the vendor gives it: InstanceReleased ("The instance is released
// during command execution") or InstanceNotRunning (DescribeInvocations reference,
// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinvocations).
// changed reports whether any command's record changed (finished so, or delivered now).
func PendingCommands(cc *core.Call) (out []PendingCommand, changed bool) {
	c := newCall(cc)
	for _, inv := range c.sortedInvocations("") {
		for _, id := range inv.Instances {
			r := inv.Results[id]
			if status, _ := inv.resultStatus(r, c.Now); status != "Running" {
				continue
			}
			in := c.st.Instances[id]
			switch {
			case in == nil:
				r.Finished, r.ErrorCode, r.ExitCode = c.Now.UnixNano(), "InstanceReleased", -1
				changed = true
			case c.status(in) != "Running":
				r.Finished, r.ErrorCode, r.ExitCode = c.Now.UnixNano(), "InstanceNotRunning", -1
				changed = true
			default:
				if r.Delivered == 0 {
					r.Delivered, changed = c.Now.UnixNano(), true
				}
				out = append(out, PendingCommand{InvokeID: inv.ID, InstanceID: id, Content: inv.Content})
			}
		}
	}
	return out, changed
}

// FinishCommand records a guest's outcome of a command: its exit code and output. Reports
// whether there was such a running command.
func FinishCommand(cc *core.Call, invokeID, instanceID string, exitCode int, output string) bool {
	c := newCall(cc)
	inv := c.st.Invocations[invokeID]
	if inv == nil || inv.Results[instanceID] == nil {
		return false
	}
	r := inv.Results[instanceID]
	if status, _ := inv.resultStatus(r, c.Now); status != "Running" {
		return false
	}
	r.Finished, r.ExitCode, r.Output = c.Now.UnixNano(), int64(exitCode), output
	return true
}
