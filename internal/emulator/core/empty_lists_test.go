package core

import (
	"encoding/json"
	"testing"
)

func TestEmptyLists(t *testing.T) {
	type inner struct{ IDs []string }
	type Base struct{ Hidden []string }
	type answer struct {
		*Base   // a nil embedded pointer (the SDK's *responses.BaseResponse) stays nil
		Wrapper struct{ Item []inner }
		Filled  []inner
		Ptr     *inner
		private []string
	}
	a := &answer{Filled: []inner{{}}, Ptr: &inner{}}
	EmptyLists(a)
	got, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Wrapper":{"Item":[]},"Filled":[{"IDs":[]}],"Ptr":{"IDs":[]}}`
	if string(got) != want || a.private != nil {
		t.Fatalf("got %s, want %s", got, want)
	}
	EmptyLists(nil)      // no answer: nothing to do
	EmptyLists(answer{}) // not a pointer: nothing can be set
}
