package ess

import (
	"cmp"
	"fmt"

	esssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ess"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "DescribeLimitation", core.Route{Fn: handle(describeLimitation)})
}

// Limits are the account's Auto Scaling quotas in a region, as DescribeLimitation answers them
// (https://www.alibabacloud.com/help/en/auto-scaling/developer-reference/api-gx1796). A zero
// field keeps its default (DefaultLimits). PUT /_emulator/ess_limits sets them; they are saved
// with the state.
type Limits struct {
	ScalingGroups int `json:"max-scaling-groups,omitempty"`
	MaxSize       int `json:"max-size,omitempty"`
}

// DefaultLimits are the vendor's documented defaults: "A single account can have up to 50
// scaling groups in a region" (Auto Scaling limits,
// https://www.alibabacloud.com/help/doc-detail/25863.htm) and a MaxSize of up to 2,000 instances
// (DescribeLimitation's MaxNumberOfMaxSize, example 2000, in the page above).
var DefaultLimits = Limits{ScalingGroups: 50, MaxSize: 2000}

// The per-group limits of that limits page, answered as DescribeLimitation's other fields: 10
// scaling configurations, 50 scaling rules, 6 event notifications and 6 lifecycle hooks a group,
// 5 CLB instances attached at a time, 20 scheduled tasks an account.
const (
	limitConfigurations = 10
	limitRules          = 50
	limitNotifications  = 6
	limitLifecycleHooks = 6
	limitLoadBalancers  = 5
	limitScheduledTasks = 20
)

// Validate refuses negative limits (0 means the default).
func (l Limits) Validate() error {
	if l.ScalingGroups < 0 || l.MaxSize < 0 {
		return fmt.Errorf("ESS limits are 0 (the default) or more, got %+v", l)
	}
	return nil
}

// EffectiveLimits are the limits set, defaults filled in for the zero fields (Validate keeps
// them from being negative, so cmp.Or picks a field set).
func (s *Store) EffectiveLimits() Limits {
	if s.Limits == nil {
		return DefaultLimits
	}
	return Limits{ScalingGroups: cmp.Or(s.Limits.ScalingGroups, DefaultLimits.ScalingGroups),
		MaxSize: cmp.Or(s.Limits.MaxSize, DefaultLimits.MaxSize)}
}

// SetLimits replaces the limits set; the zero Limits restores the defaults.
func (s *Store) SetLimits(l Limits) {
	if l == (Limits{}) {
		s.Limits = nil
		return
	}
	s.Limits = &l
}

func describeLimitation(c *call) (any, *core.Error) {
	l := c.st.EffectiveLimits()
	return &esssdk.DescribeLimitationResponse{
		RequestId:                             c.ReqID,
		MaxNumberOfScalingGroups:              l.ScalingGroups,
		MaxNumberOfMaxSize:                    l.MaxSize,
		MaxNumberOfMinSize:                    l.MaxSize,
		MaxNumberOfScalingConfigurations:      limitConfigurations,
		MaxNumberOfScalingRules:               limitRules,
		MaxNumberOfNotificationConfigurations: limitNotifications,
		MaxNumberOfLifecycleHooks:             limitLifecycleHooks,
		MaxNumberOfLoadBalancers:              limitLoadBalancers,
		MaxNumberOfScheduledTasks:             limitScheduledTasks,
	}, nil
}
