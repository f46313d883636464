package health

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestGuideListsTheXIDTable: the GPU health guide's table of XIDs holds every row of the table
// the agent acts on, with the same action, and no other code, so the guide cannot drift from
// what the agent does.
func TestGuideListsTheXIDTable(t *testing.T) {
	guide, err := os.ReadFile("../../templates/guides/gpu-health.md.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (\d+) \| [^|]+ \| (none|reset|replace)\b[^|]*\|$`)
	inGuide := map[int]Action{}
	for _, m := range row.FindAllStringSubmatch(string(guide), -1) {
		code, _ := strconv.Atoi(m[1])
		inGuide[code] = Action(m[2])
	}
	for _, x := range XIDs() {
		if got, ok := inGuide[x.Code]; !ok || got != x.Action {
			t.Errorf("XID %d: the guide says %q, the agent does %q", x.Code, got, x.Action)
		}
		delete(inGuide, x.Code)
	}
	for code, a := range inGuide {
		t.Errorf("the guide lists XID %d (%s), which the agent's table does not hold", code, a)
	}
}

// TestGuideFloorsAreTheFormulas: every row of the GPU health guide's table of floors is what
// AllReduceFloor computes for the type, inside a node and across two.
func TestGuideFloorsAreTheFormulas(t *testing.T) {
	guide, err := os.ReadFile("../../templates/guides/gpu-health.md.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (ecs\.[a-z0-9.-]+) \| (\d+) \| ([a-z]+) ([0-9.]+) GB/s \| ([a-z]+) ([0-9.]+) GB/s \|$`)
	rows := row.FindAllStringSubmatch(string(guide), -1)
	if len(rows) < 5 {
		t.Fatalf("the guide's table of floors has %d rows; want the table", len(rows))
	}
	for _, m := range rows {
		for i, nodes := range []int{1, 2} {
			f, err := AllReduceFloor(m[1], nodes)
			if err != nil {
				t.Errorf("%s: %v", m[1], err)
				continue
			}
			kind, gbs := m[3+2*i], m[4+2*i]
			if f.Bottleneck.Kind != kind || strconv.FormatFloat(f.GBs, 'f', 2, 64) != gbs {
				t.Errorf("%s over %d nodes: the guide says %s %s GB/s, the formula %s %.2f", m[1], nodes, kind, gbs, f.Bottleneck.Kind, f.GBs)
			}
		}
	}
}
