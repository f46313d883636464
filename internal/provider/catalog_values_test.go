package provider

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

func names(ts []catalog.InstanceType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ShortName()
	}
	return out
}

func TestFilterCatalog(t *testing.T) {
	null := catalogFilterModel{
		GPUModel: types.StringNull(), Family: types.StringNull(), MinGPUMemoryGB: types.Int64Null(), MinGPUs: types.Int64Null(),
		FP64: types.BoolNull(), ERDMA: types.BoolNull(), BareMetal: types.BoolNull(),
	}
	with := func(edit func(*catalogFilterModel)) catalogFilterModel { f := null; edit(&f); return f }
	tests := map[string]struct {
		filter catalogFilterModel
		check  func(t *testing.T, got []catalog.InstanceType)
	}{
		"no filter lists every GPU type and no CPU type": {null, func(t *testing.T, got []catalog.InstanceType) {
			if len(got) != len(catalog.GPUInstanceTypes()) {
				t.Errorf("got %d types, want the %d GPU types", len(got), len(catalog.GPUInstanceTypes()))
			}
		}},
		"a CPU family named is listed": {with(func(f *catalogFilterModel) { f.Family = types.StringValue("c7") }), func(t *testing.T, got []catalog.InstanceType) {
			if len(got) == 0 || got[0].IsGPU() {
				t.Errorf("got %v, want the c7 sizes", names(got))
			}
		}},
		"fp64 true keeps only V100 and A100 classes": {with(func(f *catalogFilterModel) { f.FP64 = types.BoolValue(true) }), func(t *testing.T, got []catalog.InstanceType) {
			for _, it := range got {
				if !strings.HasPrefix(it.GPU, "A100") && !strings.HasPrefix(it.GPU, "V100") {
					t.Errorf("%s (%s) passed fp64 = true", it.Name, it.GPU)
				}
			}
			if len(got) == 0 {
				t.Error("nothing passed fp64 = true")
			}
		}},
		"fp64 false keeps the rest, Hopper included (FP64 not stated)": {with(func(f *catalogFilterModel) { f.FP64 = types.BoolValue(false) }), func(t *testing.T, got []catalog.InstanceType) {
			if !slices.Contains(names(got), "gn8v-8x.48xlarge") || slices.Contains(names(got), "gn7e-c16g1.4xlarge") {
				t.Errorf("got %v", names(got))
			}
		}},
		"erdma true": {with(func(f *catalogFilterModel) { f.ERDMA = types.BoolValue(true) }), func(t *testing.T, got []catalog.InstanceType) {
			for _, it := range got {
				if !it.ERI {
					t.Errorf("%s has no ERI", it.Name)
				}
			}
		}},
		"bare_metal false drops ebm types": {with(func(f *catalogFilterModel) { f.BareMetal = types.BoolValue(false) }), func(t *testing.T, got []catalog.InstanceType) {
			for _, it := range got {
				if it.BareMetal {
					t.Errorf("%s is bare metal", it.Name)
				}
			}
		}},
		"H100 is served by gn8v, ebmgn8v and gn8v-tee": {with(func(f *catalogFilterModel) { f.GPUModel = types.StringValue("h100") }), func(t *testing.T, got []catalog.InstanceType) {
			if fams := familiesOf(got); !slices.Equal(fams, []string{"gn8v", "ebmgn8v", "gn8v-tee"}) {
				t.Errorf("families %v", fams)
			}
		}},
		"memory and GPU minimums": {with(func(f *catalogFilterModel) { f.MinGPUMemoryGB = types.Int64Value(90); f.MinGPUs = types.Int64Value(8) }), func(t *testing.T, got []catalog.InstanceType) {
			if want := []string{"gn8v-8x.16xlarge", "gn8v-8x.48xlarge", "ebmgn8v.48xlarge", "gn8v-tee-8x.16xlarge", "gn8v-tee-8x.48xlarge"}; !slices.Equal(names(got), want) {
				t.Errorf("got %v, want %v", names(got), want)
			}
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, _, err := filterCatalog(tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, got)
		})
	}
	if _, _, err := filterCatalog(with(func(f *catalogFilterModel) { f.GPUModel = types.StringValue("B200") })); err == nil || !strings.Contains(err.Error(), "known models are") {
		t.Errorf("unknown model: got %v", err)
	}
}

