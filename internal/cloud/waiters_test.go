package cloud

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/nas"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
)

// stuckAnswers answers every describe call with an object that exists but never reaches the state
// a waiter wants: VPCs and vSwitches stay Pending, file systems Pending, mount targets Pending,
// instances Pending, and the bucket stays there.
func stuckAnswers(w http.ResponseWriter, r *http.Request, action string, hit int) {
	switch action {
	case "DescribeVpcs":
		writeJSON(w, vpcAnswer("vpc-1", "Pending"))
	case "DescribeVSwitches":
		writeJSON(w, &vpc.DescribeVSwitchesResponse{RequestId: "req-sw", TotalCount: 1, PageNumber: 1, PageSize: 50,
			VSwitches: vpc.VSwitches{VSwitch: []vpc.VSwitch{{VSwitchId: "vsw-1", VpcId: "vpc-1", Status: "Pending"}}}})
	case "DescribeFileSystems":
		writeJSON(w, &nas.DescribeFileSystemsResponse{RequestId: "req-fs", TotalCount: 1, PageNumber: 1, PageSize: 10,
			FileSystems: nas.FileSystemsInDescribeFileSystems{FileSystem: []nas.FileSystem{{FileSystemId: "fs-1", Status: "Pending"}}}})
	case "DescribeMountTargets":
		writeJSON(w, &nas.DescribeMountTargetsResponse{RequestId: "req-mt", TotalCount: 1, PageNumber: 1, PageSize: 100,
			MountTargets: nas.MountTargetsInDescribeMountTargets{MountTarget: []nas.MountTarget{{MountTargetDomain: "mt-1.nas.test", Status: "Pending"}}}})
	case "DescribeInstances":
		writeJSON(w, &ecs.DescribeInstancesResponse{RequestId: "req-in", TotalCount: 2, PageNumber: 1, PageSize: 100,
			Instances: ecs.InstancesInDescribeInstances{Instance: []ecs.Instance{
				{InstanceId: "i-1", Status: "Pending"}, {InstanceId: "i-2", Status: "Starting"}}}})
	case "oss:bucketInfo":
		writeBucketInfo(w, "ckpt")
	default:
		writeRPCError(w, r, http.StatusBadRequest, "InvalidAction.NotFound", "unexpected action "+action, "req-x")
	}
}

// waiterCase is one Wait* function, the action it polls, and the words its timeout error must
// contain to say what it waited for. The instance waiters' errors must also say how many nodes
// were left, and name the first (instanceProgress).
type waiterCase struct {
	name   string
	action string
	wait   func(ctx context.Context, c *Client) error
	want   string
}

// instanceProgress is what the instance waiters' errors say of the nodes left.
const instanceProgress = "2 of 2 left (i-1, i-2..."

var waiterCases = []waiterCase{
	{"WaitVPCAvailable", "DescribeVpcs", func(ctx context.Context, c *Client) error { _, err := c.WaitVPCAvailable(ctx, "vpc-1"); return err },
		"waiting for VPC vpc-1 to become Available"},
	{"WaitVPCDeleted", "DescribeVpcs", func(ctx context.Context, c *Client) error { return c.WaitVPCDeleted(ctx, "vpc-1") },
		"waiting for VPC vpc-1 to be deleted"},
	{"WaitVSwitchAvailable", "DescribeVSwitches", func(ctx context.Context, c *Client) error {
		_, err := c.WaitVSwitchAvailable(ctx, "vsw-1")
		return err
	}, "waiting for vSwitch vsw-1 to become Available"},
	{"WaitVSwitchDeleted", "DescribeVSwitches", func(ctx context.Context, c *Client) error { return c.WaitVSwitchDeleted(ctx, "vsw-1") },
		"waiting for vSwitch vsw-1 to be deleted"},
	{"WaitFileSystemRunning", "DescribeFileSystems", func(ctx context.Context, c *Client) error {
		_, err := c.WaitFileSystemRunning(ctx, "fs-1")
		return err
	}, "waiting for file system fs-1 to be Running"},
	{"WaitFileSystemDeleted", "DescribeFileSystems", func(ctx context.Context, c *Client) error { return c.WaitFileSystemDeleted(ctx, "fs-1") },
		"waiting for file system fs-1 to be deleted"},
	{"WaitMountTargetActive", "DescribeMountTargets", func(ctx context.Context, c *Client) error {
		_, err := c.WaitMountTargetActive(ctx, "fs-1", "mt-1.nas.test")
		return err
	}, "waiting for mount target mt-1.nas.test to be Active"},
	{"WaitInstancesRunning", "DescribeInstances", func(ctx context.Context, c *Client) error {
		_, err := c.WaitInstancesRunning(ctx, []string{"i-1", "i-2"})
		return err
	}, "waiting for 2 nodes to reach Running"},
	{"WaitInstancesGone", "DescribeInstances", func(ctx context.Context, c *Client) error { return c.WaitInstancesGone(ctx, []string{"i-1", "i-2"}) },
		"waiting for 2 nodes to be deleted"},
	{"WaitBucketDeleted", "oss:bucketInfo", func(ctx context.Context, c *Client) error { return c.WaitBucketDeleted(ctx, "ckpt") },
		"waiting for bucket ckpt to be deleted"},
}

