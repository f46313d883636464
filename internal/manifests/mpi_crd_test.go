package manifests

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The MPI Operator's and Kueue's Go API modules would drag controller-runtime into the provider's
// build (internal/controllertest runs the real controllers from tools/controllers instead), so the MPIJob and Kueue objects are checked
// against the structural schemas of their CRDs (testdata/crds and crds, each with its source URL): every
// field must be in the schema (no pruning would happen on apply), of the schema's type, with
// required fields present and enum values allowed.

// crdSchema is one version's openAPIV3Schema, the keywords structural schemas use.
type crdSchema struct {
	Type                  string                `json:"type"`
	Properties            map[string]*crdSchema `json:"properties"`
	AdditionalProperties  *crdSchema            `json:"additionalProperties"`
	Items                 *crdSchema            `json:"items"`
	Required              []string              `json:"required"`
	Enum                  []any                 `json:"enum"`
	PreserveUnknownFields bool                  `json:"x-kubernetes-preserve-unknown-fields"`
	IntOrString           bool                  `json:"x-kubernetes-int-or-string"`
	Minimum               *float64              `json:"minimum"`
	Maximum               *float64              `json:"maximum"`
	MaxLength             *int                  `json:"maxLength"`
}

type crdFile struct {
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Schema struct {
				OpenAPIV3Schema *crdSchema `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// crdSchemas maps apiVersion/kind to its schema, from every CRD in testdata/crds and in crds (the
// MPIJob CRD, which the MPI Operator add-on applies).
func crdSchemas(t *testing.T) map[string]*crdSchema {
	t.Helper()
	files, err := filepath.Glob("testdata/crds/*.yaml")
	applied, err2 := filepath.Glob("crds/*.yaml")
	files = append(files, applied...)
	if err != nil || err2 != nil || len(applied) == 0 || len(files) == len(applied) {
		t.Fatalf("no CRDs in testdata/crds or crds: %v %v", err, err2)
	}
	out := map[string]*crdSchema{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd crdFile
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			out[crd.Spec.Group+"/"+v.Name+"/"+crd.Spec.Names.Kind] = v.Schema.OpenAPIV3Schema
		}
	}
	return out
}

// validateCRD checks one rendered document against its CRD schema and returns every problem.
func validateCRD(schemas map[string]*crdSchema, doc Document) []string {
	s, ok := schemas[doc.APIVersion+"/"+doc.Kind]
	if !ok {
		return []string{"no CRD schema for " + doc.APIVersion + " " + doc.Kind}
	}
	j, err := yaml.YAMLToJSON([]byte(doc.YAML))
	if err != nil {
		return []string{err.Error()}
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		return []string{err.Error()}
	}
	var errs []string
	checkSchema(s, v, "", &errs)
	return errs
}

func checkSchema(s *crdSchema, v any, at string, errs *[]string) {
	fail := func(format string, a ...any) { *errs = append(*errs, at+": "+fmt.Sprintf(format, a...)) }
	if v == nil {
		return // null is what omitted optional fields decode to
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		fail("%v is not one of %v", v, s.Enum)
	}
	if s.IntOrString {
		switch v.(type) {
		case string, float64:
		default:
			fail("want an integer or a string, got %T", v)
		}
		return
	}
	switch s.Type {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			fail("want an object, got %T", v)
			return
		}
		for _, r := range s.Required {
			if _, ok := obj[r]; !ok {
				fail("required field %q missing", r)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			switch {
			case s.Properties[k] != nil:
				checkSchema(s.Properties[k], obj[k], at+"."+k, errs)
			case s.AdditionalProperties != nil:
				checkSchema(s.AdditionalProperties, obj[k], at+"."+k, errs)
			case s.PreserveUnknownFields || (len(s.Properties) == 0 && at == ".metadata"):
			default:
				fail("unknown field %q (the API server would drop it)", k)
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			fail("want an array, got %T", v)
			return
		}
		for i, e := range arr {
			if s.Items != nil {
				checkSchema(s.Items, e, fmt.Sprintf("%s[%d]", at, i), errs)
			}
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			fail("want a string, got %T", v)
		} else if s.MaxLength != nil && len(str) > *s.MaxLength {
			fail("longer than %d", *s.MaxLength)
		}
	case "integer", "number":
		n, ok := v.(float64)
		if !ok {
			fail("want a number, got %T", v)
			return
		}
		if s.Type == "integer" && n != float64(int64(n)) {
			fail("want an integer, got %v", n)
		}
		if s.Minimum != nil && n < *s.Minimum || s.Maximum != nil && n > *s.Maximum {
			fail("%v out of range", n)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			fail("want a boolean, got %T", v)
		}
	}
}

// TestCRDSchemaCheckFails shows the checker rejects what the API server would not keep.
func TestCRDSchemaCheckFails(t *testing.T) {
	schemas := crdSchemas(t)
	for name, yml := range map[string]string{
		"unknown spec field":       "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: x}\nspec:\n  slotsPerWorkers: 8\n  mpiReplicaSpecs: {}\n",
		"missing required":         "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: x}\nspec:\n  slotsPerWorker: 8\n",
		"bad enum":                 "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: x}\nspec:\n  mpiImplementation: LAM\n  mpiReplicaSpecs: {}\n",
		"wrong type":               "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: x}\nspec:\n  clusterQueue: [a]\n",
		"v1beta1 field in v1beta2": "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: x}\nspec:\n  cohort: a\n",
	} {
		parts := strings.SplitN(strings.SplitN(yml, "\n", 3)[1], ": ", 2)
		doc := Document{APIVersion: strings.TrimPrefix(strings.SplitN(yml, "\n", 2)[0], "apiVersion: "), Kind: parts[1], YAML: yml}
		if errs := validateCRD(schemas, doc); len(errs) == 0 {
			t.Errorf("%s: the schema check passed %s", name, yml)
		}
	}
}
