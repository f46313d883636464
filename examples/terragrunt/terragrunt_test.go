// Package terragrunt_test checks the Terragrunt live stack without Terragrunt (which cannot be
// installed here): every file parses as HCL, every unit's source is an existing module, and each
// unit's inputs (with the root's) set every required variable of that module and no unknown one.
package terragrunt_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

const stackFile = "terragrunt.stack.hcl"

type unit struct {
	Name   string
	Source string // unit directory, relative to the stack
	Path   string // where `terragrunt stack generate` puts it, under .terragrunt-stack
}

func TestStack(t *testing.T) {
	stackDir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	units := parseStack(t, filepath.Join(stackDir, stackFile))
	if len(units) != 3 {
		t.Fatalf("%s: want one unit per scenario (3), got %d", stackFile, len(units))
	}
	rootInputs := parseRoot(t, filepath.Join(stackDir, "root.hcl"))

	seen := map[string]bool{}
	for _, u := range units {
		t.Run(u.Name, func(t *testing.T) {
			if seen[u.Path] {
				t.Fatalf("unit %q: path %q used twice", u.Name, u.Path)
			}
			seen[u.Path] = true
			unitDir := filepath.Join(stackDir, u.Source)
			// Units run from units/<name> and, after `stack generate`, from .terragrunt-stack/<path>:
			// the module source must resolve to the same module from both.
			generated := filepath.Join(stackDir, ".terragrunt-stack", u.Path)
			for _, p := range checkUnit(unitDir, generated, rootInputs) {
				t.Error(p)
			}
		})
	}
}

// TestCheckUnitCatchesMistakes makes sure the checks fail when they should: a unit that misses a
// required variable, sets an unknown one and points at a module that does not exist.
func TestCheckUnitCatchesMistakes(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("modules/m/variables.tf", `
variable "name" { type = string }
variable "size" {
  type    = number
  default = 2
}`)
	write("live/root.hcl", `inputs = {}`)
	write("live/units/a/terragrunt.hcl", `
include "root" {
  path = find_in_parent_folders("root.hcl")
}
terraform {
  source = "../../../modules//m"
}
inputs = {
  size  = 3
  sizee = 4
}`)
	write("live/units/b/terragrunt.hcl", `
include "root" {
  path = find_in_parent_folders("root.hcl")
}
terraform {
  source = "../../../modules//missing"
}
inputs = { name = "x" }`)

	problems := strings.Join(checkUnit(filepath.Join(dir, "live/units/a"), "", nil), "\n")
	for _, want := range []string{`required variable "name" is not set`, `input "sizee" is not a variable`} {
		if !strings.Contains(problems, want) {
			t.Errorf("unit a: want a problem %q, got:\n%s", want, problems)
		}
	}
	problems = strings.Join(checkUnit(filepath.Join(dir, "live/units/b"), "", nil), "\n")
	if !strings.Contains(problems, "no module") {
		t.Errorf("unit b: want a missing-module problem, got:\n%s", problems)
	}
}

func parseStack(t *testing.T, path string) []unit {
	t.Helper()
	body := parseFile(t, path)
	content, diags := body.Content(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: "unit", LabelNames: []string{"name"}},
		{Type: "stack", LabelNames: []string{"name"}},
		{Type: "locals"},
	}})
	if diags.HasErrors() {
		t.Fatalf("%s: %s", path, diags.Error())
	}
	var units []unit
	for _, b := range content.Blocks {
		if b.Type != "unit" {
			continue
		}
		attrs, diags := b.Body.JustAttributes()
		if diags.HasErrors() {
			t.Fatalf("%s: unit %q: %s", path, b.Labels[0], diags.Error())
		}
		u := unit{Name: b.Labels[0], Source: literal(t, attrs, "source"), Path: literal(t, attrs, "path")}
		units = append(units, u)
	}
	return units
}

// parseRoot returns the names of the inputs every unit inherits, and checks that root.hcl holds
// the remote state and provider settings.
func parseRoot(t *testing.T, path string) []string {
	t.Helper()
	body := parseFile(t, path)
	content, diags := body.Content(&hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "inputs"}},
		Blocks: []hcl.BlockHeaderSchema{
			{Type: "locals"}, {Type: "remote_state"}, {Type: "generate", LabelNames: []string{"name"}},
		},
	})
	if diags.HasErrors() {
		t.Fatalf("%s: %s", path, diags.Error())
	}
	var remoteState, provider bool
	for _, b := range content.Blocks {
		remoteState = remoteState || b.Type == "remote_state"
		provider = provider || (b.Type == "generate" && b.Labels[0] == "provider")
	}
	if !remoteState || !provider {
		t.Errorf("%s: want a remote_state block and a generate \"provider\" block", path)
	}
	keys, err := objectKeys(content.Attributes["inputs"])
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return keys
}

