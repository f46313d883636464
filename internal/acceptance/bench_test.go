package acceptance

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkParseAndJudge reads and judges a report of n 8-GPU A100 nodes, as the provider does
// after each round of the gate, and reports the report line's size (Cloud Assistant carries it).
func BenchmarkParseAndJudge(b *testing.B) {
	const typ = "ecs.gn7e-c16g1.32xlarge"
	for _, n := range []int{10, 1000, 10000} {
		r := Report{Pool: "np-bench", AllReduce: &AllReduce{Ranks: 8 * n, Bytes: 8 << 30, AlgBWGBs: 10, BusBWGBs: 20},
			MPI: &MPIScaling{Benchmark: "hpcg", BaseNodes: 1, BaseSeconds: 600, Nodes: n, Seconds: 600 / (0.95 * float64(n))}}
		want := make([]Node, n)
		for i := range n {
			id, name := fmt.Sprintf("i-%020d", i), fmt.Sprintf("node-%d", i)
			want[i] = Node{InstanceID: id, Name: name}
			r.Nodes = append(r.Nodes, NodeResult{InstanceID: id, Node: name, DCGM: DCGM{Level: 2},
				AllReduce: &AllReduce{Ranks: 8, Bytes: 8 << 30, AlgBWGBs: 137.1, BusBWGBs: 240}})
		}
		body, err := json.Marshal(r)
		if err != nil {
			b.Fatal(err)
		}
		out := "kubectl output\n" + ReportPrefix + string(body) + "\n"
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				got, err := Parse(out)
				if err != nil {
					b.Fatal(err)
				}
				v, err := Judge(got, typ, "molecular_dynamics", want)
				if err != nil || !v.Passed() {
					b.Fatalf("verdict %v, %v", v.Passed(), err)
				}
			}
			b.ReportMetric(float64(len(out)), "report-bytes")
		})
	}
}
