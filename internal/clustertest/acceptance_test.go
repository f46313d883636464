package clustertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// gateRoot is a control plane of one node and a pool of size 8-GPU A100 nodes (NVLink inside a
// node, eRDMA between them), its type pinned, gated by acceptance (an HCL object's body, "" for none).
func gateRoot(size int, acceptance string) string {
	pool := fmt.Sprintf(`
resource "gpucluster_node_pool" "gpu" {
  name          = "gate-gpu"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "ai_training"
  instance_type = "ecs.ebmgn7ex.32xlarge" # 8 A100 80 GB: pinned, so no gpus_per_node to read the GPUs from
  size          = %d
  acceptance    = %s
  kubernetes = {
    api_endpoint    = gpucluster_control_plane_endpoint.api.endpoint
    api_server_name = gpucluster_control_plane_endpoint.api.api_server_name
    join_token      = "abcdef.0123456789abcdef"
    ca_cert_hash    = gpucluster_cluster_ca.ca.ca_cert_hash
  }
}

output "stack" {
  value = jsonencode(gpucluster_node_pool.gpu.acceptance_results)
}
`, size, acceptance)
	return endpointRootHead("gate", "10.33.0.0/16") + etcdPool("control", "gate-cp", "ecs.g7.xlarge", 1, true) + pool
}

// gateNode is one node of acceptance_results.
type gateNode struct {
	InstanceID string  `json:"instance_id"`
	Passed     bool    `json:"passed"`
	DCGM       string  `json:"dcgm"`
	BusBWGBs   float64 `json:"busbw_gbs"`
	FloorGBs   float64 `json:"floor_gbs"`
	Failure    string  `json:"failure"`
}

// gateResults is the pool's acceptance_results as the stack output has them.
type gateResults struct {
	Passed            bool       `json:"passed"`
	Nodes             []gateNode `json:"nodes"`
	AllReduceBusBWGBs float64    `json:"all_reduce_busbw_gbs"`
	AllReduceFloorGBs float64    `json:"all_reduce_floor_gbs"`
	Replaced          []string   `json:"replaced"`
}

