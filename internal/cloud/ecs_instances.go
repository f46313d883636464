package cloud

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// MaxBatch is the ECS batch limit: RunInstances Amount, DescribeInstances InstanceIds and
// MaxResults, and DeleteInstances InstanceId.N all stop at 100. (TagResources takes
// MaxTagResourceIDs.)
const MaxBatch = 100

// Instance is the part of an ECS instance a node pool keeps. A slim copy on purpose: a pool of
// thousands of nodes is refreshed on every plan, and the SDK's struct is several kilobytes.
type Instance struct {
	ID              string
	ZoneID          string
	PrivateIP       string
	Status          string
	InstanceType    string
	ImageID         string
	DeploymentSetID string
	CreationTime    string
	// SpotStrategy is NoSpot for a pay-as-you-go instance.
	SpotStrategy string
	// HostName is the guest's host name, which kubeadm names the node after (lowercased).
	HostName string
	Tags     map[string]string
}

func instanceFromSDK(in *ecs.Instance) Instance {
	out := Instance{
		ID:              in.InstanceId,
		ZoneID:          in.ZoneId,
		Status:          in.Status,
		InstanceType:    in.InstanceType,
		ImageID:         in.ImageId,
		DeploymentSetID: in.DeploymentSetId,
		CreationTime:    in.CreationTime,
		SpotStrategy:    in.SpotStrategy,
		HostName:        in.HostName,
		Tags:            map[string]string{},
	}
	if ips := in.VpcAttributes.PrivateIpAddress.IpAddress; len(ips) > 0 {
		out.PrivateIP = ips[0]
	}
	for _, t := range in.Tags.Tag {
		key, value := t.TagKey, t.TagValue
		if key == "" {
			key, value = t.Key, t.Value
		}
		out.Tags[key] = value
	}
	return out
}

// SortInstances orders instances oldest first (creation time, then id), the order a pool scales
// down from the other end.
func SortInstances(in []Instance) {
	sort.SliceStable(in, func(i, j int) bool {
		if in[i].CreationTime != in[j].CreationTime {
			return in[i].CreationTime < in[j].CreationTime
		}
		return in[i].ID < in[j].ID
	})
}

// ListInstancesByTags returns every instance carrying all the given tags, in pages of 100: a pool
// of N nodes costs N/100 calls, never one per node.
func (c *Client) ListInstancesByTags(ctx context.Context, tags map[string]string) ([]Instance, error) {
	filter := instanceTagFilter(tags)
	out, err := pageTokens(fmt.Sprintf("instances tagged %v", tags), 0, func(token string) ([]Instance, int, string, error) {
		req := ecs.CreateDescribeInstancesRequest()
		req.RegionId = c.region
		req.Tag = &filter
		req.MaxResults = requests.NewInteger(MaxBatch)
		req.NextToken = token
		resp := ecs.CreateDescribeInstancesResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, 0, "", err
		}
		out := make([]Instance, 0, len(resp.Instances.Instance))
		for i := range resp.Instances.Instance {
			out = append(out, instanceFromSDK(&resp.Instances.Instance[i]))
		}
		return out, len(out), resp.NextToken, nil
	})
	if err != nil {
		return nil, err
	}
	SortInstances(out)
	return out, nil
}

func instanceTagFilter(tags map[string]string) []ecs.DescribeInstancesTag {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	filter := make([]ecs.DescribeInstancesTag, 0, len(keys))
	for _, k := range keys {
		filter = append(filter, ecs.DescribeInstancesTag{Key: k, Value: tags[k]})
	}
	return filter
}

// CountInstancesByTags returns how many instances carry all of tags, in one call: the TotalCount
// of a one-instance page (page-number paging; the NextToken mode's count is not documented as
// exact).
func (c *Client) CountInstancesByTags(ctx context.Context, tags map[string]string) (int, error) {
	filter := instanceTagFilter(tags)
	req := ecs.CreateDescribeInstancesRequest()
	req.RegionId = c.region
	req.Tag = &filter
	req.PageNumber = requests.NewInteger(1)
	req.PageSize = requests.NewInteger(1)
	resp := ecs.CreateDescribeInstancesResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return 0, err
	}
	return resp.TotalCount, nil
}

// ErrInstancesStalled is WaitTaggedInstancesGone's answer when the count stopped falling: some
// instance with the tags is not being deleted.
var ErrInstancesStalled = errors.New("instances carrying the tags stopped going")

