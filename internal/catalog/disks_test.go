package catalog

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckDisk(t *testing.T) {
	tests := []struct {
		category, level string
		size            int
		wantErr         []string // substrings; nil = valid
	}{
		{"cloud_essd", "PL0", 1, nil},
		{"cloud_essd", "pl1", 20, nil},
		{"cloud_essd", "PL1", 19, []string{"PL1 needs at least 20 GiB", "use PL0"}},
		{"cloud_essd", "PL2", 461, nil},
		{"cloud_essd", "PL2", 460, []string{"PL2 needs at least 461 GiB", "use PL1"}},
		{"cloud_essd", "PL3", 1261, nil},
		{"cloud_essd", "PL3", 1000, []string{"PL3 needs at least 1261 GiB", "use PL2"}},
		{"cloud_essd", "PL3", 65536, nil},
		{"cloud_essd", "PL3", 65537, []string{"at most 65536 GiB"}},
		{"cloud_essd", "PL0", 0, []string{"PL0 needs at least 1 GiB"}},
		{"cloud_essd", "", 100, []string{"PL0, PL1, PL2, PL3"}},
		{"cloud_essd", "PL4", 100, []string{"PL0, PL1, PL2, PL3"}},
		{"cloud_auto", "", 1, nil},
		{"cloud_auto", "AutoPL", 65536, nil},
		{"cloud_auto", "PL1", 100, []string{"takes no performance level"}},
		{"cloud_auto", "", 0, []string{"at least 1 GiB"}},
		{"elastic_ephemeral_disk_standard", "", 64, nil},
		{"elastic_ephemeral_disk_premium", "", 8192, nil},
		{"elastic_ephemeral_disk_premium", "", 63, []string{"at least 64 GiB"}},
		{"elastic_ephemeral_disk_standard", "", 8193, []string{"at most 8192 GiB"}},
		{"cloud_ssd", "", 100, []string{"unknown disk category", "cloud_essd, cloud_auto"}},
	}
	for _, tt := range tests {
		err := CheckDisk(tt.category, tt.level, tt.size)
		if tt.wantErr == nil {
			if err != nil {
				t.Errorf("CheckDisk(%s, %s, %d) = %v", tt.category, tt.level, tt.size, err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidDisk) {
			t.Errorf("CheckDisk(%s, %s, %d) = %v, want ErrInvalidDisk", tt.category, tt.level, tt.size, err)
			continue
		}
		for _, s := range tt.wantErr {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("CheckDisk(%s, %s, %d) = %q, want %q in it", tt.category, tt.level, tt.size, err, s)
			}
		}
	}
}

// Formulas of SOURCES.md section 3, evaluated by hand.
func TestDiskPerformance(t *testing.T) {
	tests := []struct {
		level      string
		size       int
		iops, mbps int
	}{
		{"PL0", 40, 1800 + 12*40, 110}, // 2280, 100+10
		{"PL0", 1000, 10000, 180},      // capped
		{"PL1", 20, 2800, 130},         // 1800+1000, 120+10
		{"PL1", 100, 6800, 170},        // 1800+5000, 120+50
		{"PL1", 1000, 50000, 350},      // 51800 -> 50000, 620 -> 350
		{"PL2", 461, 24850, 350},       // 1800+23050, 120+230.5
		{"PL2", 2000, 100000, 750},     // capped
		{"PL3", 1261, 64850, 750},      // 1800+63050, 120+630.5
		{"PL3", 32768, 1000000, 4000},  // capped
		{"pl3", 10000, 501800, 4000},   // 1800+500000, 5120 -> 4000
		{"AutoPL", 10, 3000, 0},        // max(2300, 3000); throughput not stated
		{"AutoPL", 100, 6800, 0},       // 1800+5000
		{"cloud_auto", 2000, 50000, 0}, // capped
		{"PL9", 100, 0, 0},
		{"PL1", 0, 0, 0},
	}
	for _, tt := range tests {
		iops, mbps := DiskPerformance(tt.level, tt.size)
		if iops != tt.iops || mbps != tt.mbps {
			t.Errorf("DiskPerformance(%s, %d) = %d, %d; want %d, %d", tt.level, tt.size, iops, mbps, tt.iops, tt.mbps)
		}
	}
}

func TestAutoPLMaxProvisionedIOPS(t *testing.T) {
	tests := map[int]int{
		1:    0,     // 1000 - 3000 < 0
		10:   7000,  // 10000 - 3000
		40:   36200, // 40000 - 3800
		50:   45700, // 50000 - 4300
		100:  50000, // 93200 capped
		1000: 50000, // capped
		0:    0,
	}
	for size, want := range tests {
		if got := AutoPLMaxProvisionedIOPS(size); got != want {
			t.Errorf("AutoPLMaxProvisionedIOPS(%d) = %d, want %d", size, got, want)
		}
	}
}

func TestScenariosMatchSources(t *testing.T) {
	ai, _ := LookupScenario(ScenarioAITraining)
	md, _ := LookupScenario(ScenarioMolecularDynamics)
	es, _ := LookupScenario(ScenarioEngineeringSimulation)
	if ai.MinGPUMemoryGB != 80 || ai.MinGPULinkGBs != 400 || !ai.NeedsInterNodeRDMA || ai.NeedsFP64 || ai.GPUUtilAlertPercent != 85 {
		t.Errorf("ai_training: %+v", ai)
	}
	if md.MinMemoryBandwidthGBs != 1000 || !md.NeedsFP64 || !md.NeedsInterNodeRDMA || md.MinGPUMemoryGB != 0 || md.MinParallelEfficiency != 0.9 {
		t.Errorf("molecular_dynamics: %+v", md)
	}
	if !es.NeedsFP64 || !es.NeedsECC || es.MinMTBFHours != 5000 || es.NeedsInterNodeRDMA || es.MinMemoryBandwidthGBs != 0 {
		t.Errorf("engineering_simulation: %+v", es)
	}
	want := map[string]string{ScenarioAITraining: "A100,H100", ScenarioMolecularDynamics: "A40,A10", ScenarioEngineeringSimulation: "T4,V100S"}
	for _, s := range Scenarios() {
		if got := strings.Join(s.RecommendedModels, ","); got != want[s.Name] {
			t.Errorf("%s matrix %s, want %s", s.Name, got, want[s.Name])
		}
		for _, m := range s.RecommendedModels {
			if _, err := MapGPUModel(m); err != nil {
				t.Errorf("%s recommends unknown model %s", s.Name, m)
			}
		}
	}
}
