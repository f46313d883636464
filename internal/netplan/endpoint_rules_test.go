package netplan

import "testing"

func TestEndpointRules(t *testing.T) {
	rules := EndpointRules("lb-1", []string{"10.0.0.0/20", "10.0.16.0/20", "10.0.0.0/20"})
	if len(rules) != 3 {
		t.Fatalf("want 2 vSwitch rules and 1 health-check rule, got %d: %+v", len(rules), rules)
	}
	sources := map[string]bool{}
	for _, r := range rules {
		if r.Protocol != "TCP" || r.PortRange != "6443/6443" || r.Policy != "accept" || r.Priority != EndpointPriority {
			t.Errorf("rule wider or other than TCP 6443 accept: %+v", r)
		}
		if got := EndpointRuleOwner(r); got != "lb-1" {
			t.Errorf("owner of %+v = %q, want lb-1", r, got)
		}
		sources[r.Source] = true
	}
	for _, s := range []string{"10.0.0.0/20", "10.0.16.0/20", "100.64.0.0/10"} {
		if !sources[s] {
			t.Errorf("no rule from %s", s)
		}
	}
	// The network's own rules are never an endpoint's, and never share a key with one.
	for _, r := range DesiredRules("sg-1", []string{"10.0.0.0/20"}) {
		if EndpointRuleOwner(r) != "" {
			t.Errorf("network rule %+v taken for an endpoint rule", r)
		}
		for _, e := range rules {
			if e.Key() == r.Key() {
				t.Errorf("endpoint rule %+v has the key of network rule %+v", e, r)
			}
		}
	}
	if EndpointRuleOwner(Rule{Description: EndpointRuleDescription("lb-1"), Priority: AcceptPriority}) != "" {
		t.Error("a rule at another priority is not the endpoint's")
	}
}
