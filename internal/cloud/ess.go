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

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"
)

// Auto Scaling (ESS API 2014-08-28): the scaling group behind an autoscaling node pool, its
// scaling configuration (the pool's launch settings) and the calls that size it. The Kubernetes
// Cluster Autoscaler sizes the group itself; the provider creates it, keeps its bounds and launch
// settings, and reads it.

// Scaling group lifecycle states.
const (
	ScalingGroupActive   = "Active"
	ScalingGroupInactive = "Inactive"
	ScalingGroupDeleting = "Deleting"
)

// Scaling activity states (StatusCode of DescribeScalingActivities,
// https://www.alibabacloud.com/help/en/auto-scaling/developer-reference/api-ess-2014-08-28-describescalingactivities):
// InProgress until the activity ends Successful, Warning (part of the instances), Failed or
// Rejected (nothing had to change, or the group refused).
const (
	ActivityInProgress = "InProgress"
	ActivitySuccessful = "Successful"
	ActivityWarning    = "Warning"
	ActivityFailed     = "Failed"
	ActivityRejected   = "Rejected"
)

// MaxScalingGroupSize is the largest MaxSize a scaling group takes with the default quota
// (MaxSize 0-2000, https://help.aliyun.com/zh/auto-scaling/developer-reference/api-ess-2014-08-28-createscalinggroup).
const MaxScalingGroupSize = 2000

// MaxScalingVSwitches is how many vSwitches one scaling group takes (VSwitchIds.N, N 1-8).
const MaxScalingVSwitches = 8

// MaxScalingInstanceTypes is how many instance types one scaling configuration lists
// (InstanceTypes.N, N 1-10).
const MaxScalingInstanceTypes = 10

// essPageSize is the largest page the ESS Describe* lists give.
const essPageSize = 50

// essInstancePageSize is the largest page DescribeScalingInstances gives.
const essInstancePageSize = 100

// SpotMix is a scaling group's split between pay-as-you-go and spot instances: the first
// OnDemandBase instances are pay-as-you-go, then OnDemandPercentAboveBase percent of the rest.
type SpotMix struct {
	OnDemandBase             int
	OnDemandPercentAboveBase int
	// CompensateWithOnDemand launches pay-as-you-go instances when spot cannot be had.
	CompensateWithOnDemand bool
	// SpotInstanceRemedy replaces spot instances the vendor is about to reclaim.
	SpotInstanceRemedy bool
}

// AllOnDemand is the mix of a group without spot instances.
var AllOnDemand = SpotMix{OnDemandPercentAboveBase: 100}

// ScalingGroupInput is what CreateScalingGroup needs.
type ScalingGroupInput struct {
	Name             string
	MinSize, MaxSize int
	// VSwitchIDs in priority order: the group launches in the first zone that has stock.
	VSwitchIDs []string
	Spot       SpotMix
	Tags       map[string]string
	// ClientToken makes the create idempotent (see CreateOrAdopt).
	ClientToken string
}

// ScalingGroup is what the provider keeps of a scaling group.
type ScalingGroup struct {
	ID, Name, State, VPCID string
	ActiveConfigurationID  string
	MinSize, MaxSize       int
	VSwitchIDs             []string
	Spot                   SpotMix
	// TotalCapacity counts every instance; ActiveCapacity those in service, PendingCapacity
	// those still starting, SpotCapacity the spot ones among them.
	TotalCapacity, ActiveCapacity, PendingCapacity, SpotCapacity int
	Tags                                                         map[string]string
}

// CreateScalingGroup creates an (Inactive) scaling group over the vSwitches, tagged at creation,
// removing the instances of older configurations first, then the oldest.
func (c *Client) CreateScalingGroup(ctx context.Context, in ScalingGroupInput) (string, error) {
	req := ess.CreateCreateScalingGroupRequest()
	req.RegionId = c.region
	req.ClientToken = in.ClientToken
	req.ScalingGroupName = in.Name
	req.MinSize, req.MaxSize = requests.NewInteger(in.MinSize), requests.NewInteger(in.MaxSize)
	vsws := slices.Clone(in.VSwitchIDs)
	req.VSwitchIds = &vsws
	req.MultiAZPolicy = "PRIORITY"
	req.RemovalPolicy1, req.RemovalPolicy2 = "OldestScalingConfiguration", "OldestInstance"
	setSpotMix(in.Spot, &req.OnDemandBaseCapacity, &req.OnDemandPercentageAboveBaseCapacity, &req.CompensateWithOnDemand, &req.SpotInstanceRemedy)
	ts := make([]ess.CreateScalingGroupTag, 0, len(in.Tags))
	for _, k := range sortedKeys(in.Tags) {
		ts = append(ts, ess.CreateScalingGroupTag{Key: k, Value: in.Tags[k]})
	}
	req.Tag = &ts
	resp := ess.CreateCreateScalingGroupResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return "", fmt.Errorf("creating scaling group %q: %w", in.Name, err)
	}
	return resp.ScalingGroupId, nil
}

