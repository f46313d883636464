package cloud

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// ECS batch limits: RunInstances Amount, DescribeInstances InstanceIds and MaxResults, and
// DeleteInstances InstanceId.N all stop at 100; TagResources takes 50 resources a call.
const (
	MaxBatch          = 100
	maxTagResourceIDs = 50
)

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
	Tags            map[string]string
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
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	filter := make([]ecs.DescribeInstancesTag, 0, len(keys))
	for _, k := range keys {
		filter = append(filter, ecs.DescribeInstancesTag{Key: k, Value: tags[k]})
	}
	var out []Instance
	next := ""
	for {
		req := ecs.CreateDescribeInstancesRequest()
		req.RegionId = c.region
		req.Tag = &filter
		req.MaxResults = requests.NewInteger(MaxBatch)
		req.NextToken = next
		resp := ecs.CreateDescribeInstancesResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, err
		}
		for i := range resp.Instances.Instance {
			out = append(out, instanceFromSDK(&resp.Instances.Instance[i]))
		}
		if resp.NextToken == "" || len(resp.Instances.Instance) == 0 {
			break
		}
		next = resp.NextToken
	}
	SortInstances(out)
	return out, nil
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

// RunInstances sends one RunInstances call (Amount <= 100) and returns the ids it created. The
// caller owns the ClientToken: the same token on a retried call returns the same instances
// instead of new ones, which is what makes an interrupted batch safe to resend.
func (c *Client) RunInstances(ctx context.Context, req *ecs.RunInstancesRequest) ([]string, error) {
	if req.ClientToken == "" {
		return nil, fmt.Errorf("RunInstances without a ClientToken: refusing, a retry could double the pool")
	}
	req.RegionId = c.region
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
		for {
			req := ecs.CreateDeleteInstancesRequest()
			req.RegionId = c.region
			req.InstanceId = &chunk
			req.Force = requests.NewBoolean(true)
			err := c.Call(ctx, req, ecs.CreateDeleteInstancesResponse(), RetryOn("IncorrectInstanceStatus"))
			if err == nil {
				break
			}
			if !IsNotFound(err) {
				return err
			}
			// One missing id fails the whole call: drop the ones that are gone and go again.
			alive, derr := c.DescribeInstancesByID(ctx, chunk)
			if derr != nil {
				return derr
			}
			chunk = chunk[:0]
			for _, in := range alive {
				chunk = append(chunk, in.ID)
			}
			if len(chunk) == 0 {
				break
			}
		}
	}
	return nil
}

// TagInstances sets tags on instances, 50 per call.
func (c *Client) TagInstances(ctx context.Context, ids []string, tags map[string]string) error {
	if len(ids) == 0 || len(tags) == 0 {
		return nil
	}
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	list := make([]ecs.TagResourcesTag, 0, len(keys))
	for _, k := range keys {
		list = append(list, ecs.TagResourcesTag{Key: k, Value: tags[k]})
	}
	for chunk := range slices.Chunk(ids, maxTagResourceIDs) {
		chunk := slices.Clone(chunk)
		req := ecs.CreateTagResourcesRequest()
		req.RegionId = c.region
		req.ResourceType = "instance"
		req.ResourceId = &chunk
		req.Tag = &list
		if err := c.Call(ctx, req, ecs.CreateTagResourcesResponse()); err != nil {
			return err
		}
	}
	return nil
}

// Poll bounds for instance waiters: quick first looks (instances often boot in seconds), then
// backing off with jitter so a thousand-node wait does not hammer the API.
var (
	instancePollMin = 500 * time.Millisecond
	instancePollMax = 5 * time.Second
)

// WaitInstancesRunning polls ids (100 per call) until every one is Running, logging progress.
// Instances the service does not show yet (eventual consistency right after RunInstances) are
// waited for, not treated as gone.
func (c *Client) WaitInstancesRunning(ctx context.Context, ids []string) ([]Instance, error) {
	pending := slices.Clone(ids)
	done := map[string]Instance{}
	for attempt := 0; ; attempt++ {
		got, err := c.DescribeInstancesByID(ctx, pending)
		if err != nil {
			return nil, err
		}
		for _, in := range got {
			if in.Status == "Running" {
				done[in.ID] = in
			}
		}
		pending = slices.DeleteFunc(pending, func(id string) bool { _, ok := done[id]; return ok })
		tflog.Info(ctx, fmt.Sprintf("%d/%d nodes running", len(done), len(ids)))
		if len(pending) == 0 {
			out := make([]Instance, 0, len(done))
			for _, in := range done {
				out = append(out, in)
			}
			SortInstances(out)
			return out, nil
		}
		if err := sleep(ctx, backoff(instancePollMin, instancePollMax, attempt)); err != nil {
			return nil, fmt.Errorf("waiting for %d of %d nodes to reach Running (%s...): %w", len(pending), len(ids), strings.Join(pending[:min(3, len(pending))], ", "), err)
		}
	}
}

// WaitInstancesGone polls until none of ids exists any more.
func (c *Client) WaitInstancesGone(ctx context.Context, ids []string) error {
	pending := slices.Clone(ids)
	for attempt := 0; ; attempt++ {
		got, err := c.DescribeInstancesByID(ctx, pending)
		if err != nil {
			return err
		}
		pending = pending[:0]
		for _, in := range got {
			pending = append(pending, in.ID)
		}
		if len(pending) == 0 {
			return nil
		}
		tflog.Info(ctx, fmt.Sprintf("%d nodes still deleting", len(pending)))
		if err := sleep(ctx, backoff(instancePollMin, instancePollMax, attempt)); err != nil {
			return fmt.Errorf("waiting for %d nodes to be deleted: %w", len(pending), err)
		}
	}
}

// HourlyPrice asks DescribePrice what amount instances of a type cost per hour.
func (c *Client) HourlyPrice(ctx context.Context, instanceType, zoneID, spotStrategy string, amount int) (float64, string, error) {
	req := ecs.CreateDescribePriceRequest()
	req.RegionId = c.region
	req.ResourceType = "instance"
	req.InstanceType = instanceType
	req.ZoneId = zoneID
	req.Amount = requests.NewInteger(amount)
	if spotStrategy != "" {
		req.SpotStrategy = spotStrategy
	}
	resp := ecs.CreateDescribePriceResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return 0, "", err
	}
	return resp.PriceInfo.Price.TradePrice, resp.PriceInfo.Price.Currency, nil
}

// RunConcurrently runs fn over items with at most workers at once and returns the first error
// after all have finished. The shared rate limiter still paces the calls; the point is to keep
// several batches in flight while others wait on the network.
func RunConcurrently[T any](items []T, workers int, fn func(T) error) error {
	if workers < 1 {
		workers = 1
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		slots    = make(chan struct{}, workers)
	)
	for _, item := range items {
		wg.Add(1)
		slots <- struct{}{}
		go func(item T) {
			defer wg.Done()
			defer func() { <-slots }()
			if err := fn(item); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}(item)
	}
	wg.Wait()
	return firstErr
}
