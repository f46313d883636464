package provider_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

func TestAccKubernetesManifests_mpi(t *testing.T) {
	emu := acctest.StartEmulator(t)
	const config = `
data "gpucluster_kubernetes_manifests" "md" {
  scenario      = "molecular_dynamics"
  node_count    = 4
  gpus_per_node = 8
  erdma         = true
  mpi = {
    pools = { md-gpu = { node_count = 4, gpus_per_node = 8 } }
    teams = { chem = { gpus = 16 }, cfd = { gpus = 16 } }
    job_team = "chem"
    min_parallel_efficiency_percent = 85
  }
}

data "gpucluster_kubernetes_manifests" "tcp" {
  scenario      = "engineering_simulation"
  node_count    = 2
  gpus_per_node = 4
  mpi = {
    pools  = { sim = { node_count = 2, gpus_per_node = 4 } }
    images = { openfoam = "registry.example.cn/mirror/openfoam-default:2406" }
  }
}
`
	md, tcp := "data.gpucluster_kubernetes_manifests.md", "data.gpucluster_kubernetes_manifests.tcp"
	mpi := tfjsonpath.New("mpi")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(md, mpi.AtMapKey("ranks"), knownvalue.Int64Exact(32)),
				statecheck.ExpectKnownValue(md, mpi.AtMapKey("teams").AtMapKey("cfd").AtMapKey("namespace"), knownvalue.StringExact("cfd")),
				statecheck.ExpectKnownValue(md, mpi.AtMapKey("teams").AtMapKey("cfd").AtMapKey("pool"), knownvalue.StringExact("md-gpu")),
				statecheck.ExpectKnownValue(tcp, mpi.AtMapKey("teams").AtMapKey("default").AtMapKey("gpus"), knownvalue.Int64Exact(8)),
				statecheck.ExpectKnownValue(tcp, mpi.AtMapKey("teams").AtMapKey("default").AtMapKey("namespace"), knownvalue.StringExact("gpu-workloads")),
				statecheck.ExpectKnownValue(md, mpi.AtMapKey("workers"), knownvalue.Int64Exact(4)),
				statecheck.ExpectKnownValue(md, mpi.AtMapKey("slots_per_worker"), knownvalue.Int64Exact(8)),
				statecheck.ExpectKnownValue(md, mpi.AtMapKey("molecular_dynamics_yaml"), knownvalue.StringRegexp(regexp.MustCompile(
					`(?s)kind: MPIJob\s+metadata:.*kueue.x-k8s.io/queue-name: chem\s+name: md-lammps\s+namespace: chem.*`+
						`mpirun --allow-run-as-root -np 32 -H md-lammps-worker-0.md-lammps.chem.svc:8,.*md-lammps-worker-3.md-lammps.chem.svc:8 .*--mca pml ucx.*UCX_NET_DEVICES=erdma_0:1.*`+
						`replicas: 4.*gpucluster.io/pool\s+operator: In\s+values:\s+- md-gpu.*suspend: true.*slotsPerWorker: 8`))),
				statecheck.ExpectKnownValue(md, mpi.AtMapKey("queues_yaml"), knownvalue.StringRegexp(regexp.MustCompile(
					`(?s)waitForPodsReady:\s+blockAdmission: true.*kind: ResourceFlavor.*gpucluster.io/pool: md-gpu.*kind: ClusterQueue.*cohortName: gpucluster-teams.*nominalQuota: "16".*kind: LocalQueue`))),
				statecheck.ExpectKnownValue(md, mpi.AtMapKey("validation_scaling_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`-v target=90 -v min=85`))),
				statecheck.ExpectKnownValue(md, mpi.AtMapKey("operator_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`image: `+regexp.QuoteMeta(mainlandRegistry)+`/mpi-operator:0.8.0\n`))),
				statecheck.ExpectKnownValue(tcp, mpi.AtMapKey("cfd_yaml"), knownvalue.StringRegexp(regexp.MustCompile(
					`(?s)queue-name: default\s+name: cfd-openfoam\s+namespace: gpu-workloads.*-np 8 .*--mca pml ob1 --mca btl tcp,vader,self.*image: registry.example.cn/mirror/openfoam-default:2406`))),
				statecheck.ExpectKnownValue(tcp, mpi.AtMapKey("horovod_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`mpirun --allow-run-as-root -np 8 -H horovod-synthetic-worker-0\S+:4,\S+:4 `))),
			},
		}},
	})
}

// Quotas that add up to more GPUs than the pool has fail at plan, naming mpi.teams, the quotas,
// the pool's size and the fix.
func TestAccKubernetesManifests_mpiErrors(t *testing.T) {
	emu := acctest.StartEmulator(t)
	cfg := func(mpi string) string {
		return emu.Config() + `
data "gpucluster_kubernetes_manifests" "x" {
  scenario      = "molecular_dynamics"
  node_count    = 4
  gpus_per_node = 8
  mpi           = ` + mpi + `
}
`
	}
	for _, step := range []resource.TestStep{
		{Config: cfg(`{ pools = { md-gpu = { node_count = 4, gpus_per_node = 8 } }, teams = { chem = { gpus = 32 }, cfd = { gpus = 16 } } }`),
			ExpectError: regexp.MustCompile(`(?s)mpi.teams "cfd=16, chem=32" guarantees 48 GPUs on pool md-gpu, which has 32\s+\(4 nodes x 8\s+GPUs\); lower the teams' gpus`)},
		{Config: cfg(`{ pools = { md-gpu = { node_count = 4, gpus_per_node = 8 } }, job_team = "bio" }`),
			ExpectError: regexp.MustCompile(`(?s)mpi.job_team "bio" is not one of the teams`)},
	} {
		step.PlanOnly = true
		resource.Test(t, resource.TestCase{
			PreCheck:                 func() { acctest.PreCheck(t) },
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
			Steps:                    []resource.TestStep{step},
		})
	}
}
