package catalog_test

import (
	"fmt"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
)

func ExampleSelect() {
	cands, reqFindings, err := catalog.Select(catalog.SelectRequest{
		Scenario: catalog.ScenarioMolecularDynamics,
		GPUModel: "A10",
		Nodes:    1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range reqFindings {
		fmt.Println(f.Severity, f.Code)
	}
	best := cands[0]
	fmt.Println(best.InstanceType.Name)
	for _, f := range best.Findings {
		fmt.Println(f.Severity, f.Code, "-", f.Measured)
	}
	// Output:
	// warning matrix_contradiction
	// ecs.gn7i-c8g1.2xlarge
	// warning memory_bandwidth - 600 GB/s, gn7i-c8g1.2xlarge (A10)
	// warning fp64 - ~0.98 TFLOPS, gn7i-c8g1.2xlarge (A10)
}

func ExampleCheck() {
	fs, _ := catalog.Check(catalog.ScenarioAITraining, "sccgn7ex.32xlarge", catalog.CheckOptions{Nodes: 4})
	for _, f := range fs {
		fmt.Println(f.Severity, f.Code)
	}
	// Output:
	// error hpc_cluster_required
	// info model_not_stated
}

func ExampleInstanceTypeFor() {
	t, _ := catalog.InstanceTypeFor("H100", 8)
	fmt.Println(t.Name, t.GPUVendorName)
	_, err := catalog.InstanceTypeFor("A100-40GB", 2)
	fmt.Println(err)
	// Output:
	// ecs.gn8v-8x.16xlarge model not stated (Hopper class, 96 GB HBM3, 4 TB/s, 39.5 TFLOPS FP32)
	// GPU count per node not offered: A100-40GB is not offered with 2 GPUs per node; sizes that exist (GPUs per node by family): gn7: 1, 4, 8; ebmgn7: 8
}

func ExampleCheckDisk() {
	fmt.Println(catalog.CheckDisk("cloud_essd", "PL2", 100))
	iops, mbps := catalog.DiskPerformance("PL1", 100)
	fmt.Println(iops, mbps)
	// Output:
	// invalid disk: ESSD PL2 needs at least 461 GiB, got 100 GiB; use PL1 for 100 GiB or grow the disk to 461 GiB
	// 6800 170
}
