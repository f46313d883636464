package cloud

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

// Cloud Assistant runs a shell script on a running instance through the client the vendor's
// public Linux images carry (https://www.alibabacloud.com/help/en/ecs/user-guide/overview-10):
// the provider's one way into a cluster whose API it cannot reach (the API server is behind an
// internal load balancer). RunCommand starts it; DescribeInvocationResults reads its outcome
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-runcommand,
// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinvocationresults).

// CommandResult is a command's outcome on one instance.
type CommandResult struct {
	InvokeID string
	// Status is the instance's InvocationStatus: Success, or Failed with ErrorCode (ExitCodeNonzero,
	// ExecutionTimeout, InstanceReleased, ClientNotRunning, ...).
	Status, ErrorCode string
	ExitCode          int64
	Output            string
}

// commandRunning are the InvocationStatus values of a command not yet finished.
var commandRunning = []string{"Pending", "Scheduled", "Running", "Stopping"}

// RunShellScript runs script as root on instance id and waits for its outcome, at most timeout
// (also the command's own Timeout, so the instance stops it then). A script that ran and exited
// with a code other than 0 is a result, not an error: the error is for a call that failed or a
// wait that ended.
func (c *Client) RunShellScript(ctx context.Context, id, name, script string, timeout time.Duration) (CommandResult, error) {
	req := ecs.CreateRunCommandRequest()
	req.RegionId = c.region
	req.Type = "RunShellScript"
	req.Name = name
	req.ContentEncoding = "Base64"
	req.CommandContent = base64.StdEncoding.EncodeToString([]byte(script))
	req.InstanceId = &[]string{id}
	req.Timeout = requests.NewInteger(int(timeout.Seconds()))
	resp := ecs.CreateRunCommandResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return CommandResult{}, fmt.Errorf("running %s on %s with Cloud Assistant: %w", name, id, err)
	}
	// The wait outlives the command's own timeout a little: the vendor reports ExecutionTimeout
	// once it has stopped it.
	ctx, cancel := context.WithTimeout(ctx, timeout+time.Minute)
	defer cancel()
	return waitFor(ctx, waiter[CommandResult]{
		what: fmt.Sprintf("Cloud Assistant command %s (%s) on %s", name, resp.InvokeId, id),
		refresh: func() (CommandResult, string, error) {
			r, err := c.invocationResult(ctx, resp.InvokeId, id)
			return r, r.Status, err
		},
		pending: commandRunning, target: []string{"Success", "Failed", "Error", "Timeout", "Cancelled", "Terminated", "Aborted", "Invalid"},
		interval: instancePollInterval,
	})
}

// invocationResult reads one instance's outcome of an invocation, its output as plain text.
func (c *Client) invocationResult(ctx context.Context, invokeID, id string) (CommandResult, error) {
	req := ecs.CreateDescribeInvocationResultsRequest()
	req.RegionId = c.region
	req.InvokeId = invokeID
	req.InstanceId = id
	req.ContentEncoding = "PlainText"
	resp := ecs.CreateDescribeInvocationResultsResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return CommandResult{}, err
	}
	for _, r := range resp.Invocation.InvocationResults.InvocationResult {
		if r.InstanceId == id {
			return CommandResult{InvokeID: invokeID, Status: r.InvocationStatus, ErrorCode: r.ErrorCode, ExitCode: r.ExitCode, Output: r.Output}, nil
		}
	}
	// Just after RunCommand the result may not be listed yet: still pending.
	return CommandResult{InvokeID: invokeID, Status: "Pending"}, nil
}
