// Command gen writes ../models_gen.go: for every action the emulator serves and the vendor's
// alibabacloud-go SDK models, the required parameters, the documented integer ranges and the
// response model. It reads the SDK sources from the module cache with go/parser (the field
// comments are the vendor's API documentation, which reflection cannot see).
//
// Run it with `go generate ./internal/emulator/conformance` after adding an action to the
// emulator or moving to a newer SDK version (go.mod pins the versions read).
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// product is one vendor API with an alibabacloud-go SDK module the Go module proxy serves.
type product struct {
	version string // API version the emulator routes by
	module  string // Go module path of the SDK
	alias   string // import alias in the generated file
}

var products = []product{
	{"2014-05-26", "github.com/alibabacloud-go/ecs-20140526/v7", "ecs"},
	{"2016-04-28", "github.com/alibabacloud-go/vpc-20160428/v6", "vpc"},
}

func main() {
	log.SetFlags(0)
	served := emulator.ServedActions()
	var actions []action
	var uncovered []string
	imports := map[string]string{}
	byVersion := map[string]product{}
	for _, p := range products {
		byVersion[p.version] = p
	}
	models := map[string]map[string]*model{}
	for _, key := range served {
		version, name, _ := strings.Cut(key, "/")
		p, ok := byVersion[version]
		if !ok {
			uncovered = append(uncovered, key)
			continue
		}
		if models[version] == nil {
			dir := moduleDir(p.module)
			models[version] = readModels(filepath.Join(dir, "client"))
		}
		m := models[version][name]
		if m == nil {
			log.Fatalf("%s: the emulator serves it but %s has no %sRequest model", key, p.module, name)
		}
		imports[p.alias] = p.module + "/client"
		actions = append(actions, action{product: p, name: name, model: m})
	}
	sort.Slice(actions, func(i, j int) bool {
		return actions[i].product.version+actions[i].name < actions[j].product.version+actions[j].name
	})
	writeGo("models_gen.go", render(actions, uncovered, imports))
	writeGo(filepath.Join("..", "response_fields_gen.go"), renderShapes(actions))
	log.Printf("models_gen.go: %d actions from the SDK models, %d served without one", len(actions), len(uncovered))
}

func writeGo(path string, src []byte) {
	out, err := format.Source(src)
	if err != nil {
		log.Fatalf("formatting %s: %v\n%s", path, err, src)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		log.Fatal(err)
	}
}

type action struct {
	product product
	name    string
	model   *model
}

// model is what one XxxRequest struct documents.
type model struct {
	required []string
	limits   []limit
	doc      map[string]string
	hasBody  bool   // an XxxResponseBody model exists
	shape    string // the JSON fields of the response body, see shapeOf
}

type limit struct {
	param    string
	min, max int64
}

const noBound = -1 << 62

func moduleDir(mod string) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod).Output()
	if err != nil {
		log.Fatalf("go list -m %s: %v (is it in go.mod?)", mod, err)
	}
	return strings.TrimSpace(string(out))
}

var (
	requiredRe = regexp.MustCompile(`This parameter is required\.`)
	rangeRe    = regexp.MustCompile(`Valid values: (\d[\d,]*) to (\d[\d,]*)\.`)
	maxRe      = regexp.MustCompile(`Maximum value: (\d[\d,]*)\.`)
	minRe      = regexp.MustCompile(`Minimum value: (\d[\d,]*)\.`)
)

// readModels parses every *_request_model.go and *_response_body_model.go of an SDK's client package.
func readModels(dir string) map[string]*model {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*_model.go"))
	if err != nil || len(files) == 0 {
		log.Fatalf("no models in %s: %v", dir, err)
	}
	out := map[string]*model{}
	bodies := map[string]bool{}
	structs := map[string]*ast.StructType{} // every struct of the response body models, by name
	for _, f := range files {
		base := filepath.Base(f)
		isReq := strings.HasSuffix(base, "_request_model.go")
		if !isReq && !strings.HasSuffix(base, "_response_body_model.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			log.Fatal(err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				ts, ok := spec.(*ast.TypeSpec)
				if !ok {
					continue
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				name := ts.Name.Name
				if !isReq {
					structs[name] = st
					if a, ok := strings.CutSuffix(name, "ResponseBody"); ok {
						bodies[a] = true
					}
					continue
				}
				a, ok := strings.CutSuffix(name, "Request")
				if !ok || strings.HasSuffix(a, "Shrink") {
					continue
				}
				out[a] = requestModel(st)
			}
		}
	}
	for a, m := range out {
		if m.hasBody = bodies[a]; m.hasBody {
			m.shape = shapeOf(&ast.Ident{Name: a + "ResponseBody"}, structs, 0)
		}
	}
	return out
}

// shapeOf writes the JSON fields a response model type allows: "{A,B{C,D}}" for objects (a list
// takes the shape of its element), "" for a scalar, "*" for a free-form map or interface.
func shapeOf(t ast.Expr, structs map[string]*ast.StructType, depth int) string {
	if depth > 20 {
		log.Fatalf("response model nests deeper than 20 levels")
	}
	switch t := t.(type) {
	case *ast.StarExpr:
		return shapeOf(t.X, structs, depth)
	case *ast.ArrayType:
		return shapeOf(t.Elt, structs, depth)
	case *ast.MapType, *ast.InterfaceType:
		return "*"
	case *ast.Ident:
		st := structs[t.Name]
		if st == nil {
			return "" // a scalar
		}
		var fields []string
		for _, f := range st.Fields.List {
			if name := wireName(f); name != "" {
				fields = append(fields, name+shapeOf(f.Type, structs, depth+1))
			}
		}
		sort.Strings(fields)
		return "{" + strings.Join(fields, ",") + "}"
	}
	return "*"
}

