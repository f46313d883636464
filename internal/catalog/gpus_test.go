package catalog

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Datasheet figures from SOURCES.md section 1: memory GB, bandwidth GB/s, FP64,
// FP32, FP16 tensor TFLOPS, GPU-GPU link GB/s, the figures not stated, ECC as
// NVIDIA states it, and whether the FP64 figure is derived (not NVIDIA's).
func TestGPUModelFigures(t *testing.T) {
	tests := []struct {
		name                     string
		mem                      int
		bw, fp64, fp32, fp16, ln float64
		unstated                 []string
		ecc                      Tristate
		fp64Derived              bool
	}{
		{"H100", 80, 3350, 34, 67, 989, 900, []string{FigureECC}, Unknown, false},
		{"Hopper-96GB", 96, 4000, 0, 39.5, 0, 900, []string{FigureFP64, FigureTensorFP16, FigureECC}, Unknown, false},
		{"A100-80GB", 80, 2039, 9.7, 19.5, 312, 600, []string{FigureECC}, Unknown, false},
		{"A100-40GB", 40, 1555, 9.7, 19.5, 312, 600, []string{FigureECC}, Unknown, false},
		{"L20", 48, 864, 0, 59.3, 119, 64, []string{FigureECC}, Unknown, false},
		{"A40", 48, 696, 0.59, 37.4, 149.7, 112.5, nil, Yes, true},
		{"A10", 24, 600, 0.98, 31.2, 125, 0, []string{FigureECC}, Unknown, true},
		{"A30", 24, 0, 0, 0, 0, 0, []string{FigureMemoryBandwidth, FigureFP64, FigureFP32, FigureTensorFP16, FigureLink, FigureECC}, Unknown, false},
		{"V100S", 32, 1134, 8.2, 16.4, 130, 0, []string{FigureECC}, Unknown, false},
		{"V100-32GB", 32, 900, 7.8, 15.7, 125, 300, []string{FigureECC}, Unknown, false},
		{"V100-16GB", 16, 900, 7.8, 15.7, 125, 300, []string{FigureECC}, Unknown, false},
		{"T4", 16, 320, 0.25, 8.1, 65, 0, []string{FigureECC}, Unknown, true},
	}
	if got := GPUModelNames(); len(got) != len(tests) {
		t.Fatalf("GPUModelNames() = %v, want %d models", got, len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseGPUModel(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if m.Name != tt.name || m.MemoryGB != tt.mem || m.MemoryBandwidthGBs != tt.bw || m.FP64TFLOPS != tt.fp64 ||
				m.FP32TFLOPS != tt.fp32 || m.TensorFP16TFLOPS != tt.fp16 || m.LinkGBs != tt.ln {
				t.Errorf("got %+v", m)
			}
			if !slices.Equal(m.Unstated, tt.unstated) {
				t.Errorf("Unstated = %v, want %v", m.Unstated, tt.unstated)
			}
			if m.ECC != tt.ecc {
				t.Errorf("ECC = %q, want %q", m.ECC, tt.ecc)
			}
			if derived := m.FP64Derived != ""; derived != tt.fp64Derived {
				t.Errorf("FP64Derived = %q, want derived=%v", m.FP64Derived, tt.fp64Derived)
			}
			if m.FP64Derived != "" && (!strings.Contains(m.FP64Derived, "FP32") || !strings.Contains(m.Source, "not an NVIDIA figure")) {
				t.Errorf("derived FP64 must say from what and the source must say so: %q / %q", m.FP64Derived, m.Source)
			}
		})
	}
	l20, _ := ParseGPUModel("L20")
	if !l20.FP64NotApplicable {
		t.Error("L20 FP64 is n/a in the datasheet")
	}
}

func TestGPUModelRanksAndAliasesUnique(t *testing.T) {
	seen := map[string]string{}
	for i, m := range GPUModels() {
		if m.Rank != i+1 {
			t.Errorf("%s rank %d, want %d (table order is rank order)", m.Name, m.Rank, i+1)
		}
		for _, a := range append([]string{m.Name}, m.Aliases...) {
			if other, dup := seen[normModel(a)]; dup {
				t.Errorf("alias %q of %s collides with %s", a, m.Name, other)
			}
			seen[normModel(a)] = m.Name
		}
	}
}

