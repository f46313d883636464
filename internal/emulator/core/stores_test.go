package core

import (
	"encoding/json"
	"testing"
)

type testStore struct {
	Things map[string]int `json:"things"`
}

func (s *testStore) Init() {
	if s.Things == nil {
		s.Things = map[string]int{}
	}
}

func init() { RegisterStore("core-test", func() Store { return &testStore{} }) }

// A store's keys sit beside the rest of the state in one flat object and come back from it.
func TestStoresSpliceIntoTheStateObject(t *testing.T) {
	s := NewStores()
	StoreOf[*testStore](s, "core-test").Things["a"] = 1
	for _, rest := range []string{`{"seq":7}`, `{}`} {
		out, err := s.MarshalStores([]byte(rest))
		if err != nil {
			t.Fatal(err)
		}
		var flat map[string]json.RawMessage
		if err := json.Unmarshal(out, &flat); err != nil {
			t.Fatalf("%s: not one JSON object: %v", out, err)
		}
		if string(flat["things"]) != `{"a":1}` {
			t.Fatalf("%s: the store's key is not at the top level", out)
		}
		back := NewStores()
		if err := back.UnmarshalStores(out); err != nil {
			t.Fatal(err)
		}
		if got := StoreOf[*testStore](back, "core-test").Things["a"]; got != 1 {
			t.Fatalf("read back %d, want 1", got)
		}
	}
}

// A state file written before a store existed leaves it empty but usable.
func TestStoresInitWhenTheFileLacksTheirKeys(t *testing.T) {
	s := NewStores()
	if err := s.UnmarshalStores([]byte(`{"seq":7}`)); err != nil {
		t.Fatal(err)
	}
	if StoreOf[*testStore](s, "core-test").Things == nil {
		t.Fatal("the store's map was left nil")
	}
}
