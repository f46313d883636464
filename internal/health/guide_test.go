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
