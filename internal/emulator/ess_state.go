package emulator

import "time"

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
	Tags               []tag            `json:"tags,omitempty"`
	Members            []*scalingMember `json:"members,omitempty"`
}

// scalingMember is one instance of a group.
type scalingMember struct {
	Instance string `json:"id"`
	Config   string `json:"config"`
	Activity string `json:"activity"`
	Creation string `json:"creation"` // AutoCreated or Attached
	Added    int64  `json:"added"`
}

// scalingConfig is a launch specification: the RunInstances parameters ESS passes on.
type scalingConfig struct {
	ID      string            `json:"id"`
	Group   string            `json:"group"`
	Region  string            `json:"region"`
	Name    string            `json:"name"`
	Types   []string          `json:"types"` // InstanceTypes.N: the priority list
	Launch  map[string]string `json:"launch"`
	Tags    []tag             `json:"tags,omitempty"` // the Tags JSON, put on every instance
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

// essState is the ESS part of the emulator's state.
type essState struct {
	Groups     map[string]*scalingGroup    `json:"groups"`
	Configs    map[string]*scalingConfig   `json:"configs"`
	Rules      map[string]*scalingRule     `json:"rules"`
	Activities map[string]*scalingActivity `json:"activities"`
	// SpotCapacity is the spot stock: zone -> instance type -> spot instances available. Types
	// not listed have plenty (see SetSpotCapacity).
	SpotCapacity map[string]map[string]int `json:"spot_capacity,omitempty"`
}

func newESSState() *essState {
	return &essState{Groups: map[string]*scalingGroup{}, Configs: map[string]*scalingConfig{},
		Rules: map[string]*scalingRule{}, Activities: map[string]*scalingActivity{}, SpotCapacity: map[string]map[string]int{}}
}

// initESS fills the ESS maps a state file written before ESS existed lacks.
func (d *db) initESS() {
	if d.ESS == nil {
		d.ESS = newESSState()
	}
	e := d.ESS
	if e.Groups == nil {
		e.Groups = map[string]*scalingGroup{}
	}
	if e.Configs == nil {
		e.Configs = map[string]*scalingConfig{}
	}
	if e.Rules == nil {
		e.Rules = map[string]*scalingRule{}
	}
	if e.Activities == nil {
		e.Activities = map[string]*scalingActivity{}
	}
	if e.SpotCapacity == nil {
		e.SpotCapacity = map[string]map[string]int{}
	}
}

// essResources lists the scaling groups not yet gone (Deleting ones included) for
// /_emulator/resources. Caller holds s.mu.
func (s *Server) essResources(now time.Time, r *Resources) {
	for _, g := range s.db.ESS.Groups {
		if s.groupGone(g, now) {
			continue
		}
		live := 0
		for _, m := range g.Members {
			if s.db.Instances[m.Instance] != nil {
				live++
			}
		}
		r.ScalingGroups = append(r.ScalingGroups, map[string]any{"id": g.ID, "region": g.Region, "name": g.Name,
			"state": s.groupState(g), "min_size": g.Min, "max_size": g.Max, "instances": live, "tags": tagMap(g.Tags)})
	}
}

// SetSpotCapacity replaces the spot stock table: zone -> instance type -> spot instances
// available. Spot launches (SpotStrategy other than NoSpot) of a listed type draw on it; types
// not listed have plenty. An empty map restores plenty everywhere.
func (s *Server) SetSpotCapacity(c map[string]map[string]int) {
	cp := stockTable(c)
	s.mu.Lock()
	s.db.ESS.SpotCapacity = cp
	s.mu.Unlock()
	s.markDirty()
}
