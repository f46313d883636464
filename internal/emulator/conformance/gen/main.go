// Command gen writes the conformance tables: for every action the emulator serves and the
// vendor's alibabacloud-go SDK models, the required parameters, the documented integer ranges
// and the response model. It reads the SDK sources with go/parser (the field comments are the
// vendor's API documentation, which reflection cannot see).
//
// Each product's table is its own pair of files, ../models_<product>_gen.go and
// ../../response_fields_<product>_gen.go, whose header records where the model came from. A
// product's model is read from:
//
//   - the Go module cache, when go.mod requires the product's SDK module (ECS, VPC): recorded as
//     module@version, and the table also names the SDK's response types, which the suite
//     decodes answers into;
//   - otherwise a directory named in CONFORMANCE_MODEL_DIRS, for SDK modules the Go module proxy
//     does not serve (NAS, STS, SLB): a checkout of github.com/alibabacloud-go/<repository> with
//     its client/*.go and go.mod, given as a comma-separated list of
//     <repository>=<directory>@<commit>, e.g.
//     CONFORMANCE_MODEL_DIRS=nas-20170626=/src/nas-20170626@8104ab16...,sts-20150401=...
//     Recorded as repository@commit; the module cannot be imported, so answers are held to the
//     response model's field names (the shape) only.
//
// ESS 2014-08-28 has a response-shape table only, ../../response_fields_ess_gen.go, read from the
// aliyun SDK's services/ess and two checkouts (ess-20140828 and ess-20220222 in
// CONFORMANCE_MODEL_DIRS); ess.go says why.
//
// A product whose model is in neither place keeps the files generated before, untouched (the
// run says so), so regenerating without the directories never drops a table; a product that
// never had one is listed as uncovered. ../models_gen.go and ../../response_fields_gen.go
// merge the product tables.
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

// product is one vendor API and the alibabacloud-go SDK module that models it.
type product struct {
	version string // API version the emulator routes by
	module  string // Go module path of the SDK
	alias   string // import alias and file name part in the generated files
}

var products = []product{
	{"2014-05-26", "github.com/alibabacloud-go/ecs-20140526/v7", "ecs"},
	{"2016-04-28", "github.com/alibabacloud-go/vpc-20160428/v6", "vpc"},
	{"2017-06-26", "github.com/alibabacloud-go/nas-20170626/v4", "nas"},
	{"2015-04-01", "github.com/alibabacloud-go/sts-20150401/v2", "sts"},
	{"2014-05-15", "github.com/alibabacloud-go/slb-20140515/v4", "slb"},
}

// repository answers the GitHub repository name of an SDK module: nas-20170626.
func (p product) repository() string {
	name := strings.TrimPrefix(p.module, "github.com/alibabacloud-go/")
	name, _, _ = strings.Cut(name, "/")
	return name
}

func (p product) modelsFile() string { return "models_" + p.alias + "_gen.go" }
func (p product) shapesFile() string {
	return filepath.Join("..", "response_fields_"+p.alias+"_gen.go")
}

// source is where one product's model was read from.
type source struct {
	dir      string // the SDK's client package
	origin   string // module@version or github.com/alibabacloud-go/<repository>@<commit>
	importOK bool   // the module is in go.mod, so its response types can be named
}

func main() {
	log.SetFlags(0)
	dirs := modelDirs(os.Getenv("CONFORMANCE_MODEL_DIRS"))
	served := map[string][]string{} // version -> actions
	for _, key := range emulator.ServedActions() {
		version, name, _ := strings.Cut(key, "/")
		served[version] = append(served[version], name)
	}
	var tabled []product // products with a table, generated now or kept
	var uncovered []string
	for _, p := range products {
		names := served[p.version]
		delete(served, p.version)
		src, ok := locate(p, dirs)
		if !ok {
			if exists(p.modelsFile()) && exists(p.shapesFile()) {
				log.Printf("%s: no model in the module cache or CONFORMANCE_MODEL_DIRS; kept %s and %s as generated before",
					p.repository(), p.modelsFile(), p.shapesFile())
				tabled = append(tabled, p)
				continue
			}
			for _, n := range names {
				uncovered = append(uncovered, p.version+"/"+n)
			}
			continue
		}
		models := readModels(src.dir)
		var actions []action
		for _, name := range names {
			m := models[name]
			if m == nil {
				log.Fatalf("%s/%s: the emulator serves it but %s has no %sRequest model", p.version, name, src.origin, name)
			}
			actions = append(actions, action{product: p, name: name, model: m})
		}
		writeGo(p.modelsFile(), renderProduct(p, src, actions))
		writeGo(p.shapesFile(), renderShapes(p, src, actions))
		tabled = append(tabled, p)
		log.Printf("%s: %d actions from %s", p.modelsFile(), len(actions), src.origin)
	}
	shapeTables := aliases(tabled)
	if essShapes(served[ess2014.version], dirs) {
		shapeTables = append(shapeTables, ess2014.alias)
	}
	for version, names := range served {
		for _, n := range names {
			uncovered = append(uncovered, version+"/"+n)
		}
	}
	sort.Strings(uncovered)
	writeGo("models_gen.go", renderMerge(tabled, uncovered))
	writeGo(filepath.Join("..", "response_fields_gen.go"), renderShapesMerge(shapeTables))
	log.Printf("models_gen.go: %d products with a model, %d served actions without one", len(tabled), len(uncovered))
}