// checkUnit returns what is wrong with the unit in unitDir. generatedDir, if set, is where the
// stack puts a copy of the unit: its module source must resolve to the same module from there.
func checkUnit(unitDir, generatedDir string, inherited []string) []string {
	file := filepath.Join(unitDir, "terragrunt.hcl")
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, file+": "+fmt.Sprintf(format, args...)) }

	f, diags := hclparse.NewParser().ParseHCLFile(file)
	if diags.HasErrors() {
		fail("%s", diags.Error())
		return problems
	}
	content, diags := f.Body.Content(&hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "inputs"}},
		Blocks: []hcl.BlockHeaderSchema{
			{Type: "include", LabelNames: []string{"name"}}, {Type: "terraform"}, {Type: "locals"}, {Type: "dependency", LabelNames: []string{"name"}},
		},
	})
	if diags.HasErrors() {
		fail("%s", diags.Error())
		return problems
	}

	var source string
	included := false
	for _, b := range content.Blocks {
		attrs, diags := b.Body.JustAttributes()
		if diags.HasErrors() {
			fail("%s block: %s", b.Type, diags.Error())
			continue
		}
		switch b.Type {
		case "include":
			included = true
			if err := checkInclude(unitDir, attrs["path"]); err != nil {
				fail("include %q: %v", b.Labels[0], err)
			}
		case "terraform":
			a := attrs["source"]
			if a == nil {
				fail("terraform block has no source")
				continue
			}
			v, diags := a.Expr.Value(nil)
			if diags.HasErrors() || !v.Type().Equals(cty.String) {
				fail("terraform.source must be a plain string (the check resolves it without Terragrunt)")
				continue
			}
			source = v.AsString()
		}
	}
	if !included && len(inherited) > 0 {
		fail("no include of root.hcl, so the root's inputs, remote state and provider do not apply")
	}
	if source == "" {
		fail("no terraform.source")
		return problems
	}
	moduleDir := resolveSource(unitDir, source)
	if generatedDir != "" && resolveSource(generatedDir, source) != moduleDir {
		fail("source %q resolves to %s from the unit but to %s from .terragrunt-stack", source, moduleDir, resolveSource(generatedDir, source))
	}
	vars, err := moduleVariables(moduleDir)
	if err != nil {
		fail("source %q: no module at %s: %v", source, moduleDir, err)
		return problems
	}

	keys, err := objectKeys(content.Attributes["inputs"])
	if err != nil {
		fail("%v", err)
		return problems
	}
	inputs := append(slices.Clone(inherited), keys...)
	var names []string
	for n := range vars {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if vars[n] && !slices.Contains(inputs, n) {
			fail("required variable %q is not set (module %s)", n, moduleDir)
		}
	}
	for _, in := range keys {
		if _, ok := vars[in]; !ok {
			fail("input %q is not a variable of module %s (variables: %s)", in, moduleDir, strings.Join(names, ", "))
		}
	}
	for _, in := range inherited {
		if _, ok := vars[in]; !ok {
			fail("root.hcl input %q is not a variable of module %s", in, moduleDir)
		}
	}
	return problems
}

// resolveSource turns a local Terragrunt source ("../../modules//ai-training") into the module
// directory, relative to the unit.
func resolveSource(unitDir, source string) string {
	return filepath.Clean(filepath.Join(unitDir, strings.Replace(source, "//", "/", 1)))
}

// checkInclude accepts find_in_parent_folders("<file>") when the file exists in a parent directory.
func checkInclude(unitDir string, a *hcl.Attribute) error {
	if a == nil {
		return fmt.Errorf("no path")
	}
	call, ok := a.Expr.(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "find_in_parent_folders" || len(call.Args) != 1 {
		return fmt.Errorf("path must be find_in_parent_folders(\"root.hcl\")")
	}
	v, diags := call.Args[0].Value(nil)
	if diags.HasErrors() {
		return fmt.Errorf("find_in_parent_folders takes a plain file name here")
	}
	for dir := filepath.Dir(unitDir); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, v.AsString())); err == nil {
			return nil
		}
		if dir == filepath.Dir(dir) {
			return fmt.Errorf("%s not found in any parent of %s", v.AsString(), unitDir)
		}
	}
}

// moduleVariables parses every .tf file of a module: variable name -> required (no default).
func moduleVariables(dir string) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no .tf files")
	}
	parser := hclparse.NewParser()
	vars := map[string]bool{}
	for _, path := range files {
		f, diags := parser.ParseHCLFile(path)
		if diags.HasErrors() {
			return nil, fmt.Errorf("%s", diags.Error())
		}
		content, _, diags := f.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "variable", LabelNames: []string{"name"}}}})
		if diags.HasErrors() {
			return nil, fmt.Errorf("%s", diags.Error())
		}
		for _, b := range content.Blocks {
			attrs, _, diags := b.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "default"}}})
			if diags.HasErrors() {
				return nil, fmt.Errorf("%s", diags.Error())
			}
			_, hasDefault := attrs.Attributes["default"]
			vars[b.Labels[0]] = !hasDefault
		}
	}
	if len(vars) == 0 {
		return nil, fmt.Errorf("no variables")
	}
	return vars, nil
}

// objectKeys returns the keys of an `inputs = { ... }` object written literally; nil for no inputs.
func objectKeys(a *hcl.Attribute) ([]string, error) {
	if a == nil {
		return nil, nil
	}
	obj, ok := a.Expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return nil, fmt.Errorf("inputs must be an object written out, so its keys can be checked")
	}
	var keys []string
	for _, item := range obj.Items {
		k := hcl.ExprAsKeyword(item.KeyExpr)
		if k == "" {
			v, diags := item.KeyExpr.Value(nil)
			if diags.HasErrors() || !v.Type().Equals(cty.String) {
				return nil, fmt.Errorf("inputs key at %s is not a plain name", item.KeyExpr.Range())
			}
			k = v.AsString()
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func parseFile(t *testing.T, path string) hcl.Body {
	t.Helper()
	f, diags := hclparse.NewParser().ParseHCLFile(path)
	if diags.HasErrors() {
		t.Fatalf("%s", diags.Error())
	}
	return f.Body
}

func literal(t *testing.T, attrs hcl.Attributes, name string) string {
	t.Helper()
	a := attrs[name]
	if a == nil {
		t.Fatalf("missing %s", name)
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || !v.Type().Equals(cty.String) {
		t.Fatalf("%s at %s must be a plain string", name, a.Range)
	}
	return v.AsString()
}
