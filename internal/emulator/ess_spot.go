package emulator

import "fmt"

// ReclaimSpot releases spot instances the way the vendor does when it takes spot capacity back
// (after its notice in the instance metadata, which the emulator does not serve). A scaling
// group that loses instances this way and has SpotInstanceRemedy set starts an activity that
// launches replacements up to the size it had (through the same spot mix, so the replacements
// are spot again when spot stock allows, pay-as-you-go with CompensateWithOnDemand otherwise).
func (s *Server) ReclaimSpot(ids []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.db
	var list []*instance
	for _, id := range ids {
		in := d.Instances[id]
		if in == nil {
			return fmt.Errorf("instance %s does not exist", id)
		}
		if !isSpot(in.Spot) {
			return fmt.Errorf("instance %s is pay-as-you-go (SpotStrategy %s): only spot instances are reclaimed", id, orDefault(in.Spot, "NoSpot"))
		}
		list = append(list, in)
	}
	c := &call{s: s, now: s.now(), reqID: newRequestID(), action: "ReclaimSpot"}
	before := map[*scalingGroup]int{}
	for _, g := range d.ESS.Groups {
		for _, m := range g.Members {
			if contains(ids, m.Instance) {
				before[g] = len(c.liveMembers(g))
				break
			}
		}
	}
	for _, in := range list {
		d.removeInstance(in)
	}
	for g, n := range before {
		c.region = g.Region
		if g.SpotRemedy && g.Active && g.DeletedAt == 0 && c.inProgress(g) == nil {
			if target := min(max(n, g.Min), g.Max); target > len(c.liveMembers(g)) {
				c.startActivity(g, target, "Spot instances were reclaimed; SpotInstanceRemedy launches replacements.")
			}
		}
	}
	s.markDirty()
	return nil
}