// WaitTaggedInstancesGone polls the number of instances carrying tags until it is zero: one call a
// round however many there are. When the count has not fallen for stallRounds rounds it returns
// ErrInstancesStalled, so the caller can look for an instance nobody asked to delete.
func (c *Client) WaitTaggedInstancesGone(ctx context.Context, tags map[string]string, stallRounds int) error {
	const deleting, gone = "deleting", "gone"
	last, same := -1, 0
	_, err := waitFor(ctx, waiter[int]{
		what: "the nodes", goal: "be deleted",
		refresh: func() (int, string, error) {
			n, err := c.CountInstancesByTags(ctx, tags)
			switch {
			case err != nil:
				return 0, "", err
			case n == 0:
				return 0, gone, nil
			case n != last:
				last, same = n, 0
			default:
				if same++; same >= stallRounds {
					return n, "", fmt.Errorf("%d nodes left: %w", n, ErrInstancesStalled)
				}
			}
			tflog.Info(ctx, fmt.Sprintf("%d nodes still deleting", n))
			return n, deleting, nil
		},
		pending: []string{deleting}, target: []string{gone},
		interval: instancePollInterval,
		lastSeen: func(n int, _ string) string { return fmt.Sprintf("%d nodes left", n) },
	})
	return err
}

// instancePollInterval is the schedule of the instance waiters: backoff with jitter between
// instancePollMin and instancePollMax.
func instancePollInterval(attempt int) time.Duration {
	return backoff(instancePollMin, instancePollMax, attempt)
}

// DescribeInstancesByID returns the instances among ids that exist, 100 ids a call.
func (c *Client) DescribeInstancesByID(ctx context.Context, ids []string) ([]Instance, error) {
	var out []Instance
	for chunk := range slices.Chunk(ids, MaxBatch) {
		encoded, _ := json.Marshal(chunk)
		req := ecs.CreateDescribeInstancesRequest()
		req.RegionId = c.region
		req.InstanceIds = string(encoded)
		req.MaxResults = requests.NewInteger(MaxBatch)
		resp := ecs.CreateDescribeInstancesResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, err
		}
		for i := range resp.Instances.Instance {
			out = append(out, instanceFromSDK(&resp.Instances.Instance[i]))
		}
	}
	SortInstances(out)
	return out, nil
}

// Disk is one system or data disk of an instance.
type Disk struct {
	Category, PerformanceLevel string
	SizeGiB                    int
}

// RunInstancesInput is one RunInstances call: Amount instances (at most MaxBatch) of one type in
// one zone, taking as few as MinAmount when stock is short.
type RunInstancesInput struct {
	// ClientToken is required: the same token on a retried call returns the same instances
	// instead of new ones, which is what makes an interrupted batch safe to resend.
	ClientToken            string
	InstanceType, ZoneID   string
	ImageID                string
	SecurityGroupID        string
	VSwitchID              string
	Amount, MinAmount      int
	InstanceName, HostName string
	UniqueSuffix           bool
	DeploymentSetID        string
	HPCClusterID           string
	RAMRoleName            string // the instance RAM role, "" for none
	SystemDisk             Disk
	DataDisks              []Disk // deleted with the instance
	SpotStrategy           string // "" for pay-as-you-go
	SpotPriceLimit         float64
	AutoReleaseTime        string // ISO 8601 UTC, "" for none
	// ERDMA adds a second, HighPerformance ENI for eRDMA traffic in the same vSwitch and group.
	ERDMA bool
	// UserData is sent base64-encoded.
	UserData string
	// Tags, in this order (at most MaxTagsPerResource).
	Tags []Tag
}

// Tag is one key and value, where the order of tags matters to a request.
type Tag struct{ Key, Value string }

