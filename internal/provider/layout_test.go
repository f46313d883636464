package provider

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The provider package is glue (schema, model <-> spec, diagnostics); multi-step cloud work lives
// in the workflow packages (ARCHITECTURE.md). These limits keep it that way: a file or a function
// that outgrows them is usually a workflow, or a schema, that wants splitting.
const (
	maxProviderFileLines = 500
	maxProviderFuncLines = 80
)

func TestProviderFilesStayGlueSized(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(string(src), "\n"); lines > maxProviderFileLines {
			t.Errorf("%s has %d lines, over %d: move a workflow to its package, or split the file by job", name, lines, maxProviderFileLines)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if lines > maxProviderFuncLines {
				t.Errorf("%s: %s is %d lines, over %d: split it into steps", name, fn.Name.Name, lines, maxProviderFuncLines)
			}
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("checked %d production files: the test is not looking at the provider package", checked)
	}
}