// A waiter whose object never reaches the state polls until its context's deadline, then returns
// an error that says what it waited for and has the deadline as its cause.
//
// The deadline must fall while the waiter sleeps between looks (TestWaitersDeadlineDuringCall
// covers the other case). The poll-based waiters wrap any error, whatever their sleeps; the instance
// waiters wrap only a sleep's error, so for them one look is followed by a sleep (1 s to 2 s)
// that surely spans the deadline.
func TestWaitersStopAtDeadline(t *testing.T) {
	for _, tc := range waiterCases {
		t.Run(tc.name, func(t *testing.T) {
			fastWaits(t)
			minLooks := 2
			if strings.HasPrefix(tc.name, "WaitInstances") {
				instancePollMin, instancePollMax = 2*time.Second, 2*time.Second
				minLooks = 1
			}
			api := newTestAPI(t, stuckAnswers)
			c := api.client(t, 0)
			ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := tc.wait(ctx, c)
			took := time.Since(start)
			if err == nil {
				t.Fatal("the waiter returned without error for an object that never got there")
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("cause is not the deadline: %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error does not say what it waited for (%q): %v", tc.want, err)
			}
			if strings.HasPrefix(tc.name, "WaitInstances") && !strings.Contains(err.Error(), instanceProgress) {
				t.Errorf("error does not say which nodes were left (%q): %v", instanceProgress, err)
			}
			// It looked, and kept looking, rather than giving up or hanging on the first look.
			if n := api.hitsOf(tc.action); n < minLooks {
				t.Errorf("%s was asked %d times, want at least %d", tc.action, n, minLooks)
			}
			// Coarse bound: it returned because of the deadline, not long after it.
			if took > 10*time.Second {
				t.Errorf("returned %v after a 150ms deadline", took)
			}
		})
	}
}

// When the deadline passes while a describe call is on the wire (a slow API), the waiter's error
// still says what it waited for.
func TestWaitersDeadlineDuringCall(t *testing.T) {
	fastWaits(t)
	for _, tc := range waiterCases {
		t.Run(tc.name, func(t *testing.T) {
			api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
				if hit == 1 {
					stuckAnswers(w, r, action, hit)
					return
				}
				// Every later look hangs until the client gives up.
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
			})
			c := api.client(t, 0)
			ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := tc.wait(ctx, c)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("cause is not the deadline: %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error does not say what it waited for (%q): %v", tc.want, err)
			}
			if strings.HasPrefix(tc.name, "WaitInstances") && !strings.Contains(err.Error(), instanceProgress) {
				t.Errorf("error does not say which nodes were left (%q): %v", instanceProgress, err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("returned %v after a 150ms deadline: the call did not honour the context", took)
			}
		})
	}
}

// A waiter whose object is already there returns at once with it, after one look.
func TestWaitersReturnOnceReached(t *testing.T) {
	api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
		writeJSON(w, vpcAnswer("vpc-1", VPCStatusAvailable))
	})
	got, err := api.client(t, 0).WaitVPCAvailable(context.Background(), "vpc-1")
	if err != nil || got == nil || got.Status != VPCStatusAvailable {
		t.Fatalf("WaitVPCAvailable = %+v, %v", got, err)
	}
	if n := api.hitsOf("DescribeVpcs"); n != 1 {
		t.Errorf("DescribeVpcs asked %d times, want 1", n)
	}
}

// A waiter stops at the first error that is not "keep waiting", and says what it was waiting for.
func TestWaitersStopOnAPIError(t *testing.T) {
	fastWaits(t)
	api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
		if hit <= 2 {
			stuckAnswers(w, r, action, hit)
			return
		}
		writeRPCError(w, r, http.StatusForbidden, "Forbidden.RAM", "not authorized", "req-ram")
	})
	_, err := api.client(t, 0).WaitVPCAvailable(context.Background(), "vpc-1")
	if !IsCode(err, "Forbidden.RAM") {
		t.Fatalf("want Forbidden.RAM, got %v", err)
	}
	if !strings.Contains(err.Error(), "waiting for VPC vpc-1 to become Available") {
		t.Errorf("error does not say what it waited for: %v", err)
	}
	if n := api.hitsOf("DescribeVpcs"); n != 3 {
		t.Errorf("DescribeVpcs asked %d times, want 3", n)
	}
}