// RunInstances sends one RunInstances call and returns the ids it created.
func (c *Client) RunInstances(ctx context.Context, in RunInstancesInput) ([]string, error) {
	if in.ClientToken == "" {
		return nil, fmt.Errorf("RunInstances without a ClientToken: refusing, a retry could double the pool")
	}
	req := ecs.CreateRunInstancesRequest()
	req.RegionId = c.region
	req.ClientToken = in.ClientToken
	req.InstanceType = in.InstanceType
	req.ZoneId = in.ZoneID
	req.ImageId = in.ImageID
	req.RamRoleName = in.RAMRoleName
	req.SecurityGroupId = in.SecurityGroupID
	req.VSwitchId = in.VSwitchID
	req.Amount = requests.NewInteger(in.Amount)
	req.MinAmount = requests.NewInteger(in.MinAmount)
	req.InstanceName = in.InstanceName
	req.HostName = in.HostName
	req.UniqueSuffix = requests.NewBoolean(in.UniqueSuffix)
	req.DeploymentSetId = in.DeploymentSetID
	req.HpcClusterId = in.HPCClusterID
	req.SystemDiskCategory = in.SystemDisk.Category
	req.SystemDiskPerformanceLevel = in.SystemDisk.PerformanceLevel
	req.SystemDiskSize = strconv.Itoa(in.SystemDisk.SizeGiB)
	if len(in.DataDisks) > 0 {
		disks := make([]ecs.RunInstancesDataDisk, 0, len(in.DataDisks))
		for _, d := range in.DataDisks {
			disks = append(disks, ecs.RunInstancesDataDisk{Category: d.Category, PerformanceLevel: d.PerformanceLevel, Size: strconv.Itoa(d.SizeGiB), DeleteWithInstance: "true"})
		}
		req.DataDisk = &disks
	}
	if in.SpotStrategy != "" {
		req.SpotStrategy = in.SpotStrategy
		if in.SpotPriceLimit > 0 {
			req.SpotPriceLimit = requests.NewFloat(in.SpotPriceLimit)
		}
	}
	req.AutoReleaseTime = in.AutoReleaseTime
	if in.ERDMA {
		// The primary ENI carries the VPC traffic; a second, HighPerformance one carries eRDMA.
		enis := []ecs.RunInstancesNetworkInterface{{
			VSwitchId: in.VSwitchID, SecurityGroupId: in.SecurityGroupID,
			NetworkInterfaceTrafficMode: "HighPerformance", NetworkCardIndex: "0",
		}}
		req.NetworkInterface = &enis
	}
	if in.UserData != "" {
		req.UserData = base64.StdEncoding.EncodeToString([]byte(in.UserData))
	}
	if len(in.Tags) > MaxTagsPerResource {
		return nil, fmt.Errorf("an instance would carry %d tags, more than the %d ECS allows", len(in.Tags), MaxTagsPerResource)
	}
	tags := make([]ecs.RunInstancesTag, 0, len(in.Tags))
	for _, t := range in.Tags {
		tags = append(tags, ecs.RunInstancesTag{Key: t.Key, Value: t.Value})
	}
	req.Tag = &tags
	resp := ecs.CreateRunInstancesResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	return resp.InstanceIdSets.InstanceIdSet, nil
}