// degradeNextGPUInstance asks the emulator to launch the next GPU instance with GPU 3's NVLink at
// 100 GB/s (both directions; an A100's is 600), as a node whose NVLink trained at a fraction of
// its links would be.
func (s *stack) degradeNextGPUInstance(t *testing.T) {
	t.Helper()
	resp, err := http.Post(s.emu.URL+emulator.GPUFaultsPath, "application/json", strings.NewReader(`{"instance_id":"next","gpu":3,"nvlink_gbs":100}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST %s for the next instance: %s", emulator.GPUFaultsPath, resp.Status)
	}
}

// gpuInstances are the emulator's GPU instances that are not stopped.
func (s *stack) gpuInstances() []string {
	var ids []string
	for _, in := range s.emu.View().Instances {
		if in.GPUs > 0 && in.Status != "Stopped" {
			ids = append(ids, in.ID)
		}
	}
	return ids
}

// TestAccClusterAcceptanceGate (issue #33): a pool of two 8-GPU A100 nodes whose first node
// boots with an NVLink at a sixth of its bandwidth. The acceptance gate, run by the control-plane
// node through Cloud Assistant, finds that node's all-reduce under the floor, replaces it and
// passes the pool: the apply succeeds, the degraded instance is gone and the results name it as
// replaced. Then the pool grows by a node that boots degraded with max_replacements = 0: the
// apply fails naming the node, the check and the figure, and the node is kept. With the gate
// off, the same apply succeeds and the degraded node stays in the pool: the gate, not anything
// else, is what took the first one out.
func TestAccClusterAcceptanceGate(t *testing.T) {
	s := startStack(t)
	s.degradeNextGPUInstance(t)
	run := s.prepare(t, gateRoot(2, "{ control_plane_pool = \"gate-cp\" }"))
	run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	var res gateResults
	if err := json.Unmarshal([]byte(run.MustRun("output", "-raw", "-no-color", "stack")), &res); err != nil {
		t.Fatal(err)
	}
	if !res.Passed || len(res.Nodes) != 2 || len(res.Replaced) != 1 {
		t.Fatalf("acceptance_results %+v: want passed, two nodes, one replaced", res)
	}
	degraded := res.Replaced[0]
	if slices.Contains(s.gpuInstances(), degraded) {
		t.Errorf("the degraded instance %s is still running after the gate replaced it", degraded)
	}
	for _, n := range res.Nodes {
		if n.InstanceID == degraded || !n.Passed || n.DCGM != "passed" || n.FloorGBs <= 0 || n.BusBWGBs < n.FloorGBs {
			t.Errorf("node result %+v: want a passing node other than %s, its busbw over a positive floor", n, degraded)
		}
	}
	if res.AllReduceFloorGBs <= 0 || res.AllReduceBusBWGBs < res.AllReduceFloorGBs {
		t.Errorf("the all-reduce across the pool: %.1f GB/s against a floor of %.1f", res.AllReduceBusBWGBs, res.AllReduceFloorGBs)
	}

	// Exhausted: the third node boots degraded and the gate may replace none.
	s.degradeNextGPUInstance(t)
	run.Write(gateRoot(3, "{ control_plane_pool = \"gate-cp\", max_replacements = 0 }"))
	code, out := run.Run("apply", "-auto-approve", "-no-color", "-input=false")
	flat := strings.Join(strings.Fields(out), " ")
	if code == 0 {
		t.Fatalf("the apply with a degraded node and max_replacements = 0 succeeded:\n%s", out)
	}
	t.Logf("the apply with max_replacements = 0 failed as it should:\n%s", out)
	var third string
	for _, id := range s.gpuInstances() {
		if !slices.ContainsFunc(res.Nodes, func(n gateNode) bool { return n.InstanceID == id }) {
			third = id
		}
	}
	for _, want := range []string{"failed its acceptance gate", "node " + third, "all_reduce_perf over the node's 8 GPUs: busbw", "under the floor of", "max_replacements"} {
		if third == "" || !strings.Contains(flat, want) {
			t.Errorf("the failed apply does not say %q (the new node: %q):\n%s", want, third, out)
		}
	}

	// The gate off: the degraded node is not checked, and stays.
	run.Write(gateRoot(3, "{ control_plane_pool = \"gate-cp\", enabled = false }"))
	run.MustRun("apply", "-auto-approve", "-no-color", "-input=false")
	if !slices.Contains(s.gpuInstances(), third) {
		t.Errorf("with the gate off the degraded node %s went; want it kept (nothing but the gate replaces it)", third)
	}
}

// checkGatePassed: the scenario modules gate their fixed pools (on by default), so a fixed pool's
// acceptance_results pass for exactly its nodes, each with DCGM passed and, for several GPUs,
// its busbw over a positive floor; an autoscaling pool has none.
func checkGatePassed(pool string, autoscaling bool, res *gateResults, ids []string, gpusPerNode int64) error {
	if autoscaling {
		if res != nil {
			return fmt.Errorf("autoscaling pool %s has acceptance results %+v; the gate holds fixed pools only", pool, res)
		}
		return nil
	}
	if res == nil || !res.Passed || len(res.Nodes) != len(ids) {
		return fmt.Errorf("pool %s: acceptance_results %+v, want passed for its %d nodes", pool, res, len(ids))
	}
	for _, n := range res.Nodes {
		// A node of several GPUs was measured against a floor: a zero floor would pass anything.
		measured := gpusPerNode < 2 || n.FloorGBs > 0
		if !slices.Contains(ids, n.InstanceID) || !n.Passed || n.DCGM != "passed" || n.BusBWGBs < n.FloorGBs || !measured {
			return fmt.Errorf("pool %s: node result %+v, want a passing node of the pool (%v)", pool, n, ids)
		}
	}
	return nil
}
