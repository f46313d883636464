package cloud

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// StopInstancesGracefully stops the Running instances among ids normally (StopInstances with
// ForceStop false, 100 a call), which shuts their operating systems down as a power button would
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-stopinstances):
// a node's kubelet then runs its graceful node shutdown, terminating its pods before the machine
// goes. It waits, at most timeout, until each of them (and each one already Stopping) is Stopped
// or gone, and answers those still not Stopped when the time ran out: the caller deletes them all
// the same, and says so. Instances Pending or Starting are not stopped (the vendor stops only
// Running ones; they run no pods yet), nor waited for.
func (c *Client) StopInstancesGracefully(ctx context.Context, ids []string, timeout time.Duration) (late []string, err error) {
	got, err := c.DescribeInstancesByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	var running, waiting []string
	for _, in := range got {
		switch in.Status {
		case "Running":
			running = append(running, in.ID)
			waiting = append(waiting, in.ID)
		case "Stopping":
			waiting = append(waiting, in.ID)
		}
	}
	for chunk := range slices.Chunk(running, MaxBatch) {
		if err := c.stopChunk(ctx, slices.Clone(chunk)); err != nil {
			return nil, err
		}
	}
	if len(waiting) == 0 {
		return nil, nil
	}
	tflog.Info(ctx, fmt.Sprintf("stopping %d nodes normally before they are deleted (at most %s), so that their pods are terminated gracefully", len(waiting), timeout))
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = c.waitInstances(wctx, waiting, "stop", func(got []Instance, _ []string) ([]string, error) {
		var left []string
		for _, in := range got {
			if in.Status != "Stopped" {
				left = append(left, in.ID)
			}
		}
		return left, nil
	})
	if err == nil || ctx.Err() != nil || !errors.Is(wctx.Err(), context.DeadlineExceeded) {
		return nil, err
	}
	now, err := c.DescribeInstancesByID(ctx, waiting)
	if err != nil {
		return nil, err
	}
	for _, in := range now {
		if in.Status != "Stopped" {
			late = append(late, in.ID)
		}
	}
	return late, nil
}

// stopChunk stops up to 100 Running instances normally. One that left Running or went meanwhile
// fails the whole call (IncorrectInstanceStatus, not found): then the chunk is read again and the
// call sent again for those still Running, and one no longer Running is left as it is. A round
// that leaves as many Running as before (the service refuses one that still runs) ends it: the
// wait names those that do not stop.
func (c *Client) stopChunk(ctx context.Context, ids []string) error {
	for {
		req := ecs.CreateStopInstancesRequest()
		req.RegionId = c.region
		req.InstanceId = &ids
		req.ForceStop = requests.NewBoolean(false)
		err := c.Call(ctx, req, ecs.CreateStopInstancesResponse())
		if ErrorCode(err) != "IncorrectInstanceStatus" && !IsNotFound(err) {
			return err
		}
		got, err := c.DescribeInstancesByID(ctx, ids)
		if err != nil {
			return err
		}
		var running []string
		for _, in := range got {
			if in.Status == "Running" {
				running = append(running, in.ID)
			}
		}
		if len(running) == 0 || len(running) == len(ids) {
			return nil
		}
		ids = running
	}
}

// LateStopWarning says which instances were deleted before they had stopped.
func LateStopWarning(late []string, timeout time.Duration) string {
	return fmt.Sprintf("%d nodes did not stop within %s of a normal stop and were deleted running: %s. Pods still on them were killed "+
		"without a graceful shutdown; the replacements of Job and workload pods are scheduled as usual", len(late), timeout, strings.Join(late, ", "))
}
