package preflight

// Growth is what one node pool's plan adds to the account, the part of it the pool's own plan
// check holds to the quotas: only the nodes it adds count, so a pool that does not grow is never
// refused because the account is full of its own nodes.
type Growth struct {
	// Planned is the pool's planned size (an autoscaling pool's max_size); Previous the same in
	// its state (0 for a new pool).
	Planned, Previous int
	// Current is how many nodes the pool has now, which the account's used quota already counts:
	// Previous for a fixed pool, the scaling group's live nodes for an autoscaling one.
	Current int
	// Group is the scaling group an autoscaling pool's plan creates or grows (nil for a fixed
	// pool): a new one is held to the scaling group quota, its max_size (Limit) to the largest
	// a group may take. Its MaxSize stays 0: the pool's new nodes are counted once, as the pool's.
	Group *ScalingGroup
	// NewGroup is whether the plan creates the group.
	NewGroup bool
}

// NewNodes is how many nodes beyond the ones it has the pool may ask for, 0 when it does not
// grow: a plan that keeps or lowers the size (or max_size) adds nothing, whatever the account
// holds, and is not checked at all.
func (g Growth) NewNodes() int {
	if g.Planned <= g.Previous {
		return 0
	}
	return max(g.Planned-g.Current, 0)
}

// CheckPool is the plan check of one pool: p with Count set to its new nodes checked against a
// like Check, nothing when it does not grow (fits, no summary).
func CheckPool(p Pool, g Growth, a Account, rateLimit float64) Report {
	n := g.NewNodes()
	if n == 0 {
		return Report{}
	}
	p.Count = n
	s := Stack{Pools: []Pool{p}}
	if g.Group != nil {
		s.ScalingGroups = []ScalingGroup{*g.Group}
		if !g.NewGroup {
			a.ScalingGroups = Quota{} // the group exists: it takes no more of the group quota
		}
	}
	return Check(s, a, rateLimit)
}
