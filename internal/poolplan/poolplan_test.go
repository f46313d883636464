package poolplan

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitWithoutPlacement(t *testing.T) {
	tests := []struct {
		want    int
		amounts []int
	}{
		{0, nil},
		{1, []int{1}},
		{100, []int{100}},
		{101, []int{100, 1}},
		{1000, []int{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}},
		{250, []int{100, 100, 50}},
	}
	for _, tc := range tests {
		got, err := Split(tc.want, nil)
		if err != nil {
			t.Fatalf("Split(%d): %v", tc.want, err)
		}
		var amounts []int
		for i, b := range got {
			if b.Index != i || b.DeploymentSetID != "" {
				t.Fatalf("Split(%d) batch %d = %+v", tc.want, i, b)
			}
			amounts = append(amounts, b.Amount)
		}
		if !slices.Equal(amounts, tc.amounts) {
			t.Errorf("Split(%d) = %v, want %v", tc.want, amounts, tc.amounts)
		}
	}
}

func TestSplitIntoDeploymentSets(t *testing.T) {
	slots := []Slot{{"ds-1", 20}, {"ds-2", 5}, {"ds-3", 20}}
	got, err := Split(30, slots)
	if err != nil {
		t.Fatal(err)
	}
	want := []Batch{{0, 20, "ds-1"}, {1, 5, "ds-2"}, {2, 5, "ds-3"}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if _, err := Split(46, slots); err == nil || !strings.Contains(err.Error(), "room for 45 more nodes, 46 are needed") {
		t.Fatalf("overfull placement: err = %v", err)
	}
}

func TestClientTokens(t *testing.T) {
	gen := Generation("op", []string{"i-2", "i-1"})
	if gen != Generation("op", []string{"i-1", "i-2"}) {
		t.Fatal("generation must not depend on order")
	}
	if gen == Generation("op", nil) || gen == Generation("op", []string{"i-1"}) {
		t.Fatal("different pools of instances must give different generations")
	}
	// A pool emptied by a roll wave, or by nodes deleted behind Terraform's back, has the empty
	// set it was created with: only the operation keeps its tokens apart from the create's.
	if Generation("create", nil) == Generation("update-1f2e/wave-1", nil) {
		t.Fatal("two grows of an empty pool in different operations must not share a generation")
	}
}

func TestTries(t *testing.T) {
	zones := []string{"a", "b"}
	types := []string{"big", "small"}
	got := Tries(zones, types, true)
	want := []Try{{"a", "big"}, {"b", "big"}, {"a", "small"}, {"b", "small"}}
	if !slices.Equal(got, want) {
		t.Fatalf("with fallback: %v", got)
	}
	got = Tries(zones, types, false)
	want = []Try{{"a", "big"}, {"b", "big"}}
	if !slices.Equal(got, want) {
		t.Fatalf("without fallback: %v", got)
	}
}

func TestScaleDownTakesNewestFirst(t *testing.T) {
	nodes := []Node{
		{ID: "i-old", CreationTime: "2026-01-01T00:00Z"},
		{ID: "i-new2", CreationTime: "2026-01-03T00:00Z"},
		{ID: "i-mid", CreationTime: "2026-01-02T00:00Z"},
		{ID: "i-new1", CreationTime: "2026-01-03T00:00Z"},
	}
	got := ScaleDownVictims(nodes, 3)
	want := []string{"i-new2", "i-new1", "i-mid"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := ScaleDownVictims(nodes, 10); len(got) != 4 {
		t.Fatalf("asking for more than exist: %v", got)
	}
	if got := ScaleDownVictims(nodes, 0); got != nil {
		t.Fatalf("zero: %v", got)
	}
}

func TestRollWavesNeverExceedMaxUnavailable(t *testing.T) {
	var nodes []Node
	for i := 0; i < 7; i++ {
		nodes = append(nodes, Node{ID: string(rune('a' + i)), CreationTime: string(rune('a' + i)), Outdated: i != 3})
	}
	waves := RollWaves(nodes, 2)
	want := [][]string{{"a", "b"}, {"c", "e"}, {"f", "g"}}
	if len(waves) != len(want) {
		t.Fatalf("waves = %v", waves)
	}
	for i := range want {
		if !slices.Equal(waves[i], want[i]) {
			t.Fatalf("wave %d = %v, want %v", i, waves[i], want[i])
		}
	}
	if got := RollWaves(nodes, 0); len(got) != 6 {
		t.Fatalf("max_unavailable 0 must still make progress one at a time: %v", got)
	}
}
