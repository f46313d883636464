package manifests

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

func clusterQueues(t *testing.T, r MPIRender) map[string]clusterQueue {
	t.Helper()
	out := map[string]clusterQueue{}
	for _, d := range r.Queues {
		if d.Kind == "ClusterQueue" {
			var cq clusterQueue
			if err := yaml.UnmarshalStrict([]byte(d.YAML), &cq); err != nil {
				t.Fatal(err)
			}
			out[cq.Name] = cq
		}
	}
	return out
}

// Team quotas that add up to more GPUs than the pool has are refused, naming teams, the quotas,
// the pool's size and what to do; a sum equal to the pool is fine.
func TestTeamQuotasMustFitThePool(t *testing.T) {
	o := Options{Scenario: "molecular_dynamics", Nodes: 4, GPUsPerNode: 8}
	pools := []Pool{{Name: "md-gpu", Nodes: 4, GPUsPerNode: 8}}
	_, err := RenderMPI(o, MPIOptions{Pools: pools, Teams: map[string]Team{"chem": {GPUs: 32}, "cfd": {GPUs: 16}}})
	var ie *planerr.Error
	if !errors.As(err, &ie) || ie.Path != "mpi.teams" {
		t.Fatalf("got %v, want a *planerr.Error on teams", err)
	}
	for _, want := range []string{"cfd=16, chem=32", "48 GPUs on pool md-gpu, which has 32 (4 nodes x 8 GPUs)", "at most 32"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	r, err := RenderMPI(o, MPIOptions{Pools: pools, Teams: map[string]Team{"chem": {GPUs: 16}, "cfd": {GPUs: 16}}})
	if err != nil {
		t.Fatal(err)
	}
	cqs := clusterQueues(t, r)
	for _, team := range []string{"chem", "cfd"} {
		cq := cqs[team]
		q := cq.Spec.ResourceGroups[0].Flavors[0].Resources[0]
		if cq.Spec.CohortName != TeamsCohort || q.Name != GPUResource || q.NominalQuota.Value() != 16 {
			t.Errorf("%s: cohort %q, quota %s %s", team, cq.Spec.CohortName, q.Name, q.NominalQuota.String())
		}
		if cq.Spec.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != team {
			t.Errorf("%s: namespace selector %v", team, cq.Spec.NamespaceSelector)
		}
	}
}

// With several pools the check is per pool, and a team's ClusterQueue lists its own pool first
// and the others at quota 0 (borrowing only).
func TestTeamQuotasPerPool(t *testing.T) {
	o := Options{Scenario: "engineering_simulation", Nodes: 2, GPUsPerNode: 8}
	pools := []Pool{{Name: "a", Nodes: 2, GPUsPerNode: 8}, {Name: "b", Nodes: 1, GPUsPerNode: 4}}
	_, err := RenderMPI(o, MPIOptions{Pools: pools, Teams: map[string]Team{"cfd": {GPUs: 4, Pool: "b"}, "fea": {GPUs: 1, Pool: "b"}}})
	var ie *planerr.Error
	if !errors.As(err, &ie) || ie.Path != "mpi.teams" || !strings.Contains(err.Error(), "pool b") {
		t.Fatalf("got %v, want teams over pool b", err)
	}
	r, err := RenderMPI(o, MPIOptions{Pools: pools, Teams: map[string]Team{"cfd": {GPUs: 16}, "fea": {GPUs: 4, Pool: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	fl := clusterQueues(t, r)["fea"].Spec.ResourceGroups[0].Flavors
	if len(fl) != 2 || fl[0].Name != "b" || fl[0].Resources[0].NominalQuota.Value() != 4 || fl[1].Name != "a" || !fl[1].Resources[0].NominalQuota.IsZero() {
		t.Errorf("fea flavors %+v", fl)
	}
	_, err = RenderMPI(o, MPIOptions{Pools: pools, Teams: map[string]Team{"cfd": {GPUs: 1, Pool: "c"}}})
	if !errors.As(err, &ie) || ie.Path != `mpi.teams["cfd"].pool` {
		t.Errorf("unknown pool: got %v", err)
	}
}

// Without teams, one team has every GPU in the workload namespace, and the job templates use it.
func TestDefaultTeam(t *testing.T) {
	o := Options{Scenario: "molecular_dynamics", Nodes: 2, GPUsPerNode: 8}
	r, err := RenderMPI(o, MPIOptions{Pools: []Pool{{Name: "md-gpu", Nodes: 2, GPUsPerNode: 8}, {Name: "md-b", Nodes: 1, GPUsPerNode: 8}}})
	if err != nil {
		t.Fatal(err)
	}
	team, ok := r.Teams[DefaultTeam]
	if !ok || len(r.Teams) != 1 || team.GPUs != 24 || team.Namespace != DefaultWorkloadNamespace {
		t.Fatalf("teams %+v", r.Teams)
	}
	for _, j := range mpiJobs(t, r) {
		if j.Namespace != DefaultWorkloadNamespace || j.Labels[QueueNameLabel] != DefaultTeam {
			t.Errorf("%s: namespace %s queue %s", j.Name, j.Namespace, j.Labels[QueueNameLabel])
		}
	}
}

func TestTeamBadInput(t *testing.T) {
	o := Options{Scenario: "molecular_dynamics", Nodes: 2, GPUsPerNode: 8}
	pools := []Pool{{Name: "md-gpu", Nodes: 2, GPUsPerNode: 8}}
	for _, c := range []struct {
		teams map[string]Team
		field string
	}{
		{map[string]Team{"Chem": {GPUs: 1}}, "mpi.teams"},
		{map[string]Team{"chem": {GPUs: -1}}, `mpi.teams["chem"].gpus`},
		{map[string]Team{"chem": {GPUs: 1, Namespace: "Chem_NS"}}, `mpi.teams["chem"].namespace`},
	} {
		_, err := RenderMPI(o, MPIOptions{Pools: pools, Teams: c.teams})
		var ie *planerr.Error
		if !errors.As(err, &ie) || ie.Path != c.field {
			t.Errorf("%v: got %v, want a *planerr.Error on %s", c.teams, err, c.field)
		}
	}
}