// modelDirs parses CONFORMANCE_MODEL_DIRS: repository -> directory@commit.
func modelDirs(env string) map[string][2]string {
	out := map[string][2]string{}
	for _, entry := range strings.Split(env, ",") {
		if entry = strings.TrimSpace(entry); entry == "" {
			continue
		}
		repo, rest, ok := strings.Cut(entry, "=")
		dir, commit, hasCommit := strings.Cut(rest, "@")
		if !ok || !hasCommit || dir == "" || !regexp.MustCompile(`^[0-9a-f]{7,40}$`).MatchString(commit) {
			log.Fatalf("CONFORMANCE_MODEL_DIRS entry %q: want <repository>=<directory>@<commit>, e.g. nas-20170626=/src/nas-20170626@8104ab16 (the commit is recorded as the model's source)", entry)
		}
		out[repo] = [2]string{dir, commit}
	}
	return out
}

// locate finds a product's model: the module cache first, then CONFORMANCE_MODEL_DIRS.
func locate(p product, dirs map[string][2]string) (source, bool) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", p.module).Output()
	if dir, version, _ := strings.Cut(strings.TrimSpace(string(out)), " "); err == nil && dir != "" {
		return source{dir: filepath.Join(dir, "client"), origin: p.module + "@" + version, importOK: true}, true
	}
	d, ok := dirs[p.repository()]
	if !ok {
		return source{}, false
	}
	mod, err := os.ReadFile(filepath.Join(d[0], "go.mod"))
	if err != nil {
		log.Fatalf("CONFORMANCE_MODEL_DIRS %s: %v", p.repository(), err)
	}
	if first, _, _ := strings.Cut(string(mod), "\n"); strings.TrimSpace(strings.TrimPrefix(first, "module")) != p.module {
		log.Fatalf("CONFORMANCE_MODEL_DIRS %s: %s/go.mod declares %q, want module %s", p.repository(), d[0], first, p.module)
	}
	return source{dir: filepath.Join(d[0], "client"), origin: "github.com/alibabacloud-go/" + p.repository() + "@" + d[1]}, true
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
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
	tree     *shape // the same, parsed
}

type limit struct {
	param    string
	min, max int64
}

const noBound = -1 << 62

var (
	requiredRe = regexp.MustCompile(`This parameter is required\.`)
	rangeRe    = regexp.MustCompile(`Valid values: (\d[\d,]*) to (\d[\d,]*)\.`)
	maxRe      = regexp.MustCompile(`Maximum value: (\d[\d,]*)\.`)
	minRe      = regexp.MustCompile(`Minimum value: (\d[\d,]*)\.`)
)

// readModels parses the models of an SDK's client package: one file per model in newer SDKs
// (*_request_model.go, *_response_body_model.go), all of them in client.go in older ones (STS).
// XxxRequest structs are requests, XxxResponseBody structs and the structs they nest are answers.
func readModels(dir string) map[string]*model {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		log.Fatalf("no models in %s: %v", dir, err)
	}
	out := map[string]*model{}
	bodies := map[string]bool{}
	structs := map[string]*ast.StructType{} // every struct of the package, by name
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasSuffix(base, "_test.go") || (strings.HasSuffix(base, "_model.go") &&
			!strings.HasSuffix(base, "_request_model.go") && !strings.HasSuffix(base, "_response_body_model.go")) {
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
				structs[name] = st
				if a, ok := strings.CutSuffix(name, "ResponseBody"); ok {
					bodies[a] = true
				}
				if a, ok := strings.CutSuffix(name, "Request"); ok && !strings.HasSuffix(a, "Shrink") {
					out[a] = requestModel(st)
				}
			}
		}
	}
	for a := range bodies {
		if out[a] == nil { // an action without parameters has no XxxRequest (STS GetCallerIdentity)
			out[a] = &model{}
		}
	}
	for a, m := range out {
		if m.hasBody = bodies[a]; m.hasBody {
			m.tree = shapeOf(&ast.Ident{Name: a + "ResponseBody"}, structs, 0)
			m.shape = m.tree.String()
		}
	}
	return out
}

// shapeOf reads the JSON fields a response model type allows (see shape.String): an object's
// fields, a list takes the shape of its element, nil for a scalar, free for a map or interface.
func shapeOf(t ast.Expr, structs map[string]*ast.StructType, depth int) *shape {
	if depth > 20 {
		log.Fatalf("response model nests deeper than 20 levels")
	}
	switch t := t.(type) {
	case *ast.StarExpr:
		return shapeOf(t.X, structs, depth)
	case *ast.ArrayType:
		return shapeOf(t.Elt, structs, depth)
	case *ast.MapType, *ast.InterfaceType:
		return freeForm
	case *ast.Ident:
		st := structs[t.Name]
		if st == nil {
			return nil // a scalar
		}
		out := &shape{fields: map[string]*shape{}}
		for _, f := range st.Fields.List {
			if name := wireName(f); name != "" {
				out.fields[name] = shapeOf(f.Type, structs, depth+1)
			}
		}
		return out
	}
	return freeForm
}