// The fp64 filter and the scenarios' FP64 check must agree on every GPU type.
func TestUsableFP64AgreesWithCheck(t *testing.T) {
	for _, it := range catalog.GPUInstanceTypes() {
		fs, err := catalog.Check(catalog.ScenarioMolecularDynamics, it.Name, catalog.CheckOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fp64Finding := slices.ContainsFunc(fs, func(f catalog.Finding) bool { return f.Code == catalog.CodeFP64 })
		if hasUsableFP64(it) == fp64Finding {
			t.Errorf("%s: fp64_usable %v but the molecular_dynamics check reports fp64 finding %v", it.Name, hasUsableFP64(it), fp64Finding)
		}
	}
}

func TestUnstatedFiguresAreNull(t *testing.T) {
	models, err := gpuModelsFor(types.StringValue("H100"))
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 2 || models[0].Name.ValueString() != "H100" || models[1].Name.ValueString() != "Hopper-96GB" {
		t.Fatalf("models for H100: %+v", models)
	}
	if !models[1].FP64TFLOPS.IsNull() || !models[1].TensorFP16TFLOPS.IsNull() || models[1].FP32TFLOPS.ValueFloat64() != 39.5 {
		t.Errorf("Hopper-96GB: fp64 %v tensor %v fp32 %v", models[1].FP64TFLOPS, models[1].TensorFP16TFLOPS, models[1].FP32TFLOPS)
	}
	l20, _ := catalog.ParseGPUModel("L20")
	if m := newGPUModelModel(l20); !m.FP64TFLOPS.IsNull() || !m.FP64NotApplicable.ValueBool() {
		t.Errorf("L20 FP64 n/a: got %v / %v", m.FP64TFLOPS, m.FP64NotApplicable)
	}
	g7, ok := catalog.LookupInstanceType("ecs.g7.xlarge")
	if !ok {
		t.Fatal("ecs.g7.xlarge is not in the catalog")
	}
	if m := newInstanceTypeModel(g7); !m.NetworkGbps.IsNull() {
		t.Errorf("g7 network bandwidth is not stated, got %v", m.NetworkGbps)
	}
}

func TestMergeLive(t *testing.T) {
	gn8v := catalog.FamilyTypes("gn8v")
	offered := []cloud.InstanceTypeOffer{
		{ID: gn8v[0].Name, Family: "ecs.gn8v", CPUCores: 16, MemoryGiB: 96, GPUs: 1, GPUSpec: "Hopper"},
		{ID: gn8v[1].Name, Family: "ecs.gn8v", CPUCores: 99, MemoryGiB: 128, GPUs: 1},
		{ID: "ecs.gn8v-16x.96xlarge", Family: "ecs.gn8v", GPUs: 16},
		{ID: "ecs.gn9x.large", Family: "ecs.gn9x", GPUs: 1},
	}
	// Short and full type names both index the same type; zones come out sorted.
	stock := stockByType([]cloud.InstanceTypeStock{
		{ZoneID: "z-b", InstanceType: gn8v[0].ShortName(), Status: "SoldOut", StatusCategory: "WithoutStock"},
		{ZoneID: "z-a", InstanceType: gn8v[0].Name, Status: "Available", StatusCategory: "WithStock"},
		{ZoneID: "z-c", InstanceType: gn8v[1].Name, Status: "SoldOut", StatusCategory: "ClosedWithoutStock"},
	})
	items, notOffered, unknown := mergeLive(gn8v, offered, stock, false)
	if len(items) != 2 || len(notOffered) != len(gn8v)-2 {
		t.Fatalf("%d items, not offered %v", len(items), notOffered)
	}
	first := items[0]
	if got := first.Zones; len(got) != 2 || got[0].ZoneID != "z-a" || got[1].Status != "SoldOut" {
		t.Errorf("zones of %s: %+v", first.Name, got)
	}
	if !slices.Equal(first.AvailableZoneIDs, []string{"z-a"}) || first.GPUSpec.ValueString() != "Hopper" {
		t.Errorf("available %v spec %v", first.AvailableZoneIDs, first.GPUSpec)
	}
	if items[1].VCPU.ValueInt64() != 99 {
		t.Errorf("vcpu must come from the API, got %v", items[1].VCPU)
	}
	// Unknown types only from the families asked.
	if !slices.Equal(unknown, []string{"ecs.gn8v-16x.96xlarge"}) {
		t.Errorf("unknown %v", unknown)
	}
	items, _, _ = mergeLive(gn8v, offered, stock, true)
	if len(items) != 1 || items[0].Name.ValueString() != gn8v[0].Name {
		t.Errorf("in_stock_only kept %d items", len(items))
	}
}

// Every candidate gpucluster_scenario offers passes scenario_check without an error: both check
// under the same deployment assumption.
func TestScenarioCheckAgreesWithSelect(t *testing.T) {
	for _, sc := range catalog.ScenarioNames() {
		for _, nodes := range []int{1, 4} {
			cands, _, err := catalog.Select(catalog.SelectRequest{Scenario: sc, Nodes: nodes})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cands {
				fs, ferr := scenarioCheck(sc, c.InstanceType.Name, int64(nodes))
				if ferr != nil {
					t.Fatal(ferr)
				}
				if catalog.HasErrors(fs) {
					t.Errorf("%s on %d nodes: candidate %s fails scenario_check: %v", sc, nodes, c.InstanceType.Name, fs)
				}
			}
		}
	}
}

func TestFunctionErrorsPointAtTheArgument(t *testing.T) {
	_, err := catalog.InstanceTypeFor("B200", 8)
	if fe := instanceTypeForError("B200", 8, err); fe.FunctionArgument == nil || *fe.FunctionArgument != 0 {
		t.Errorf("unknown model: %+v", fe)
	}
	_, err = catalog.InstanceTypeFor("A100", 3)
	if fe := instanceTypeForError("A100", 3, err); fe.FunctionArgument == nil || *fe.FunctionArgument != 1 || !strings.Contains(fe.Text, "gn7e: 1, 2, 4, 8") {
		t.Errorf("count not offered: %+v", fe)
	}
	if _, fe := scenarioCheck("ai_training", "gn7e-c16g1.64xlarge", 1); fe == nil || *fe.FunctionArgument != 1 {
		t.Errorf("unknown type: %+v", fe)
	}
}

// Schemas are valid and every attribute, nested ones included, has a MarkdownDescription.
func TestSchemasDescribeEveryAttribute(t *testing.T) {
	ctx := context.Background()
	for _, newDS := range []func() datasource.DataSource{newGPUCatalogDataSource, newScenarioDataSource, newInstanceTypesDataSource} {
		var resp datasource.SchemaResponse
		newDS().Schema(ctx, datasource.SchemaRequest{}, &resp)
		if resp.Diagnostics.HasError() {
			t.Fatal(resp.Diagnostics)
		}
		if diags := resp.Schema.ValidateImplementation(ctx); diags.HasError() {
			t.Fatal(diags)
		}
		checkDescribed(t, "", resp.Schema.Attributes)
	}
	for _, newFn := range []func() function.Function{newInstanceTypeForFunction, newScenarioCheckFunction} {
		var resp function.DefinitionResponse
		newFn().Definition(ctx, function.DefinitionRequest{}, &resp)
		for _, p := range resp.Definition.Parameters {
			if p.GetMarkdownDescription() == "" {
				t.Errorf("parameter %s has no MarkdownDescription", p.GetName())
			}
		}
	}
}

func checkDescribed(t *testing.T, prefix string, attrs map[string]schema.Attribute) {
	t.Helper()
	for name, a := range attrs {
		if a.GetMarkdownDescription() == "" {
			t.Errorf("%s%s has no MarkdownDescription", prefix, name)
		}
		switch n := a.(type) {
		case schema.ListNestedAttribute:
			checkDescribed(t, prefix+name+".", n.NestedObject.Attributes)
		case schema.SingleNestedAttribute:
			checkDescribed(t, prefix+name+".", n.Attributes)
		}
	}
}
