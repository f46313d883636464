package health

import (
	"fmt"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
)

// The MPI parallel-efficiency target: the scenario table of internal/catalog holds it
// (Scenario.MinParallelEfficiency, from the project's scenario targets in the catalog's
// SOURCES.md section 2: molecular dynamics asks for 90%); the catalog cannot measure it at plan
// time, so the gate measures it on the pool.

// EfficiencyTarget is a scenario's parallel-efficiency target; Set is false where the scenario
// states none (engineering_simulation and ai_training today).
type EfficiencyTarget struct {
	Scenario string
	Min      float64 // fraction, 0.9 for 90%
	Set      bool
}

// ParallelEfficiencyTarget reads scenario's target from the catalog; the catalog's error for an
// unknown scenario.
func ParallelEfficiencyTarget(scenario string) (EfficiencyTarget, error) {
	sc, err := catalog.LookupScenario(scenario)
	if err != nil {
		return EfficiencyTarget{}, err
	}
	return EfficiencyTarget{Scenario: sc.Name, Min: sc.MinParallelEfficiency, Set: sc.MinParallelEfficiency > 0}, nil
}

// ParallelEfficiency is strong scaling's efficiency of a run on nodes nodes taking seconds,
// against a baseline run of the same problem on baseNodes nodes taking baseSeconds:
// (baseSeconds * baseNodes) / (seconds * nodes), 1 when the time falls in proportion to the nodes
// added. A throughput (ns/day, as GROMACS and LAMMPS report it) is the inverse of a time.
func ParallelEfficiency(baseNodes int, baseSeconds float64, nodes int, seconds float64) (float64, error) {
	if baseNodes < 1 || nodes < 1 || baseSeconds <= 0 || seconds <= 0 {
		return 0, fmt.Errorf("parallel efficiency needs positive node counts and times (baseline %d nodes %gs, run %d nodes %gs)", baseNodes, baseSeconds, nodes, seconds)
	}
	return baseSeconds * float64(baseNodes) / (seconds * float64(nodes)), nil
}

// Meets says whether a measured efficiency reaches the target; true where none is set.
func (t EfficiencyTarget) Meets(efficiency float64) bool { return !t.Set || efficiency >= t.Min }