// DeleteInstances force-deletes ids, 100 per call, treating already-gone instances as deleted.
func (c *Client) DeleteInstances(ctx context.Context, ids []string) error {
	for chunk := range slices.Chunk(ids, MaxBatch) {
		chunk := slices.Clone(chunk)
		// One missing id fails the whole call (not found): the refresh then drops the ones that
		// are gone and the next round sends the rest.
		const deleted, someGone = "deleted", "some already gone"
		_, err := waitFor(ctx, waiter[struct{}]{
			what: fmt.Sprintf("%d instances", len(chunk)), goal: "be deleted",
			refresh: func() (struct{}, string, error) {
				req := ecs.CreateDeleteInstancesRequest()
				req.RegionId = c.region
				req.InstanceId = &chunk
				req.Force = requests.NewBoolean(true)
				err := c.Call(ctx, req, ecs.CreateDeleteInstancesResponse(), RetryOn("IncorrectInstanceStatus"))
				if err == nil {
					return struct{}{}, deleted, nil
				}
				if !IsNotFound(err) {
					return struct{}{}, "", serviceAnswer{err}
				}
				alive, err := c.DescribeInstancesByID(ctx, chunk)
				if err != nil {
					return struct{}{}, "", serviceAnswer{err}
				}
				chunk = chunk[:0]
				for _, in := range alive {
					chunk = append(chunk, in.ID)
				}
				if len(chunk) == 0 {
					return struct{}{}, deleted, nil
				}
				return struct{}{}, someGone, nil
			},
			pending: []string{someGone}, target: []string{deleted},
		})
		var final serviceAnswer
		if errors.As(err, &final) {
			return final.err // the service's own answer, as before
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// instanceFailed are the ECS instance states a new instance does not leave for Running by
// itself: someone stopped it (the Status values of DescribeInstances are Pending, Running,
// Starting, Stopping and Stopped,
// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeinstances).
var instanceFailed = []string{"Stopping", "Stopped"}

// WaitInstancesRunning polls ids until every one is Running, logging progress, and returns them
// as last seen. Instances the service does not show yet (eventual consistency right after
// RunInstances) are waited for, not treated as gone; one Stopping or Stopped fails the wait at
// once (a *StateError).
func (c *Client) WaitInstancesRunning(ctx context.Context, ids []string) ([]Instance, error) {
	done := map[string]Instance{}
	err := c.waitInstances(ctx, ids, "reach Running", func(got []Instance, chunk []string) ([]string, error) {
		for _, in := range got {
			if in.Status == "Running" {
				done[in.ID] = in
			}
			if slices.Contains(instanceFailed, in.Status) {
				return nil, &StateError{What: "instance " + in.ID, State: in.Status, Want: []string{"Running"}, Failed: true}
			}
		}
		return slices.DeleteFunc(slices.Clone(chunk), func(id string) bool { _, ok := done[id]; return ok }), nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Instance, 0, len(done))
	for _, in := range done {
		out = append(out, in)
	}
	SortInstances(out)
	return out, nil
}

// WaitInstancesGone polls until none of ids exists any more.
func (c *Client) WaitInstancesGone(ctx context.Context, ids []string) error {
	return c.waitInstances(ctx, ids, "be deleted", func(got []Instance, _ []string) ([]string, error) {
		left := make([]string, 0, len(got))
		for _, in := range got {
			left = append(left, in.ID)
		}
		return left, nil
	})
}

// waitInstances polls ids, one DescribeInstances of up to 100 ids (a chunk) at a time, until
// unfinished, given a chunk's answer, leaves none of it. Each round goes through the chunks in
// order and stops at the first one with an id not finished yet: the nodes of one pool boot (or
// go) together, so while the first chunk is not done the others are hardly worth a call. A wait
// of N nodes thus costs about N/100 calls plus one per round, not N/100 per round. An error from
// unfinished (an instance in a failed state) ends the wait.
func (c *Client) waitInstances(ctx context.Context, ids []string, goal string, unfinished func(got []Instance, chunk []string) ([]string, error)) error {
	chunks := slices.Collect(slices.Chunk(slices.Clone(ids), MaxBatch))
	left := func() int {
		n := 0
		for _, ch := range chunks {
			n += len(ch)
		}
		return n
	}
	// progress says what is awaited: a deadline that passes mid-call otherwise reads like a
	// failed describe.
	progress := func() string {
		return fmt.Sprintf("%d of %d left (%s...)", left(), len(ids), strings.Join(chunks[0][:min(3, len(chunks[0]))], ", "))
	}
	const waiting, done = "waiting", "done"
	_, err := waitFor(ctx, waiter[struct{}]{
		what: fmt.Sprintf("%d nodes", len(ids)), goal: goal,
		refresh: func() (struct{}, string, error) {
			for len(chunks) > 0 {
				got, err := c.DescribeInstancesByID(ctx, chunks[0])
				if err != nil {
					return struct{}{}, "", fmt.Errorf("%s: %w", progress(), err)
				}
				rest, err := unfinished(got, chunks[0])
				if err != nil {
					return struct{}{}, "", err
				}
				if chunks[0] = rest; len(chunks[0]) > 0 {
					tflog.Info(ctx, fmt.Sprintf("%d/%d nodes yet to %s", left(), len(ids), goal))
					return struct{}{}, waiting, nil
				}
				chunks = chunks[1:]
			}
			return struct{}{}, done, nil
		},
		pending: []string{waiting}, target: []string{done},
		interval: instancePollInterval,
		lastSeen: func(struct{}, string) string { return progress() },
	})
	return err
}

// UserData is the user data ECS holds for an instance (DescribeUserData), decoded from Base64:
// what the instance ran at its first boot. Empty when the instance has none.
func (c *Client) UserData(ctx context.Context, instanceID string) (string, error) {
	req := ecs.CreateDescribeUserDataRequest()
	req.RegionId = c.region
	req.InstanceId = instanceID
	resp := ecs.CreateDescribeUserDataResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return "", err
	}
	raw, err := base64.StdEncoding.DecodeString(resp.UserData)
	if err != nil {
		return "", fmt.Errorf("the user data of %s is not Base64: %w", instanceID, err)
	}
	return string(raw), nil
}

// ConsoleOutput is the recent output of an instance's serial console (GetInstanceConsoleOutput,
// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-getinstanceconsoleoutput),
// decoded from Base64: where the node bootstrap reports its phases (bootstrap.ParseConsole reads
// them), so a caller with API credentials only tells a joined node from one failed at a phase.
// RemoveSymbols drops the terminal escape characters, which a parser does not want.
func (c *Client) ConsoleOutput(ctx context.Context, instanceID string) (string, error) {
	req := ecs.CreateGetInstanceConsoleOutputRequest()
	req.RegionId = c.region
	req.InstanceId = instanceID
	req.RemoveSymbols = "true"
	resp := ecs.CreateGetInstanceConsoleOutputResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return "", err
	}
	raw, err := base64.StdEncoding.DecodeString(resp.ConsoleOutput)
	if err != nil {
		return "", fmt.Errorf("the console output of %s is not Base64: %w", instanceID, err)
	}
	return string(raw), nil
}