func setSpotMix(m SpotMix, base, pct *requests.Integer, compensate, remedy *requests.Boolean) {
	*base, *pct = requests.NewInteger(m.OnDemandBase), requests.NewInteger(m.OnDemandPercentAboveBase)
	*compensate, *remedy = requests.NewBoolean(m.CompensateWithOnDemand), requests.NewBoolean(m.SpotInstanceRemedy)
}

func scalingGroupOf(g ess.ScalingGroup) ScalingGroup {
	return ScalingGroup{ID: g.ScalingGroupId, Name: g.ScalingGroupName, State: g.LifecycleState, VPCID: g.VpcId,
		ActiveConfigurationID: g.ActiveScalingConfigurationId, MinSize: g.MinSize, MaxSize: g.MaxSize,
		VSwitchIDs: slices.Clone(g.VSwitchIds.VSwitchId),
		Spot: SpotMix{OnDemandBase: g.OnDemandBaseCapacity, OnDemandPercentAboveBase: g.OnDemandPercentageAboveBaseCapacity,
			CompensateWithOnDemand: g.CompensateWithOnDemand, SpotInstanceRemedy: g.SpotInstanceRemedy},
		TotalCapacity: g.TotalCapacity, ActiveCapacity: g.ActiveCapacity, PendingCapacity: g.PendingCapacity, SpotCapacity: g.SpotCapacity,
		// DescribeScalingGroups answers a group's tags as TagKey/TagValue, a configuration's as Key/Value.
		Tags: tagsOf(g.Tags.Tag, func(t ess.Tag) (string, string) { return t.TagKey, t.TagValue })}
}

// FindScalingGroup returns the scaling group with this id, or an error matching ErrNotFound.
func (c *Client) FindScalingGroup(ctx context.Context, id string) (*ScalingGroup, error) {
	req := ess.CreateDescribeScalingGroupsRequest()
	req.RegionId = c.region
	req.ScalingGroupId = &[]string{id}
	resp := ess.CreateDescribeScalingGroupsResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for _, g := range resp.ScalingGroups.ScalingGroup {
		if g.ScalingGroupId == id {
			out := scalingGroupOf(g)
			return &out, nil
		}
	}
	return nil, notFound(ProductESS, "DescribeScalingGroups", "InvalidScalingGroupId.NotFound", "scaling group "+id)
}

