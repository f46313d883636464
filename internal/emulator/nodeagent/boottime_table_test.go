package nodeagent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
)

// scenarioWorker is a scenario module's GPU worker as the modules configure it by default
// (modules/*/scenario_defaults.tf: the GPU model and the network's eRDMA; 8 GPUs per node;
// every scenario has a NAS or CPFS tier, mounted over NFS), on the type the catalog ranks first
// for it among those that need no HPC cluster (the modules' networks make none).
type scenarioWorker struct {
	scenario, gpuModel string
	erdma              bool
}

var scenarioWorkers = []scenarioWorker{
	{catalog.ScenarioAITraining, "A100-80GB", true},
	{catalog.ScenarioMolecularDynamics, "A100-80GB", true},
	{catalog.ScenarioEngineeringSimulation, "V100S", false},
}

// typeFor is the catalog's first candidate for the worker, as gpucluster_node_pool picks it.
func (w scenarioWorker) typeFor(t *testing.T) catalog.InstanceType {
	t.Helper()
	cands, _, err := catalog.Select(catalog.SelectRequest{Scenario: w.scenario, GPUModel: w.gpuModel, GPUsPerNode: 8, RequireERDMA: w.erdma, Nodes: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cands {
		if !c.InstanceType.RequiresHPCCluster {
			return c.InstanceType
		}
	}
	t.Fatalf("%s: no candidate without an HPC cluster", w.scenario)
	return catalog.InstanceType{}
}

// options are the worker's bootstrap options on it (gpuWorker's join, the scenario's install).
func (w scenarioWorker) options(t *testing.T, it catalog.InstanceType) bootstrap.Options {
	o := gpuWorker(testCAs(t)[0])
	o.ERDMA, o.NVSwitch = w.erdma && it.ERI, it.NVSwitch
	o.Mounts = []string{"file-system.cn-wulanchabu.nas.aliyuncs.com:/ /mnt/warm nfs vers=3,nolock,proto=tcp,_netdev,nofail 0 0"}
	return o
}

// bake is the image of the worker's install phases, pre-pulling what gpucluster_node_image does.
func (w scenarioWorker) bake(o bootstrap.Options) bootstrap.BakeOptions {
	b := workerBake()
	b.ERDMA, b.NVSwitch, b.NFS = o.ERDMA, o.NVSwitch, true
	return b
}

// modeled is the worker's status after one round, from a baked image or the public one.
func (w scenarioWorker) modeled(t *testing.T, baked bool) NodeStatus {
	t.Helper()
	it := w.typeFor(t)
	o := w.options(t, it)
	v := goodView(t)
	in := instanceByID(t, &v, "i-gpu1")
	in.UserData, in.Type, in.VCPUs, in.MemoryGiB, in.GPUs = userData(t, o), it.Name, it.VCPU, it.MemoryGiB, it.GPUs
	if baked {
		fromImage(t, &v, "i-gpu1", w.bake(o))
	}
	st := syncOnce(t, v, newFakeKube())["i-gpu1"]
	if st.Node == "" || st.Reason != "" {
		t.Fatalf("%s on %s (baked %v): node %q, reason %q; want it Ready", w.scenario, it.Name, baked, st.Node, st.Reason)
	}
	return st
}

// TestModeledTimeToReadyTable prints the modeled time to Ready of each scenario's GPU worker,
// from a baked image and from the public image (BENCHMARKS.md, "Modeled time to Ready"):
//
//	go test -run TestModeledTimeToReadyTable -v ./internal/emulator/nodeagent/
//
// It fails when a baked worker is not Ready in about a minute or one that installs everything is
// not several times slower.
func TestModeledTimeToReadyTable(t *testing.T) {
	var rows []string
	for _, w := range scenarioWorkers {
		it := w.typeFor(t)
		baked, public := w.modeled(t, true), w.modeled(t, false)
		if baked.ModeledReadySeconds > 90 || public.ModeledReadySeconds < 3*baked.ModeledReadySeconds {
			t.Errorf("%s: baked %.0f s, public image %.0f s; want about a minute, and at least three times that", w.scenario, baked.ModeledReadySeconds, public.ModeledReadySeconds)
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %.0f s | %.0f s (%.1f min) | %s |", w.scenario, strings.TrimPrefix(it.Name, "ecs."), features(w, it),
			baked.ModeledReadySeconds, public.ModeledReadySeconds, public.ModeledReadySeconds/60, longestStep(public)))
	}
	t.Logf("modeled time to Ready (RunInstances to the Ready condition):\n| scenario | instance type | installs | baked image | public image | longest step, public image |\n|---|---|---|---|---|---|\n%s",
		strings.Join(rows, "\n"))
}

func features(w scenarioWorker, it catalog.InstanceType) string {
	f := []string{"driver"}
	if it.NVSwitch {
		f = append(f, "Fabric Manager")
	}
	if w.erdma && it.ERI {
		f = append(f, "eRDMA")
	}
	return strings.Join(append(f, "NFS client"), ", ")
}

func longestStep(st NodeStatus) string {
	top := BootStep{}
	for _, s := range st.Boot {
		if s.Seconds > top.Seconds {
			top = s
		}
	}
	return fmt.Sprintf("%s %.0f s: %s", top.Phase, top.Seconds, top.DominatedBy)
}