func renderShapes(actions []action) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by go run ./conformance/gen from the alibabacloud-go SDK models; DO NOT EDIT.\n\n")
	b.WriteString("package emulator\n\n")
	b.WriteString("// responseShapes are the JSON fields each action's vendor response model allows (see\n// pruneAnswer): \"{A,B{C}}\" objects, \"*\" free-form; by Version/Action.\n")
	b.WriteString("var responseShapes = map[string]string{\n")
	for _, a := range actions {
		if a.model.shape != "" {
			fmt.Fprintf(&b, "\t%q: %q,\n", a.product.version+"/"+a.name, a.model.shape)
		}
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// wireName answers the JSON name of a model field, which is also its RPC parameter name ("" for
// fields without one).
func wireName(f *ast.Field) string {
	if len(f.Names) != 1 || f.Tag == nil {
		return ""
	}
	tag, _ := strconv.Unquote(f.Tag.Value)
	name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

func requestModel(st *ast.StructType) *model {
	m := &model{doc: map[string]string{}}
	for _, f := range st.Fields.List {
		wire := wireName(f)
		if wire == "" {
			continue
		}
		doc := strings.Join(strings.Fields(f.Doc.Text()), " ")
		repeated := false
		scalar := ""
		switch t := f.Type.(type) {
		case *ast.ArrayType:
			repeated = true
		case *ast.StarExpr:
			if id, ok := t.X.(*ast.Ident); ok {
				scalar = id.Name
			}
		}
		if requiredRe.MatchString(doc) {
			name := wire
			if repeated {
				name += ".1"
			}
			m.required = append(m.required, name)
			m.doc[name] = "This parameter is required."
		}
		if scalar != "int32" && scalar != "int64" {
			continue
		}
		l := limit{param: wire, min: noBound, max: noBound}
		if r := rangeRe.FindStringSubmatch(doc); r != nil {
			l.min, l.max = num(r[1]), num(r[2])
			m.doc[wire] = r[0]
		} else {
			if r := maxRe.FindStringSubmatch(doc); r != nil {
				l.max = num(r[1])
				m.doc[wire] = r[0]
			}
			if r := minRe.FindStringSubmatch(doc); r != nil {
				l.min = num(r[1])
				m.doc[wire] = strings.TrimSpace(m.doc[wire] + " " + r[0])
			}
		}
		if l.min != noBound || l.max != noBound {
			m.limits = append(m.limits, l)
		}
	}
	return m
}

func num(s string) int64 {
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	if err != nil {
		log.Fatal(err)
	}
	return n
}

func bound(n int64) string {
	if n == noBound {
		return "NoBound"
	}
	return strconv.FormatInt(n, 10)
}

func render(actions []action, uncovered []string, imports map[string]string) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by go run ./gen from the alibabacloud-go SDK models; DO NOT EDIT.\n\n")
	b.WriteString("package conformance\n\nimport (\n")
	aliases := make([]string, 0, len(imports))
	for a := range imports {
		aliases = append(aliases, a)
	}
	sort.Strings(aliases)
	for _, a := range aliases {
		fmt.Fprintf(&b, "\t%s %q\n", a, imports[a])
	}
	b.WriteString(")\n\n")
	b.WriteString("// Actions are the served actions the SDK models document, by Version/Action.\nvar Actions = map[string]Action{\n")
	for _, a := range actions {
		fmt.Fprintf(&b, "\t%q: {Version: %q, Name: %q,\n", a.product.version+"/"+a.name, a.product.version, a.name)
		if len(a.model.required) > 0 {
			fmt.Fprintf(&b, "\t\tRequired: %#v,\n", a.model.required)
		}
		if len(a.model.limits) > 0 {
			b.WriteString("\t\tLimits: []Limit{")
			for _, l := range a.model.limits {
				fmt.Fprintf(&b, "{%q, %s, %s}, ", l.param, bound(l.min), bound(l.max))
			}
			b.WriteString("},\n")
		}
		if len(a.model.doc) > 0 {
			keys := make([]string, 0, len(a.model.doc))
			for k := range a.model.doc {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b.WriteString("\t\tDoc: map[string]string{")
			for _, k := range keys {
				fmt.Fprintf(&b, "%q: %q, ", k, a.model.doc[k])
			}
			b.WriteString("},\n")
		}
		b.WriteString("\t},\n")
	}
	b.WriteString("}\n\n")
	b.WriteString("// ResponseBodies are the SDK response models answers must fit, by Version/Action.\nvar ResponseBodies = map[string]any{\n")
	for _, a := range actions {
		if a.model.hasBody {
			fmt.Fprintf(&b, "\t%q: (*%s.%sResponseBody)(nil),\n", a.product.version+"/"+a.name, a.product.alias, a.name)
		}
	}
	b.WriteString("}\n\n")
	b.WriteString("// Uncovered are served actions of products with no alibabacloud-go SDK module on the Go\n// module proxy; the suite reports them.\nvar Uncovered = []string{\n")
	for _, k := range uncovered {
		fmt.Fprintf(&b, "\t%q,\n", k)
	}
	b.WriteString("}\n")
	return b.Bytes()
}
