// Command kueuerelease renders Kueue's release manifest offline, as the release's own
// kustomization builds it (`kubectl kustomize config/default` in the sigs.k8s.io/kueue module at
// manifests.KueueVersion), with the CRDs' descriptions removed: they are documentation, not
// schema, and take most of the size. internal/manifests embeds the output as the Kueue add-on
// (internal/manifests/kueue_addon.go); scripts/render-kueue-release.sh runs this and writes it.
//
// It is a module of its own so that kustomize stays out of the provider's build.
//
//	go run . <dir of sigs.k8s.io/kueue@VERSION> > ../../internal/manifests/releases/kueue.yaml
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kueuerelease <dir of the sigs.k8s.io/kueue module>")
		os.Exit(2)
	}
	out, err := render(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "kueuerelease:", err)
		os.Exit(1)
	}
	fmt.Print(out)
}

// render builds config/default and writes each object without descriptions, "---" between them.
func render(moduleDir string) (string, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(moduleDir, "config", "default"))
	if err != nil {
		return "", err
	}
	var docs []string
	for _, r := range res.Resources() {
		m, err := r.Map()
		if err != nil {
			return "", err
		}
		if r.GetKind() == "CustomResourceDefinition" {
			dropDescriptions(m)
		}
		b, err := yaml.Marshal(m)
		if err != nil {
			return "", err
		}
		docs = append(docs, string(b))
	}
	return strings.Join(docs, "---\n"), nil
}

// dropDescriptions removes every "description" whose value is text. A property that happens to
// be named description is a map in its "properties", so it stays.
func dropDescriptions(v any) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["description"].(string); ok {
			delete(x, "description")
		}
		for _, c := range x {
			dropDescriptions(c)
		}
	case []any:
		for _, c := range x {
			dropDescriptions(c)
		}
	}
}