func TestParseGPUModel(t *testing.T) {
	tests := map[string]string{
		"a100": "A100-80GB", "A100-80GB": "A100-80GB", "a100 80gb": "A100-80GB", "NVIDIA A100-40GB": "A100-40GB",
		"a100_40g": "A100-40GB", "h100": "H100", "H100-SXM5": "H100", "hopper": "Hopper-96GB", "v100s": "V100S",
		"V100": "V100-32GB", "v100-16gb": "V100-16GB", "l20": "L20", "Tesla T4": "T4", "a10": "A10", "A30": "A30", "a40": "A40",
	}
	for in, want := range tests {
		m, err := ParseGPUModel(in)
		if err != nil || m.Name != want {
			t.Errorf("ParseGPUModel(%q) = %q, %v; want %q", in, m.Name, err, want)
		}
	}
	for _, bad := range []string{"", "h200", "a1000", "rtx4090"} {
		_, err := ParseGPUModel(bad)
		if !errors.Is(err, ErrUnknownGPUModel) || !strings.Contains(err.Error(), "A100-80GB, Hopper-96GB, A100-40GB") {
			t.Errorf("ParseGPUModel(%q) error %v should list the known models", bad, err)
		}
	}
}

func TestMapGPUModel(t *testing.T) {
	tests := []struct {
		in         string
		requested  string
		families   []string
		substitute bool
		codes      []string
	}{
		{"A100", "A100", []string{"gn7e", "ebmgn7e", "ebmgn7ex", "sccgn7ex", "gn7", "ebmgn7"}, false, []string{"info:series_request"}},
		{"a100-40gb", "A100-40GB", []string{"gn7", "ebmgn7"}, false, nil},
		{"A100-80GB", "A100-80GB", []string{"gn7e", "ebmgn7e", "ebmgn7ex", "sccgn7ex"}, false, nil},
		{"H100", "H100", []string{"gn8v", "ebmgn8v", "gn8v-tee"}, true, []string{"warning:model_substitute"}},
		{"Hopper-96GB", "Hopper-96GB", []string{"gn8v", "ebmgn8v", "gn8v-tee"}, false, nil},
		{"A40", "A40", []string{"gn8is", "ebmgn8is", "ebmgn8ia", "gn7i", "ebmgn7i"}, true, []string{"warning:model_substitute"}},
		{"V100S", "V100S", []string{"gn6e", "ebmgn6e", "gn6v", "ebmgn6v"}, true, []string{"warning:model_substitute"}},
		{"v100", "V100", []string{"gn6e", "ebmgn6e", "gn6v", "ebmgn6v"}, false, []string{"info:series_request"}},
		{"A10", "A10", []string{"gn7i", "ebmgn7i"}, false, nil},
		{"T4", "T4", []string{"gn6i", "ebmgn6i"}, false, nil},
		{"L20", "L20", []string{"gn8is", "ebmgn8is", "ebmgn8ia"}, false, nil},
		{"A30", "A30", []string{"gn7s"}, false, nil},
		{"V100-16GB", "V100-16GB", []string{"gn6v", "ebmgn6v"}, false, nil},
		{"V100-32GB", "V100-32GB", []string{"gn6e", "ebmgn6e"}, false, nil},
	}
	for _, tt := range tests {
		mm, err := MapGPUModel(tt.in)
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if mm.Requested != tt.requested || !slices.Equal(mm.Families, tt.families) || mm.Substitute != tt.substitute || !slices.Equal(codes(mm.Findings), tt.codes) {
			t.Errorf("MapGPUModel(%q) = %+v, codes %v", tt.in, mm, codes(mm.Findings))
		}
	}
	mm, _ := MapGPUModel("H100")
	if f := mm.Findings[0]; !strings.Contains(f.Message, "publishes no FP64 or tensor throughput") || strings.Contains(f.Hint, "Fine for") {
		t.Errorf("H100 warning must say the vendor publishes no throughput and make no throughput claim: %+v", f)
	}
}

// codes renders findings as "severity:code" in order.
func codes(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Severity)+":"+f.Code)
	}
	return out
}
