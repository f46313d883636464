package core

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The core is what every product stands on and knows none of them (doc.go): no file of it,
// tests included, imports another package of the emulator.
func TestCoreImportsNoProduct(t *testing.T) {
	const emulator = "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files here: %v", err)
	}
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if (path == emulator || strings.HasPrefix(path, emulator+"/")) && path != emulator+"/core" {
				t.Errorf("%s imports %s: the core offers a hook or a store instead", name, path)
			}
		}
	}
}
