package emulator

import (
	"encoding/json"
	"testing"
)

func TestPruneAnswer(t *testing.T) {
	tree, rest, err := parseShape("{A,B{C,D{E}},F*,G}")
	if err != nil || rest != "" {
		t.Fatalf("parse: %v, left %q", err, rest)
	}
	in := `{"A":"x\"},{[","Z":{"deep":[1,{"q":"]"}]},"B":[{"C":1,"X":true,"D":{"E":null,"Y":"y"}},{"C":2}],` +
		`"F":{"any":{"thing":[1,2]}},"G":[],"H":-1.5e3}`
	if !json.Valid([]byte(in)) {
		t.Fatal("bad fixture")
	}
	got := string(pruneValueAll(in, tree))
	want := `{"A":"x\"},{[","B":[{"C":1,"D":{"E":null}},{"C":2}],"F":{"any":{"thing":[1,2]}},"G":[]}`
	if got != want {
		t.Fatalf("pruned\n got %s\nwant %s", got, want)
	}
	// An action without a model passes unchanged.
	if out := pruneAnswer("2017-06-26/DescribeFileSystems", []byte(in)); string(out) != in {
		t.Fatalf("unmodelled action changed: %s", out)
	}
	// Every generated shape parses.
	if len(responseTrees) != len(responseShapes) || len(responseTrees) == 0 {
		t.Fatalf("%d trees for %d shapes", len(responseTrees), len(responseShapes))
	}
}

func pruneValueAll(in string, t *shapeNode) []byte {
	out, _ := pruneValue(nil, []byte(in), 0, t)
	return out
}
