package catalog

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fuzz targets below feed the catalog's name parsers whatever a user might type in HCL.
// Seeds live in testdata/fuzz/<Target>/ and run as ordinary tests with `go test`; `make fuzz`
// explores further. Besides "no panic", each target checks what a caller relies on.

// FuzzParseGPUModel: a name either resolves to a catalog model that resolves to itself again
// (by its own name and every alias), or fails with ErrUnknownGPUModel quoting the input and
// listing the known models.
func FuzzParseGPUModel(f *testing.F) {
	for _, s := range []string{"A100", "a100-80gb", "NVIDIA Tesla V100", " h100 ", "Z900", "", "nvidia", "A100__80GB", "\x00", "tesla nvidia t4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseGPUModel(s)
		if err != nil {
			if !errors.Is(err, ErrUnknownGPUModel) {
				t.Fatalf("ParseGPUModel(%q): error %v is not ErrUnknownGPUModel", s, err)
			}
			if !strings.Contains(err.Error(), "known models are") {
				t.Fatalf("ParseGPUModel(%q): error %q does not list the known models", s, err)
			}
			return
		}
		if m.Name == "" {
			t.Fatalf("ParseGPUModel(%q) returned a model without a name", s)
		}
		for _, spelling := range append([]string{m.Name}, m.Aliases...) {
			again, err := ParseGPUModel(spelling)
			if err != nil || again.Name != m.Name {
				t.Fatalf("ParseGPUModel(%q) = %s, but its spelling %q resolves to %q (%v)", s, m.Name, spelling, again.Name, err)
			}
		}
	})
}

// FuzzParseInstanceType: a name resolves to a catalog type whose own name resolves to it (the
// lookup is case- and prefix-insensitive), or fails with ErrUnknownInstanceType naming the
// family's sizes or the known families.
func FuzzParseInstanceType(f *testing.F) {
	for _, s := range []string{"ecs.gn7e-c16g1.32xlarge", "GN7E-C16G1.32XLARGE", "ecs.gn7e-c16g1.64xlarge", "gn7i", "ecs.", ".", "-", "ecs.ecs.gn7", "", " ecs.sccgn7ex.32xlarge "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		it, err := ParseInstanceType(s)
		if err != nil {
			if !errors.Is(err, ErrUnknownInstanceType) {
				t.Fatalf("ParseInstanceType(%q): error %v is not ErrUnknownInstanceType", s, err)
			}
			if !strings.Contains(err.Error(), "famil") {
				t.Fatalf("ParseInstanceType(%q): error %q names neither the family's sizes nor the known families", s, err)
			}
			return
		}
		if !strings.HasPrefix(it.Name, "ecs.") || !strings.HasPrefix(it.ShortName(), it.Family) {
			t.Fatalf("ParseInstanceType(%q) = %q (family %q): not an ecs.<family>... name", s, it.Name, it.Family)
		}
		for _, spelling := range []string{it.Name, it.ShortName(), strings.ToUpper(it.Name)} {
			again, ok := LookupInstanceType(spelling)
			if !ok || again.Name != it.Name {
				t.Fatalf("ParseInstanceType(%q) = %s, but %q looks up %q (%v)", s, it.Name, spelling, again.Name, ok)
			}
		}
	})
}

// FuzzMapGPUModel: a mapping names at least one catalog model, every model it names exists,
// every family it names offers one of them, and a substitute comes with a warning. The same
// input then goes through InstanceTypeFor with a fuzzed GPU count: the type returned has
// exactly that many GPUs of a mapped model, or the error says which counts exist.
func FuzzMapGPUModel(f *testing.F) {
	for _, s := range []string{"A100", "V100", "H100", "A40", "V100S", "t4", "Hopper", "a10", "B200", ""} {
		for _, n := range []int{8, 3} {
			f.Add(s, n)
		}
	}
	f.Add("A100", -1)
	f.Add("L20", 1<<40)
	f.Fuzz(func(t *testing.T, s string, gpus int) {
		mm, err := MapGPUModel(s)
		if err != nil {
			if !errors.Is(err, ErrUnknownGPUModel) {
				t.Fatalf("MapGPUModel(%q): error %v is not ErrUnknownGPUModel", s, err)
			}
			if _, err := InstanceTypeFor(s, gpus); err == nil {
				t.Fatalf("InstanceTypeFor(%q, %d) succeeded where MapGPUModel fails", s, gpus)
			}
			return
		}
		if mm.Requested == "" || len(mm.Models) == 0 {
			t.Fatalf("MapGPUModel(%q) = %+v: no request or no models", s, mm)
		}
		for _, name := range mm.Models {
			if _, ok := modelByName(name); !ok {
				t.Fatalf("MapGPUModel(%q) names model %q, which the catalog lacks", s, name)
			}
		}
		for _, fam := range mm.Families {
			ok := false
			for _, it := range FamilyTypes(fam) {
				for _, name := range mm.Models {
					ok = ok || it.GPU == name
				}
			}
			if !ok {
				t.Fatalf("MapGPUModel(%q) names family %s, which offers none of %v", s, fam, mm.Models)
			}
		}
		if mm.Substitute && (len(mm.Findings) == 0 || mm.Findings[0].Severity != SeverityWarning) {
			t.Fatalf("MapGPUModel(%q) substitutes without a warning: %+v", s, mm.Findings)
		}

		it, err := InstanceTypeFor(s, gpus)
		if err != nil {
			if !errors.Is(err, ErrGPUCountNotOffered) || !strings.Contains(err.Error(), "sizes that exist") {
				t.Fatalf("InstanceTypeFor(%q, %d): error %v does not say which sizes exist", s, gpus, err)
			}
			return
		}
		if it.GPUs != gpus {
			t.Fatalf("InstanceTypeFor(%q, %d) = %s with %d GPUs", s, gpus, it.Name, it.GPUs)
		}
		mapped := false
		for _, name := range mm.Models {
			mapped = mapped || it.GPU == name
		}
		if !mapped {
			t.Fatalf("InstanceTypeFor(%q, %d) = %s (%s), not one of %v", s, gpus, it.Name, it.GPU, mm.Models)
		}
		if !utf8.ValidString(it.Name) {
			t.Fatalf("InstanceTypeFor(%q, %d) returned a name that is not UTF-8", s, gpus)
		}
	})
}
