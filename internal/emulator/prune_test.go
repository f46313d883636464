package emulator

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
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
	if out := pruneAnswer("2017-06-26/NoSuchAction", []byte(in)); string(out) != in {
		t.Fatalf("unmodelled action changed: %s", out)
	}
	// Every generated shape parses.
	if len(responseTrees) != len(responseShapes) || len(responseTrees) == 0 {
		t.Fatalf("%d trees for %d shapes", len(responseTrees), len(responseShapes))
	}
}

func pruneValueAll(in string, t *shapeNode) []byte {
	p := pruner{src: []byte(in), memo: map[*shapeNode]*keySeq{}}
	out, _ := p.value(nil, 0, t)
	return out
}

// BenchmarkPruneDescribeInstances100 sets what pruning a 100-instance DescribeInstances answer
// costs beside encoding it (both run on the same machine at the same time, so the ratio holds
// where absolute figures on a shared machine do not).
func BenchmarkPruneDescribeInstances100(b *testing.B) {
	e := newEnv(b, Config{BootTime: 1})
	ids := populate(b, e, 100)
	key := versionECS + "/DescribeInstances"
	rt, _ := core.Lookup(key)
	e.s.mu.RLock()
	c := &core.Call{P: params{"InstanceIds": jsonIDs(ids), "MaxResults": "100"}, Region: testRegion, Now: time.Now(),
		Stores: e.s.db.stores, Env: serverEnv{e.s}}
	resp, aerr := rt.Fn(c)
	e.s.mu.RUnlock()
	if aerr != nil {
		b.Fatal(aerr)
	}
	raw, err := json.Marshal(resp)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := json.Marshal(resp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("prune", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_ = pruneAnswer(key, raw)
		}
	})
	b.Logf("100 instances: %d bytes encoded, %d after pruning", len(raw), len(pruneAnswer(key, raw)))
}
