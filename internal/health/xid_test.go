package health

import (
	"slices"
	"strings"
	"testing"
)

func TestClassifyXID(t *testing.T) {
	cases := []struct {
		code int
		want Action
	}{
		{13, ActionNone}, {31, ActionNone}, {43, ActionNone}, {45, ActionNone},
		{48, ActionReset}, {63, ActionReset}, {74, ActionReset}, {92, ActionReset},
		{94, ActionReset}, {95, ActionReset}, {119, ActionReset}, {120, ActionReset},
		{64, ActionReplace}, {79, ActionReplace},
		{0, ActionUnlisted}, {1, ActionUnlisted}, {200, ActionUnlisted}, {-79, ActionUnlisted},
	}
	for _, c := range cases {
		if got := ClassifyXID(c.code); got != c.want {
			t.Errorf("XID %d: %s, want %s", c.code, got, c.want)
		}
	}
}

func TestXIDTable(t *testing.T) {
	rows := XIDs()
	if !slices.IsSortedFunc(rows, func(a, b XID) int { return a.Code - b.Code }) {
		t.Fatal("the XID table is not sorted by code: LookupXID's binary search misses rows")
	}
	for i, x := range rows {
		if i > 0 && rows[i-1].Code == x.Code {
			t.Errorf("XID %d twice", x.Code)
		}
		if x.Name == "" || !strings.HasPrefix(x.Source, "https://docs.nvidia.com/") {
			t.Errorf("XID %d: name %q, source %q: every row names NVIDIA's meaning and page", x.Code, x.Name, x.Source)
		}
		if got, ok := LookupXID(x.Code); !ok || got != x {
			t.Errorf("LookupXID(%d) = %+v %v", x.Code, got, ok)
		}
	}
	rows[0].Action = ActionReplace
	if ClassifyXID(rows[0].Code) == ActionReplace {
		t.Error("XIDs hands out the table itself")
	}
}

func TestActionDrains(t *testing.T) {
	for a, want := range map[Action]bool{ActionNone: false, ActionReset: true, ActionReplace: true, ActionUnlisted: true} {
		if a.Drains() != want {
			t.Errorf("%s drains %v, want %v", a, a.Drains(), want)
		}
	}
}