// FindScalingGroupsByTags lists the scaling groups in the region that carry every tag, all
// pages, sorted by id: the finder that adopts a group an interrupted apply left behind.
func (c *Client) FindScalingGroupsByTags(ctx context.Context, tags map[string]string) ([]ScalingGroup, error) {
	ts := make([]ess.DescribeScalingGroupsTag, 0, len(tags))
	for _, k := range sortedKeys(tags) {
		ts = append(ts, ess.DescribeScalingGroupsTag{Key: k, Value: tags[k]})
	}
	out, err := pageNumbers("scaling groups by tags", essPageSize, 0, func(page int) ([]ScalingGroup, int, int, error) {
		req := ess.CreateDescribeScalingGroupsRequest()
		req.RegionId = c.region
		req.PageNumber, req.PageSize = requests.NewInteger(page), requests.NewInteger(essPageSize)
		req.Tag = &ts
		resp := ess.CreateDescribeScalingGroupsResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, 0, 0, fmt.Errorf("listing scaling groups by tags: %w", err)
		}
		var kept []ScalingGroup
		for _, g := range resp.ScalingGroups.ScalingGroup {
			if g.LifecycleState != ScalingGroupDeleting {
				kept = append(kept, scalingGroupOf(g))
			}
		}
		return kept, len(resp.ScalingGroups.ScalingGroup), resp.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ScalingGroupUpdate is what ModifyScalingGroup changes; nil and empty fields stay as they are.
type ScalingGroupUpdate struct {
	Name                  string
	MinSize, MaxSize      *int
	VSwitchIDs            []string
	Spot                  *SpotMix
	ActiveConfigurationID string
}

// ModifyScalingGroup changes a group's bounds, vSwitches, spot mix or active configuration.
func (c *Client) ModifyScalingGroup(ctx context.Context, id string, u ScalingGroupUpdate) error {
	req := ess.CreateModifyScalingGroupRequest()
	req.RegionId = c.region
	req.ScalingGroupId = id
	req.ScalingGroupName = u.Name
	req.ActiveScalingConfigurationId = u.ActiveConfigurationID
	if u.MinSize != nil {
		req.MinSize = requests.NewInteger(*u.MinSize)
	}
	if u.MaxSize != nil {
		req.MaxSize = requests.NewInteger(*u.MaxSize)
	}
	if len(u.VSwitchIDs) > 0 {
		vsws := slices.Clone(u.VSwitchIDs)
		req.VSwitchIds = &vsws
	}
	if u.Spot != nil {
		setSpotMix(*u.Spot, &req.OnDemandBaseCapacity, &req.OnDemandPercentageAboveBaseCapacity, &req.CompensateWithOnDemand, &req.SpotInstanceRemedy)
	}
	// A bound moved past the current size starts an activity; a running one refuses the change
	// for a moment.
	if err := afterActivities(ctx, func() error { return c.Call(ctx, req, ess.CreateModifyScalingGroupResponse()) }); err != nil {
		return fmt.Errorf("modifying scaling group %s: %w", id, err)
	}
	return nil
}

// EnableScalingGroup makes the group Active with this configuration; a group already Active is
// left as it is.
func (c *Client) EnableScalingGroup(ctx context.Context, id, configurationID string) error {
	req := ess.CreateEnableScalingGroupRequest()
	req.RegionId = c.region
	req.ScalingGroupId = id
	req.ActiveScalingConfigurationId = configurationID
	err := c.Call(ctx, req, ess.CreateEnableScalingGroupResponse())
	if IsCode(err, "IncorrectScalingGroupStatus") {
		g, ferr := c.FindScalingGroup(ctx, id)
		if ferr == nil && g.State == ScalingGroupActive {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("enabling scaling group %s: %w", id, err)
	}
	return nil
}

// DeleteScalingGroup deletes a group with every instance it launched and waits until it is
// gone. A group already gone is not an error.
func (c *Client) DeleteScalingGroup(ctx context.Context, id string) error {
	err := DeleteUntilGone(ctx, func() error {
		req := ess.CreateDeleteScalingGroupRequest()
		req.RegionId = c.region
		req.ScalingGroupId = id
		req.ForceDelete = requests.NewBoolean(true)
		return c.Call(ctx, req, ess.CreateDeleteScalingGroupResponse())
	}, "ScalingActivityInProgress", "IncorrectScalingGroupStatus")
	if err != nil {
		return fmt.Errorf("deleting scaling group %s: %w", id, err)
	}
	return waitGone(ctx, "scaling group "+id, func() error {
		_, err := c.FindScalingGroup(ctx, id)
		return err
	})
}

// ScalingConfigurationInput is a pool's launch settings as a scaling configuration.
type ScalingConfigurationInput struct {
	GroupID, Name string
	ImageID       string
	// RAMRoleName is the instances' RAM role ("" for none).
	RAMRoleName string
	// InstanceTypes in priority order: the group falls back to the next on a stock-out.
	InstanceTypes    []string
	SecurityGroupIDs []string
	SystemDisk       Disk
	DataDisks        []Disk // deleted with the instance
	// UserData is sent base64-encoded.
	UserData    string
	KeyPairName string
	// HPCClusterID is the HPC cluster super computing cluster types join ("" for none).
	HPCClusterID string
	// ERDMA adds a secondary, HighPerformance interface for eRDMA traffic in the same security
	// group, as RunInstancesInput.ERDMA does.
	ERDMA bool
	// SpotStrategy is "" or NoSpot for pay-as-you-go, SpotAsPriceGo, or SpotWithPriceLimit with
	// SpotPriceLimit (per hour) for every type.
	SpotStrategy   string
	SpotPriceLimit float64
	// Tags go on every instance the group launches.
	Tags map[string]string
	// ClientToken makes the create idempotent.
	ClientToken string
}

// tagsJSON is the Tags parameter of a scaling configuration: a JSON object.
func tagsJSON(tags map[string]string) string {
	if len(tags) == 0 {
		return ""
	}
	b, _ := json.Marshal(tags) // a map of strings always encodes
	return string(b)
}

// CreateScalingConfiguration creates the group's launch settings and returns their id.
func (c *Client) CreateScalingConfiguration(ctx context.Context, in ScalingConfigurationInput) (string, error) {
	req := ess.CreateCreateScalingConfigurationRequest()
	req.RegionId = c.region
	req.ScalingGroupId = in.GroupID
	req.ScalingConfigurationName = in.Name
	req.ClientToken = in.ClientToken
	req.ImageId = in.ImageID
	req.RamRoleName = in.RAMRoleName
	types, sgs := slices.Clone(in.InstanceTypes), slices.Clone(in.SecurityGroupIDs)
	req.InstanceTypes, req.SecurityGroupIds = &types, &sgs
	req.SystemDiskCategory, req.SystemDiskPerformanceLevel = in.SystemDisk.Category, in.SystemDisk.PerformanceLevel
	req.SystemDiskSize = requests.NewInteger(in.SystemDisk.SizeGiB)
	disks := make([]ess.CreateScalingConfigurationDataDisk, 0, len(in.DataDisks))
	for _, d := range in.DataDisks {
		disks = append(disks, ess.CreateScalingConfigurationDataDisk{Category: d.Category, PerformanceLevel: d.PerformanceLevel,
			Size: strconv.Itoa(d.SizeGiB), DeleteWithInstance: "true"})
	}
	req.DataDisk = &disks
	if in.UserData != "" {
		req.UserData = base64.StdEncoding.EncodeToString([]byte(in.UserData))
	}
	req.KeyPairName = in.KeyPairName
	req.HpcClusterId = in.HPCClusterID
	if in.ERDMA {
		enis := []ess.CreateScalingConfigurationNetworkInterfaces{{InstanceType: "Secondary",
			NetworkInterfaceTrafficMode: "HighPerformance", SecurityGroupIds: &sgs}}
		req.NetworkInterfaces = &enis
	}
	req.Tags = tagsJSON(in.Tags)
	req.SpotStrategy = in.SpotStrategy
	if in.SpotStrategy == "SpotWithPriceLimit" {
		limits := make([]ess.CreateScalingConfigurationSpotPriceLimit, 0, len(types))
		for _, t := range types {
			limits = append(limits, ess.CreateScalingConfigurationSpotPriceLimit{InstanceType: t, PriceLimit: strconv.FormatFloat(in.SpotPriceLimit, 'f', -1, 64)})
		}
		req.SpotPriceLimit = &limits
	}
	resp := ess.CreateCreateScalingConfigurationResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return "", fmt.Errorf("creating the scaling configuration of group %s: %w", in.GroupID, err)
	}
	return resp.ScalingConfigurationId, nil
}

// WaitScalingGroupSettled waits until a group holds at least minimum instances and none is still
// starting (an activity launching them has ended).
// A group whose last activity ended short of the minimum (no stock anywhere, quota) is an error naming
// what the vendor said, not a wait until the timeout.
func (c *Client) WaitScalingGroupSettled(ctx context.Context, id string, minimum int) error {
	// The group's own LifecycleState says nothing of its instances: the states here are the
	// waiter's reading of its capacities and its last activity.
	const starting, short, settled = "instances starting", "short of its minimum", "settled"
	_, err := waitFor(ctx, waiter[*ScalingGroup]{
		what: "scaling group " + id, goal: fmt.Sprintf("hold %d running instances", minimum),
		refresh: func() (*ScalingGroup, string, error) {
			g, err := c.FindScalingGroup(ctx, id)
			switch {
			case err != nil:
				return nil, "", err
			case g.PendingCapacity > 0:
				return g, starting, nil
			case g.TotalCapacity >= minimum:
				return g, settled, nil
			}
			last, err := c.lastActivity(ctx, id)
			if err != nil {
				return nil, "", err
			}
			// A last activity that ended Failed or Warning launched what it could: the group will
			// not reach the minimum by itself, and the vendor's words say why.
			if last != nil && (last.Status == ActivityFailed || last.Status == ActivityWarning) {
				return nil, "", fmt.Errorf("scaling group %s holds %d of its minimum %d instances: its last scaling activity ended %s: %s (%s)",
					id, g.TotalCapacity, minimum, last.Status, last.StatusMessage, last.ErrorCode)
			}
			return g, short, nil
		},
		pending: []string{starting, short}, target: []string{settled},
		lastSeen: func(g *ScalingGroup, state string) string {
			return fmt.Sprintf("%s: %d running, %d starting", state, g.ActiveCapacity, g.PendingCapacity)
		},
	})
	return err
}

// ScalingConfiguration is what the provider reads back of a configuration.
type ScalingConfiguration struct {
	ID, GroupID, Name, ImageID, SpotStrategy, State string
	InstanceTypes                                   []string
	Tags                                            map[string]string
}

// FindScalingConfigurations lists a group's configurations, sorted by id.
func (c *Client) FindScalingConfigurations(ctx context.Context, groupID string) ([]ScalingConfiguration, error) {
	out, err := pageNumbers("the scaling configurations of group "+groupID, essPageSize, 0, func(page int) ([]ScalingConfiguration, int, int, error) {
		req := ess.CreateDescribeScalingConfigurationsRequest()
		req.RegionId = c.region
		req.ScalingGroupId = groupID
		req.PageNumber, req.PageSize = requests.NewInteger(page), requests.NewInteger(essPageSize)
		resp := ess.CreateDescribeScalingConfigurationsResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, 0, 0, fmt.Errorf("listing the scaling configurations of group %s: %w", groupID, err)
		}
		var out []ScalingConfiguration
		for _, cf := range resp.ScalingConfigurations.ScalingConfiguration {
			out = append(out, ScalingConfiguration{ID: cf.ScalingConfigurationId, GroupID: cf.ScalingGroupId, Name: cf.ScalingConfigurationName,
				ImageID: cf.ImageId, SpotStrategy: cf.SpotStrategy, State: cf.LifecycleState,
				InstanceTypes: slices.Clone(cf.InstanceTypes.InstanceType),
				Tags:          tagsOf(cf.Tags.Tag, func(t ess.Tag) (string, string) { return t.Key, t.Value })})
		}
		return out, len(out), resp.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// SetScalingConfigurationTags replaces the tags a configuration puts on the instances it
// launches from now on (instances already running keep theirs: tag them with SyncTags).
func (c *Client) SetScalingConfigurationTags(ctx context.Context, id string, tags map[string]string) error {
	req := ess.CreateModifyScalingConfigurationRequest()
	req.RegionId = c.region
	req.ScalingConfigurationId = id
	req.Tags = tagsJSON(tags)
	if req.Tags == "" {
		req.Tags = "{}"
	}
	if err := c.Call(ctx, req, ess.CreateModifyScalingConfigurationResponse()); err != nil {
		return fmt.Errorf("setting the tags of scaling configuration %s: %w", id, err)
	}
	return nil
}

// DeleteScalingConfiguration deletes a configuration the group no longer uses; one already gone
// is not an error.
func (c *Client) DeleteScalingConfiguration(ctx context.Context, id string) error {
	req := ess.CreateDeleteScalingConfigurationRequest()
	req.RegionId = c.region
	req.ScalingConfigurationId = id
	if err := c.Call(ctx, req, ess.CreateDeleteScalingConfigurationResponse()); err != nil && !IsNotFound(err) {
		return fmt.Errorf("deleting scaling configuration %s: %w", id, err)
	}
	return nil
}

// ScaleTo sets a group's total capacity (clamped by the vendor to its bounds) and returns the
// activity's id, "" when a Rejected activity says nothing had to change. token makes the call
// idempotent.
func (c *Client) ScaleTo(ctx context.Context, groupID string, total int, token string) (string, error) {
	req := ess.CreateScaleWithAdjustmentRequest()
	req.RegionId = c.region
	req.ScalingGroupId = groupID
	req.AdjustmentType = "TotalCapacity"
	req.AdjustmentValue = requests.NewInteger(total)
	req.ClientToken = token
	resp := ess.CreateScaleWithAdjustmentResponse()
	if err := afterActivities(ctx, func() error { return c.Call(ctx, req, resp) }); err != nil {
		return "", fmt.Errorf("scaling group %s to %d instances: %w", groupID, total, err)
	}
	return resp.ScalingActivityId, nil
}

// afterActivities runs call until the group has no scaling activity in progress to refuse it
// (ScalingActivityInProgress): an activity lasts as long as its instances take to start, longer
// than the API-level retries wait.
func afterActivities(ctx context.Context, call func() error) error {
	const refused, sent = "refused", "sent"
	var last error
	_, err := waitFor(ctx, waiter[struct{}]{
		what: "the scaling group", goal: "end its scaling activity",
		refresh: func() (struct{}, string, error) {
			switch last = call(); {
			case last == nil:
				return struct{}{}, sent, nil
			case IsCode(last, "ScalingActivityInProgress"):
				return struct{}{}, refused, nil
			}
			return struct{}{}, "", serviceAnswer{last}
		},
		pending: []string{refused}, target: []string{sent},
		lastSeen: func(struct{}, string) string { return fmt.Sprintf("last refusal: %v", last) },
	})
	var answer serviceAnswer
	if errors.As(err, &answer) {
		return answer.err
	}
	return err
}

// ScalingActivity is one scale-out or scale-in as the vendor reports it.
type ScalingActivity struct {
	ID, Status, Cause, StatusMessage, ErrorCode string
	Created, Destroyed                          []string
}

// FindScalingActivity returns one activity of a group, or an error matching ErrNotFound.
func (c *Client) FindScalingActivity(ctx context.Context, groupID, id string) (*ScalingActivity, error) {
	req := ess.CreateDescribeScalingActivitiesRequest()
	req.RegionId = c.region
	req.ScalingGroupId = groupID
	req.ScalingActivityId = &[]string{id}
	resp := ess.CreateDescribeScalingActivitiesResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for _, a := range resp.ScalingActivities.ScalingActivity {
		if a.ScalingActivityId == id {
			return activityOf(a), nil
		}
	}
	return nil, notFound(ProductESS, "DescribeScalingActivities", "InvalidScalingActivityId.NotFound", "scaling activity "+id)
}

// lastActivity answers the group's newest activity (nil when it has none).
func (c *Client) lastActivity(ctx context.Context, groupID string) (*ScalingActivity, error) {
	req := ess.CreateDescribeScalingActivitiesRequest()
	req.RegionId = c.region
	req.ScalingGroupId = groupID
	req.PageSize = requests.NewInteger(1)
	resp := ess.CreateDescribeScalingActivitiesResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for _, a := range resp.ScalingActivities.ScalingActivity {
		return activityOf(a), nil
	}
	return nil, nil
}

func activityOf(a ess.ScalingActivity) *ScalingActivity {
	return &ScalingActivity{ID: a.ScalingActivityId, Status: a.StatusCode, Cause: a.Cause, StatusMessage: a.StatusMessage,
		ErrorCode: a.ErrorCode, Created: a.CreatedInstances.CreatedInstance, Destroyed: a.DestroyedInstances.DestroyedInstance}
}

// WaitActivity waits until an activity has ended and returns it. A Failed activity is an error
// naming the vendor's code and message, returned with the activity; Warning (part of the
// instances) and Rejected are not.
func (c *Client) WaitActivity(ctx context.Context, groupID, id string) (*ScalingActivity, error) {
	a, err := waitFor(ctx, waiter[*ScalingActivity]{
		what: fmt.Sprintf("scaling activity %s of group %s", id, groupID), goal: "end",
		refresh: refreshStatus(func() (*ScalingActivity, error) { return c.FindScalingActivity(ctx, groupID, id) }, func(a *ScalingActivity) string { return a.Status }),
		pending: []string{ActivityInProgress}, target: []string{ActivitySuccessful, ActivityWarning, ActivityRejected}, failed: []string{ActivityFailed},
	})
	var failed *StateError
	if errors.As(err, &failed) && failed.Failed {
		return a, fmt.Errorf("%w: %s (%s)", err, a.StatusMessage, a.ErrorCode)
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// ScalingInstance is one instance of a group.
type ScalingInstance struct {
	InstanceID, ConfigurationID, State, ZoneID, InstanceType, SpotStrategy string
	// Added is when the instance joined the group (CreationTime, UTC "2006-01-02T15:04:05Z"
	// or without seconds: either sorts by time as text).
	Added string
}

// ScalingInstances lists every instance of a group, all pages, sorted by id.
func (c *Client) ScalingInstances(ctx context.Context, groupID string) ([]ScalingInstance, error) {
	out, err := pageNumbers("the instances of scaling group "+groupID, essInstancePageSize, 0, func(page int) ([]ScalingInstance, int, int, error) {
		req := ess.CreateDescribeScalingInstancesRequest()
		req.RegionId = c.region
		req.ScalingGroupId = groupID
		req.PageNumber, req.PageSize = requests.NewInteger(page), requests.NewInteger(essInstancePageSize)
		resp := ess.CreateDescribeScalingInstancesResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, 0, 0, fmt.Errorf("listing the instances of scaling group %s: %w", groupID, err)
		}
		var out []ScalingInstance
		for _, in := range resp.ScalingInstances.ScalingInstance {
			out = append(out, ScalingInstance{InstanceID: in.InstanceId, ConfigurationID: in.ScalingConfigurationId,
				State: in.LifecycleState, ZoneID: in.ZoneId, InstanceType: in.InstanceType, SpotStrategy: in.SpotStrategy,
				Added: in.CreationTime})
		}
		return out, len(out), resp.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].InstanceID < out[j].InstanceID })
	return out, nil
}

// RemoveScalingInstances takes instances out of a group and releases them (never below MinSize:
// the vendor refuses with IncorrectCapacity.MinSize). It returns the activity's id.
func (c *Client) RemoveScalingInstances(ctx context.Context, groupID string, ids []string) (string, error) {
	req := ess.CreateRemoveInstancesRequest()
	req.RegionId = c.region
	req.ScalingGroupId = groupID
	list := slices.Clone(ids)
	req.InstanceId = &list
	resp := ess.CreateRemoveInstancesResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return "", fmt.Errorf("removing %d instance(s) from scaling group %s: %w", len(ids), groupID, err)
	}
	return resp.ScalingActivityId, nil
}

// LifecycleStates of a group's instance: EnterStandby takes InService ones out of service.
const (
	ScalingInstanceInService = "InService"
	ScalingInstanceStandby   = "Standby"
)

// standbyBatch is how many instances one EnterStandby call names. The vendor's page states no
// limit for InstanceId.N; 20 is the limit the equivalent call of other clouds documents, kept
// here so a large wave never depends on an undocumented maximum.
const standbyBatch = 20

// EnterStandby takes instances of a group out of service: Auto Scaling no longer health-checks
// them, so they can be stopped without the group removing and replacing them behind the
// caller's back, and RemoveInstances still takes them out
// (https://www.alibabacloud.com/help/en/auto-scaling/developer-reference/api-ess-2014-08-28-enterstandby).
func (c *Client) EnterStandby(ctx context.Context, groupID string, ids []string) error {
	for batch := range slices.Chunk(ids, standbyBatch) {
		req := ess.CreateEnterStandbyRequest()
		req.RegionId = c.region
		req.ScalingGroupId = groupID
		list := slices.Clone(batch)
		req.InstanceId = &list
		if err := c.Call(ctx, req, ess.CreateEnterStandbyResponse()); err != nil {
			return fmt.Errorf("putting %d instance(s) of scaling group %s in Standby: %w", len(batch), groupID, err)
		}
	}
	return nil
}

// SetInstanceUnhealthy tells Auto Scaling that an instance of a group is unhealthy: the group
// removes it (releasing it when it created it) and launches a replacement
// (https://www.alibabacloud.com/help/doc-detail/146592.htm).
func (c *Client) SetInstanceUnhealthy(ctx context.Context, instanceID string) error {
	req := ess.CreateSetInstanceHealthRequest()
	req.RegionId = c.region
	req.InstanceId = instanceID
	req.HealthStatus = "Unhealthy"
	if err := c.Call(ctx, req, ess.CreateSetInstanceHealthResponse()); err != nil {
		return fmt.Errorf("marking instance %s unhealthy in its scaling group: %w", instanceID, err)
	}
	return nil
}
