// Command docscheck fails when the registry docs would be incomplete: an attribute, nested
// attribute, block, function or parameter without a description, a resource without
// examples/resources/<type>/resource.tf and import.sh (unless it cannot be imported), an
// ephemeral resource without examples/ephemeral-resources/<type>/ephemeral-resource.tf, a data
// source without examples/data-sources/<type>/data-source.tf, or a function without
// examples/functions/<name>/function.tf. scripts/docs.sh runs it on the schema it hands to
// tfplugindocs:
//
//	go run ./tools/docscheck -schema schema.json -examples examples
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The parts of `tofu providers schema -json` this check reads.
type schemas struct {
	ProviderSchemas map[string]providerSchema `json:"provider_schemas"`
}

type providerSchema struct {
	Provider          schema              `json:"provider"`
	ResourceSchemas   map[string]schema   `json:"resource_schemas"`
	EphemeralSchemas  map[string]schema   `json:"ephemeral_resource_schemas"`
	DataSourceSchemas map[string]schema   `json:"data_source_schemas"`
	Functions         map[string]function `json:"functions"`
}

type schema struct {
	Block block `json:"block"`
}

type block struct {
	Attributes  map[string]attribute `json:"attributes"`
	BlockTypes  map[string]blockType `json:"block_types"`
	Description string               `json:"description"`
}

type blockType struct {
	Block block `json:"block"`
}

type attribute struct {
	Description string      `json:"description"`
	NestedType  *nestedType `json:"nested_type"`
}

type nestedType struct {
	Attributes map[string]attribute `json:"attributes"`
}

type function struct {
	Description       string      `json:"description"`
	Summary           string      `json:"summary"`
	Parameters        []parameter `json:"parameters"`
	VariadicParameter *parameter  `json:"variadic_parameter"`
}

type parameter struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

func main() {
	schemaPath := flag.String("schema", "", "output of `tofu providers schema -json`")
	examples := flag.String("examples", "examples", "the examples directory")
	flag.Parse()

	data, err := os.ReadFile(*schemaPath)
	if err != nil {
		fail(err)
	}
	var s schemas
	if err := json.Unmarshal(data, &s); err != nil {
		fail(fmt.Errorf("%s: %w", *schemaPath, err))
	}
	if len(s.ProviderSchemas) != 1 {
		fail(fmt.Errorf("%s: want one provider, found %d", *schemaPath, len(s.ProviderSchemas)))
	}
	var problems []string
	for _, ps := range s.ProviderSchemas {
		problems = check(ps, *examples)
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "docscheck:", p)
		}
		fail(fmt.Errorf("%d problem(s) above", len(problems)))
	}
}

// notImportable are the resources without import, and why; their pages say so instead of
// showing an import command.
var notImportable = map[string]string{
	"gpucluster_cluster_ca": "the CA exists only in state; there is no cloud object to read it back from",
	"gpucluster_node_image": "what an image holds (versions, registry, mirror, images) is not readable from the cloud; an interrupted create is adopted by the next apply instead",
}

func check(ps providerSchema, examples string) []string {
	var out []string
	missing := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	needFile := func(what string, parts ...string) {
		p := filepath.Join(append([]string{examples}, parts...)...)
		if _, err := os.Stat(p); err != nil {
			missing("%s has no example: %s", what, p)
		}
	}

	out = append(out, blockProblems("provider", ps.Provider.Block, false)...)
	needFile("provider", "provider", "provider.tf")
	for _, name := range sortedKeys(ps.ResourceSchemas) {
		out = append(out, blockProblems("resource "+name, ps.ResourceSchemas[name].Block, true)...)
		needFile("resource "+name, "resources", name, "resource.tf")
		if _, ok := notImportable[name]; !ok {
			needFile("resource "+name, "resources", name, "import.sh")
		}
	}
	for _, name := range sortedKeys(ps.EphemeralSchemas) {
		out = append(out, blockProblems("ephemeral resource "+name, ps.EphemeralSchemas[name].Block, true)...)
		needFile("ephemeral resource "+name, "ephemeral-resources", name, "ephemeral-resource.tf")
	}
	for _, name := range sortedKeys(ps.DataSourceSchemas) {
		out = append(out, blockProblems("data source "+name, ps.DataSourceSchemas[name].Block, true)...)
		needFile("data source "+name, "data-sources", name, "data-source.tf")
	}
	for _, name := range sortedKeys(ps.Functions) {
		f := ps.Functions[name]
		if strings.TrimSpace(f.Description) == "" && strings.TrimSpace(f.Summary) == "" {
			missing("function %s has no description", name)
		}
		params := f.Parameters
		if f.VariadicParameter != nil {
			params = append(params, *f.VariadicParameter)
		}
		for _, p := range params {
			if strings.TrimSpace(p.Description) == "" {
				missing("function %s: parameter %s has no description", name, p.Name)
			}
		}
		needFile("function "+name, "functions", name, "function.tf")
	}
	return out
}

// blockProblems lists the attributes and nested blocks under b without a description. The
// top-level block of a resource or data source needs one too (it is the page's introduction).
func blockProblems(where string, b block, needOwn bool) []string {
	var out []string
	if needOwn && strings.TrimSpace(b.Description) == "" {
		out = append(out, where+" has no description")
	}
	out = append(out, attributeProblems(where, b.Attributes)...)
	for _, name := range sortedKeys(b.BlockTypes) {
		out = append(out, blockProblems(where+": block "+name, b.BlockTypes[name].Block, true)...)
	}
	return out
}

func attributeProblems(where string, attrs map[string]attribute) []string {
	var out []string
	for _, name := range sortedKeys(attrs) {
		a := attrs[name]
		if strings.TrimSpace(a.Description) == "" {
			out = append(out, fmt.Sprintf("%s: attribute %s has no description", where, name))
		}
		if a.NestedType != nil {
			out = append(out, attributeProblems(where+": "+name, a.NestedType.Attributes)...)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "docscheck:", err)
	os.Exit(1)
}
