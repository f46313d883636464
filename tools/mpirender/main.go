// Command mpirender prints the Kueue objects gpucluster_kubernetes_manifests renders for a
// sample of two pools and two teams, as one multi-document YAML stream; with the argument
// "addon", the whole Kueue add-on file (65-kueue.yaml: the release, then those objects). tools/manifestcheck, a
// module of its own with Kueue's Go types, runs it and decodes the output: that module then
// needs Kueue's dependencies only, not the provider's.
//
//	go run ./tools/mpirender [addon]
package main

import (
	"fmt"
	"os"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
)

func main() {
	o := manifests.Options{Scenario: "molecular_dynamics", Nodes: 4, GPUsPerNode: 8, ERDMA: true}
	m := manifests.MPIOptions{
		Pools: []manifests.Pool{{Name: "md-a", Nodes: 4, GPUsPerNode: 8}, {Name: "md-b", Nodes: 2, GPUsPerNode: 4}},
		Teams: map[string]manifests.Team{"chem": {GPUs: 16}, "cfd": {GPUs: 8, Pool: "md-b", Namespace: "cfd-team"}},
	}
	if len(os.Args) > 1 && os.Args[1] == "addon" {
		files, err := manifests.AddonsYAML(o, manifests.AddonOptions{Kueue: &m})
		if err != nil {
			fail(err)
		}
		fmt.Print(files[manifests.AddonKueue])
		return
	}
	r, err := manifests.RenderMPI(o, m)
	if err != nil {
		fail(err)
	}
	fmt.Print(manifests.Join(r.Queues))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mpirender:", err)
	os.Exit(1)
}
