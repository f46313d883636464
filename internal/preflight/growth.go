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
	return Check(Stack{Pools: []Pool{p}}, a, rateLimit)
}
