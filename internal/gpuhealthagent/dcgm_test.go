package gpuhealthagent

import (
	"testing"
)

func TestParseDCGM(t *testing.T) {
	text := `# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.
# TYPE DCGM_FI_DEV_XID_ERRORS gauge
DCGM_FI_DEV_XID_ERRORS{gpu="10",UUID="GPU-b",modelName="NVIDIA \"A100\", 80GB"} 48 1700000000000
DCGM_FI_DEV_XID_ERRORS{gpu="2",UUID="GPU-a"} 0
DCGM_FI_DEV_GPU_TEMP{gpu="2",UUID="GPU-a"} 41
DCGM_FI_DEV_ROW_REMAP_FAILURE{gpu="2",UUID="GPU-a"} 1
`
	got, err := ParseDCGM(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []GPUReading{{GPU: "2", UUID: "GPU-a", RowRemapFailure: true}, {GPU: "10", UUID: "GPU-b", LastXID: 48}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("ParseDCGM = %+v, want %+v (sorted by index, quoted commas kept in labels)", got, want)
	}
	findings := Assess(got)
	if len(findings) != 2 || findings[0].XID != 64 || findings[0].Action != "replace" || findings[1].XID != 48 || findings[1].Action != "reset" {
		t.Errorf("Assess = %+v, want GPU 2 replace (row remap failure), GPU 10 reset (XID 48)", findings)
	}
	for _, bad := range []string{
		"DCGM_FI_DEV_XID_ERRORS{UUID=\"GPU-a\"} 79", // no gpu label
		"DCGM_FI_DEV_XID_ERRORS{gpu=\"0\"} seventy", // not a number
		"DCGM_FI_DEV_XID_ERRORS{gpu=\"0} 79",        // unterminated value
	} {
		if _, err := ParseDCGM(bad); err == nil {
			t.Errorf("ParseDCGM(%q) = nil error, want one (the agent must change nothing on text it cannot read)", bad)
		}
	}
}
