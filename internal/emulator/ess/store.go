// Package ess is the emulator's Auto Scaling API (ESS, 2014-08-28): scaling groups, their
// configurations, rules, activities and tags. A group's instances are ECS instances, launched
// and released through the contract ECS offers in the core (core.ECS); ESS keeps the spot stock
// table RunInstances draws on and offers it the same way (core.UseSpotStock), so neither product
// imports the other. vSwitches are read from package vpc, the layer both stand on.
package ess

import (
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// Version is the ESS API version the emulator serves.
const Version = "2014-08-28"

// storeName names the ESS records among the emulator's stores.
const storeName = "ess"

func init() {
	core.RegisterStore(storeName, func() core.Store { return &Store{} })
	core.UseSpotStock(func(s *core.Stores) map[string]map[string]int { return StoreIn(s).SpotCapacity })
}

// Records of Auto Scaling (ESS, API 2014-08-28). A scaling group keeps the ids of its
// instances; the instances themselves are ordinary ECS records launched through RunInstances
// (same lifecycle, stock, quota and zone rules), so DescribeInstances sees them too.
//
// Vendor facts the emulator relies on (https://help.aliyun.com/zh/auto-scaling/developer-reference/
// api-ess-2014-08-28-scalewithadjustment and .../api-ess-2014-08-28-executescalingrule):
//   - a group is created Inactive and becomes Active with EnableScalingGroup; a group being
//     deleted is Deleting;
//   - scaling (ExecuteScalingRule, ScaleWithAdjustment) needs an Active group and no scaling
//     activity in progress; a result above MaxSize or below MinSize is clamped to the bound;
//     a rule that would not change the total capacity is Rejected ("To execute the specified
//     scaling rule, the total capacity will not change.",
//     https://www.alibabacloud.com/help/en/auto-scaling/user-guide/troubleshoot-scaling-activity-exceptions);
//   - an activity is InProgress, then Successful, Warning (part of the instances created) or
//     Failed (none); Rejected activities never ran;
//   - AdjustmentValue: QuantityChangeInCapacity -1000..1000, PercentChangeInCapacity -100..10000,
//     TotalCapacity 0..2000; one adjustment never moves more than 1000 instances.

// scalingGroup is one ESS scaling group.
type scalingGroup struct {
	ID        string   `json:"id"`
	Region    string   `json:"region"`
	Name      string   `json:"name"`
	Min       int      `json:"min"`
	Max       int      `json:"max"`
	Desired   int      `json:"desired"` // -1: desired capacity not enabled
	Cooldown  int      `json:"cooldown"`
	VSwitches []string `json:"vsws"` // in priority order
	VpcID     string   `json:"vpc"`
	Active    bool     `json:"active"`
	Config    string   `json:"config,omitempty"` // the active scaling configuration
	MultiAZ   string   `json:"multi_az"`         // MultiAZPolicy
	Removal   []string `json:"removal"`          // RemovalPolicy.N
	// Spot mix: the first OnDemandBase instances are pay-as-you-go, then OnDemandPct percent of
	// those above the base; the rest are spot. CompensateOnDemand launches pay-as-you-go
	// instances when spot stock runs short; SpotRemedy replaces reclaimed spot instances.
	OnDemandBase       int              `json:"od_base"`
	OnDemandPct        int              `json:"od_pct"`
	CompensateOnDemand bool             `json:"compensate"`
	SpotRemedy         bool             `json:"spot_remedy"`
	Created            int64            `json:"created"`
	Modified           int64            `json:"modified"`
	DeletedAt          int64            `json:"deleted,omitempty"`
	Tags               []core.Tag       `json:"tags,omitempty"`
	Members            []*scalingMember `json:"members,omitempty"`
}

// scalingMember is one instance of a group.
type scalingMember struct {
	Instance string `json:"id"`
	Config   string `json:"config"`
	Activity string `json:"activity"`
	Creation string `json:"creation"` // AutoCreated or Attached
	Added    int64  `json:"added"`
	// Standby: EnterStandby took the instance out of service (standby.go); the health check
	// leaves it alone until ExitStandby.
	Standby bool `json:"standby,omitempty"`
	// Unhealthy: SetInstanceHealth marked it so; the health check removes it (health.go).
	Unhealthy bool `json:"unhealthy,omitempty"`
}

// scalingConfig is a launch specification: the RunInstances parameters ESS passes on.
type scalingConfig struct {
	ID      string            `json:"id"`
	Group   string            `json:"group"`
	Region  string            `json:"region"`
	Name    string            `json:"name"`
	Types   []string          `json:"types"` // InstanceTypes.N: the priority list
	Launch  map[string]string `json:"launch"`
	Tags    []core.Tag        `json:"tags,omitempty"` // the Tags JSON, put on every instance
	Created int64             `json:"created"`
}

type scalingRule struct {
	ID       string `json:"id"`
	Group    string `json:"group"`
	Region   string `json:"region"`
	Name     string `json:"name"`
	AdjType  string `json:"adj_type"`
	AdjValue int    `json:"adj_value"`
	MinAdj   int    `json:"min_adj,omitempty"`
	Cooldown int    `json:"cooldown,omitempty"`
}

// scalingActivity is one scale-out or scale-in. Its instances are created (or released) when it
// starts; its status is derived from time and from its instances' status, like an instance's.
type scalingActivity struct {
	ID        string   `json:"id"`
	Group     string   `json:"group"`
	Region    string   `json:"region"`
	Desc      string   `json:"desc"`
	Cause     string   `json:"cause"`
	Started   int64    `json:"started"`
	Want      int      `json:"want"` // instances to add or remove
	Created   []string `json:"created,omitempty"`
	Destroyed []string `json:"destroyed,omitempty"`
	Rejected  string   `json:"rejected,omitempty"` // why it never ran
	ErrCode   string   `json:"err_code,omitempty"`
	ErrMsg    string   `json:"err_msg,omitempty"`
	Total     int      `json:"total"` // the group's total capacity when it ended
}

// Records are the ESS records, saved under the state file's key "ess" with the keys they had
// before ESS had its own package.
type Records struct {
	Groups     map[string]*scalingGroup    `json:"groups"`
	Configs    map[string]*scalingConfig   `json:"configs"`
	Rules      map[string]*scalingRule     `json:"rules"`
	Activities map[string]*scalingActivity `json:"activities"`
	// SpotCapacity is the spot stock ECS's RunInstances draws on: zone -> instance type -> spot
	// instances available. Types not listed have plenty (see core.UseSpotStock).
	SpotCapacity map[string]map[string]int `json:"spot_capacity,omitempty"`
	// Limits are the quotas PUT /_emulator/ess_limits set; nil keeps the defaults (limits.go).
	Limits *Limits `json:"limits,omitempty"`
}

// Store is the ESS records under their one key: the embedded Records is encoded as the object
// "ess", not spliced into the state file's top level.
type Store struct {
	Records `json:"ess"`
}

// Init fills the maps a state file written before ESS existed (or without some of them) lacks.
func (s *Store) Init() {
	if s.Groups == nil {
		s.Groups = map[string]*scalingGroup{}
	}
	if s.Configs == nil {
		s.Configs = map[string]*scalingConfig{}
	}
	if s.Rules == nil {
		s.Rules = map[string]*scalingRule{}
	}
	if s.Activities == nil {
		s.Activities = map[string]*scalingActivity{}
	}
	if s.SpotCapacity == nil {
		s.SpotCapacity = map[string]map[string]int{}
	}
}

// StoreIn answers the ESS store of a Server's stores.
func StoreIn(s *core.Stores) *Store { return core.StoreOf[*Store](s, storeName) }