// header is the first line of a generated file, naming where its model came from.
func header(src source) string {
	return "// Code generated by internal/emulator/conformance/gen from " + src.origin + "; DO NOT EDIT.\n\n"
}

func renderShapes(p product, src source, actions []action) []byte {
	var b bytes.Buffer
	b.WriteString(header(src))
	b.WriteString("package emulator\n\n")
	fmt.Fprintf(&b, "// %sResponseShapes are the JSON fields each %s action's vendor response model allows\n// (see pruneAnswer): \"{A,B{C}}\" objects, \"*\" free-form; by Version/Action.\n", p.alias, strings.ToUpper(p.alias))
	fmt.Fprintf(&b, "var %sResponseShapes = map[string]string{\n", p.alias)
	for _, a := range actions {
		if a.model.shape != "" {
			fmt.Fprintf(&b, "\t%q: %q,\n", a.product.version+"/"+a.name, a.model.shape)
		}
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// renderShapesMerge writes the emulator's responseShapes: every product table's shapes.
func renderShapesMerge(aliases []string) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by internal/emulator/conformance/gen; DO NOT EDIT.\n\n")
	b.WriteString("package emulator\n\n")
	b.WriteString("// responseShapes are the JSON fields each action's vendor response model allows, from the\n// response_fields_<product>_gen.go tables; by Version/Action.\n")
	b.WriteString("var responseShapes = mergeTables(\n")
	for _, alias := range aliases {
		fmt.Fprintf(&b, "\t%sResponseShapes,\n", alias)
	}
	b.WriteString(")\n")
	return b.Bytes()
}

func aliases(ps []product) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.alias)
	}
	return out
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

// renderProduct writes one product's table: its actions, the source of its model and, when
// the SDK module can be imported, its response types.
func renderProduct(p product, src source, actions []action) []byte {
	var b bytes.Buffer
	b.WriteString(header(src))
	b.WriteString("package conformance\n\n")
	if src.importOK {
		fmt.Fprintf(&b, "import %s %q\n\n", p.alias, p.module+"/client")
	}
	up := strings.ToUpper(p.alias)
	fmt.Fprintf(&b, "// %sSource is where the %s model was read from.\nconst %sSource = %q\n\n", p.alias, up, p.alias, src.origin)
	fmt.Fprintf(&b, "// %sActions are the served %s actions its SDK model documents, by Version/Action.\nvar %sActions = map[string]Action{\n", p.alias, up, p.alias)
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
	if src.importOK {
		fmt.Fprintf(&b, "// %sResponseBodies are the SDK response models %s answers must fit, by Version/Action.\n", p.alias, up)
	} else {
		fmt.Fprintf(&b, "// %sResponseBodies is empty: the %s module is not on the Go module proxy, so answers are held\n// to the response model's shape (the emulator's responseShapes) instead of its types.\n", p.alias, up)
	}
	fmt.Fprintf(&b, "var %sResponseBodies = map[string]any{\n", p.alias)
	for _, a := range actions {
		if a.model.hasBody && src.importOK {
			fmt.Fprintf(&b, "\t%q: (*%s.%sResponseBody)(nil),\n", a.product.version+"/"+a.name, p.alias, a.name)
		}
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// renderMerge writes models_gen.go: the product tables merged, their sources, and the served
// actions no table covers.
func renderMerge(tabled []product, uncovered []string) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by internal/emulator/conformance/gen; DO NOT EDIT.\n\n")
	b.WriteString("package conformance\n\n")
	b.WriteString("// Actions are the served actions the SDK models document, by Version/Action.\nvar Actions = merge(\n")
	for _, p := range tabled {
		fmt.Fprintf(&b, "\t%sActions,\n", p.alias)
	}
	b.WriteString(")\n\n// ResponseBodies are the SDK response models answers must fit, by Version/Action.\nvar ResponseBodies = merge(\n")
	for _, p := range tabled {
		fmt.Fprintf(&b, "\t%sResponseBodies,\n", p.alias)
	}
	b.WriteString(")\n\n// Sources say where each product's model was read from, by API version.\nvar Sources = map[string]string{\n")
	for _, p := range tabled {
		fmt.Fprintf(&b, "\t%q: %sSource,\n", p.version, p.alias)
	}
	b.WriteString("}\n\n// Uncovered are served actions of products with no model in the module cache or a\n// CONFORMANCE_MODEL_DIRS directory; the suite reports them.\nvar Uncovered = []string{\n")
	for _, k := range uncovered {
		fmt.Fprintf(&b, "\t%q,\n", k)
	}
	b.WriteString("}\n")
	return b.Bytes()
}
