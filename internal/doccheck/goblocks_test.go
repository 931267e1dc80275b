package doccheck

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// A Go block of a Markdown page (```go … ```), compiled by TestGoBlocksCompile
// in a module of its own, as a user's module would hold it. A block is
// either a whole file (it has a package clause) or a fragment, marked by an
// HTML comment right before its fence (only blank lines between), which
// says how to wrap it:
//
//	<!-- go: in func(stack awscdk.Stack, orders awssns.ITopic) -->
//	  the block is the body of a function with these parameters (the names a
//	  fragment takes from the code around it);
//	<!-- go: declarations -->
//	  the block is top-level declarations (functions, types, variables);
//	<!-- go: beside example.com/shop -->
//	  the block is a whole file of the package example.com/shop, or its test
//	  (package shop_test), and the comment's other lines are that package's
//	  code, which the block needs.
//
// After the first line, a comment of the first two forms holds Go
// declarations the block uses and does not show (a type Order, a variable
// charge): they are compiled with it. A fragment's imports are found from
// the package names it uses (see importPaths), as goimports would.
type goBlock struct {
	file   string // the page, relative to the repository's root
	abs    string // the page's absolute path, for the compiler's positions
	line   int    // the line of the block's first line of code
	code   string
	marker string // the marker comment's text after "go:", or "" for a whole file
	at     int    // the marker's first line
}

// markerRef matches a block's marker, "<!-- go: … -->", over one or more lines.
var markerRef = regexp.MustCompile(`(?s)^<!--\s*go:(.*?)-->$`)

// docPages are the Markdown pages whose Go blocks compile: README.md and
// every page under docs/.
func docPages(root string) ([]string, error) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	out := []string{"README.md"}
	for _, p := range pages {
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}

// goBlocks returns the Go blocks of the page text, named file.
func goBlocks(file, text string) ([]goBlock, error) {
	lines := strings.Split(text, "\n")
	var out []goBlock
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " \t")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := lines[i][:len(lines[i])-len(trimmed)]
		lang := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s:%d: the code block is not closed", file, start)
		}
		if lang != "go" {
			continue
		}
		var code strings.Builder
		for _, l := range lines[start:i] {
			code.WriteString(strings.TrimPrefix(l, indent) + "\n")
		}
		b := goBlock{file: file, line: start + 1, code: code.String()}
		b.marker, b.at = markerBefore(lines, start-1)
		out = append(out, b)
	}
	return out, nil
}

// markerBefore returns the text of the marker comment that ends before the
// fence at line fence (0-based), past blank lines, and its first line
// (1-based); "" when there is none.
func markerBefore(lines []string, fence int) (string, int) {
	end := fence - 1
	for end >= 0 && strings.TrimSpace(lines[end]) == "" {
		end--
	}
	if end < 0 || strings.TrimSpace(lines[end]) != "-->" && !strings.HasSuffix(strings.TrimSpace(lines[end]), "-->") {
		return "", 0
	}
	for begin := end; begin >= 0 && begin > end-200; begin-- {
		if strings.HasPrefix(strings.TrimSpace(lines[begin]), "<!--") {
			m := markerRef.FindStringSubmatch(strings.TrimSpace(strings.Join(lines[begin:end+1], "\n")))
			if m == nil {
				return "", 0
			}
			return m[1], begin + 1
		}
	}
	return "", 0
}

// A scratch package: the files TestGoBlocksCompile writes for one block,
// by path relative to the scratch module's root.
type scratch map[string]string

// lineDirective makes the compiler report what follows at file:line.
func lineDirective(file string, line int) string {
	return fmt.Sprintf("//line %s:%d\n", file, line)
}

// packageClause matches a whole file's package clause, after comments.
var packageClause = regexp.MustCompile(`(?m)^package ([A-Za-z_][A-Za-z0-9_]*)\s*$`)

// files returns the scratch files that compile block b as the n-th package
// of the module, with imports found in paths.
func (b goBlock) files(n int, paths importPaths) (scratch, error) {
	dir := fmt.Sprintf("block%03d", n)
	form, given, _ := strings.Cut(strings.TrimLeft(b.marker, " \t"), "\n")
	form = strings.TrimSpace(form)
	switch {
	case b.marker == "":
		m := packageClause.FindStringSubmatch(b.code)
		if m == nil {
			return nil, fmt.Errorf("%s:%d: a Go block without a package clause is a fragment: mark it (<!-- go: in func(…) -->, <!-- go: declarations --> or <!-- go: beside PATH -->; internal/doccheck's goblocks_test.go says how)", b.file, b.line)
		}
		return scratch{path.Join(dir, fileName(m[1], b.code)): lineDirective(b.abs, b.line) + b.code}, nil
	case strings.HasPrefix(form, "beside "):
		pkg := strings.TrimSpace(strings.TrimPrefix(form, "beside "))
		rel, ok := strings.CutPrefix(pkg, scratchModule+"/")
		m := packageClause.FindStringSubmatch(b.code)
		if !ok || m == nil {
			return nil, fmt.Errorf("%s:%d: <!-- go: beside %s -->: the package must be under %s/ and the block a whole file", b.file, b.line, pkg, scratchModule)
		}
		name := strings.Replace(fileName(m[1], b.code), "block", dir, 1) // beside the package's own files
		return scratch{
			path.Join(rel, "package.go"): lineDirective(b.abs, b.at+1) + given,
			path.Join(rel, name):         lineDirective(b.abs, b.line) + b.code,
		}, nil
	case form == "declarations":
		return b.fragment(dir, given, b.code, paths)
	case strings.HasPrefix(form, "in func("):
		params := strings.TrimSuffix(strings.TrimPrefix(form, "in func("), ")")
		body := fmt.Sprintf("func _(%s) {\n%s%s}\n", params, lineDirective(b.abs, b.line), b.code)
		return b.fragment(dir, given, body, paths)
	}
	return nil, fmt.Errorf("%s:%d: unknown marker <!-- go:%s-->: give in func(…), declarations or beside PATH", b.file, b.at, b.marker)
}

// testFunc matches the declaration of a test, benchmark, fuzz target or
// TestMain.
var testFunc = regexp.MustCompile(`(?m)^func (Test|Benchmark|Fuzz)[A-Z_]?[A-Za-z0-9_]*\(`)

// fileName is a whole file's name: a test file for an external test package
// or a file that declares tests.
func fileName(pkg, code string) string {
	if strings.HasSuffix(pkg, "_test") || testFunc.MatchString(code) {
		return "block_test.go"
	}
	return "block.go"
}

// fragment returns the file of package snippet that holds given and code,
// with the imports of the package names they use.
func (b goBlock) fragment(dir, given, code string, paths importPaths) (scratch, error) {
	src := "package snippet\n\n" + lineDirective(b.abs, b.at+1) + given + "\n" + code
	f, err := parser.ParseFile(token.NewFileSet(), b.file, src, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %v", b.file, b.line, err)
	}
	if len(f.Imports) > 0 {
		return nil, fmt.Errorf("%s:%d: a fragment has no imports of its own: they are found from the names it uses", b.file, b.line)
	}
	names, err := usedPackages(src)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %v", b.file, b.line, err)
	}
	var imports strings.Builder
	for _, name := range names {
		p, err := paths.resolve(name.pkg, name.selected)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", b.file, b.line, err)
		}
		if p != "" {
			fmt.Fprintf(&imports, "import %s %q\n", name.pkg, p)
		}
	}
	// The imports are reported at the marker's line, the given code at its own.
	src = "package snippet\n\n" + lineDirective(b.abs, b.at) + imports.String() + "\n" + lineDirective(b.abs, b.at+1) + given + "\n" + code
	return scratch{path.Join(dir, "block.go"): src}, nil
}

// A package name that a fragment uses, and the names it selects from it.
type usedPackage struct {
	pkg      string
	selected []string
}

// usedPackages returns the unresolved identifiers that src uses as the
// left of a selector (pkg.Name), with the names selected, sorted.
func usedPackages(src string) ([]usedPackage, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, 0)
	if err != nil {
		return nil, err
	}
	unresolved := map[string]bool{}
	for _, id := range f.Unresolved {
		unresolved[id.Name] = true
	}
	selected := map[string]map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && unresolved[x.Name] && x.Obj == nil {
				if selected[x.Name] == nil {
					selected[x.Name] = map[string]bool{}
				}
				selected[x.Name][sel.Sel.Name] = true
			}
		}
		return true
	})
	var out []usedPackage
	for pkg, names := range selected {
		u := usedPackage{pkg: pkg}
		for n := range names {
			u.selected = append(u.selected, n)
		}
		sort.Strings(u.selected)
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pkg < out[j].pkg })
	return out, nil
}

// importPaths maps a package name to the import paths that have it, each
// with its exported names where known (the library's packages), so that
// two packages of one name (constructs/step, lambda/step) are told apart by
// what a fragment selects.
type importPaths map[string][]importPath

type importPath struct {
	path     string
	exports  map[string]bool // nil: not known, taken for any name
	internal bool            // a package a user's module cannot import
}

// thirdParty are the packages of other modules that the docs use, by the
// name they are imported as. An aws… name that is not here is a package of
// the CDK's (awscdk/v2/awssns).
var thirdParty = map[string]string{
	"awscdk":     "github.com/aws/aws-cdk-go/awscdk/v2",
	"aws":        "github.com/aws/aws-sdk-go-v2/aws",
	"config":     "github.com/aws/aws-sdk-go-v2/config",
	"dynamodb":   "github.com/aws/aws-sdk-go-v2/service/dynamodb",
	"types":      "github.com/aws/aws-sdk-go-v2/service/dynamodb/types",
	"jsii":       "github.com/aws/jsii-runtime-go",
	"constructs": "github.com/aws/constructs-go/constructs/v10",
	"cdknag":     "github.com/cdklabs/cdk-nag-go/cdknag/v2",
	"lambda":     "github.com/aws/aws-lambda-go/lambda",
	"events":     "github.com/aws/aws-lambda-go/events",
}

// cdkPackage matches the name of a package of the CDK's (awssns, awsiam).
var cdkPackage = regexp.MustCompile(`^aws[a-z0-9]+$`)

// resolve returns the import path of the package name whose exports
// include every selected name: "" when name is none of the known packages
// (a variable, left to the compiler to judge). A public package is
// preferred; a name that only an internal package of the library exports
// is imported from it, so that the go command refuses the block as it
// would refuse a user's module.
func (p importPaths) resolve(name string, selected []string) (string, error) {
	if tp, ok := thirdParty[name]; ok {
		return tp, nil
	}
	fits := p.fitting(name, selected, false)
	if len(fits) == 0 {
		fits = p.fitting(name, selected, true)
	}
	switch {
	case len(fits) == 1:
		return fits[0], nil
	case len(fits) > 1:
		return "", fmt.Errorf("package %s is ambiguous (%s); a fragment uses one of them", name, strings.Join(fits, ", "))
	case len(p[name]) > 0:
		return "", fmt.Errorf("no package %s exports all of %s", name, strings.Join(selected, ", "))
	case cdkPackage.MatchString(name):
		return "github.com/aws/aws-cdk-go/awscdk/v2/" + name, nil
	}
	return "", nil
}

// fitting returns the import paths of the packages named name, internal
// or not, that export every selected name.
func (p importPaths) fitting(name string, selected []string, internal bool) []string {
	var fits []string
	for _, c := range p[name] {
		ok := c.internal == internal
		for _, s := range selected {
			ok = ok && (c.exports == nil || c.exports[s])
		}
		if ok {
			fits = append(fits, c.path)
		}
	}
	return fits
}

// libraryImports returns the import paths of the standard library (by
// their last element, the unambiguous ones) and of the module's packages
// but commands (with their exported names; internal ones marked), as go
// list gives them in root.
func libraryImports(root string) (importPaths, error) {
	out := importPaths{}
	std, err := exec.Command("go", "list", "std").Output()
	if err != nil {
		return nil, fmt.Errorf("go list std: %v", err)
	}
	seen := map[string]int{}
	for _, p := range strings.Fields(string(std)) {
		if !strings.Contains(p, "internal") && !strings.HasPrefix(p, "vendor/") {
			seen[path.Base(p)]++
			out[path.Base(p)] = []importPath{{path: p}}
		}
	}
	for name, n := range seen {
		if n > 1 {
			delete(out, name) // math/rand and crypto/rand: a fragment names neither without saying which
		}
	}
	cmd := exec.Command("go", "list", "-f", `{{if ne .Name "main"}}{{.ImportPath}} {{.Dir}} {{join .GoFiles ","}}{{end}}`, "./...")
	cmd.Dir = root
	lib, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list the library: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(lib)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			continue // a main package, or one without Go files
		}
		p, dir, files := f[0], f[1], strings.Split(f[2], ",")
		exports, err := exportedNames(dir, files)
		if err != nil {
			return nil, err
		}
		out[path.Base(p)] = append(out[path.Base(p)], importPath{path: p, exports: exports, internal: strings.Contains(p, "/internal")})
	}
	return out, sc.Err()
}

// exportedNames returns the exported top-level names of the package in
// dir, made of files.
func exportedNames(dir string, files []string) (map[string]bool, error) {
	names := map[string]bool{}
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			for _, n := range declNames(d) {
				if n.IsExported() {
					names[n.Name] = true
				}
			}
		}
	}
	return names, nil
}

// declNames returns the names a top-level declaration declares (a method
// declares none at the top level).
func declNames(d ast.Decl) []*ast.Ident {
	var out []*ast.Ident
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			out = append(out, d.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				out = append(out, s.Name)
			case *ast.ValueSpec:
				out = append(out, s.Names...)
			}
		}
	}
	return out
}

// scratchModule is the path of the module the blocks compile in: a user's.
const scratchModule = "example.com"

// writeScratchModule writes a module at dir that requires the library,
// replaced by the repository at root, with the files of every block.
func writeScratchModule(t *testing.T, dir, root string, files scratch) {
	t.Helper()
	goMod := fmt.Sprintf("module %s\n\ngo 1.26.0\n\nrequire %s v0.0.0-00010101000000-000000000000\n\nreplace %s => %s\n",
		scratchModule, strings.TrimSuffix(modulePath, "/"), strings.TrimSuffix(modulePath, "/"), root)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"go.mod": goMod, "go.sum": string(sum)}
	for name, body := range files {
		all[name] = body
	}
	writeTree(t, dir, all)
}

// vetModule runs go vet on every package of the module at dir, with
// GOFLAGS=-mod=mod so that the module's requirements are completed from
// the library's, and returns its output on failure.
func vetModule(dir string) (string, error) {
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// scratchOf returns the files of every block of the pages under root, and
// how many blocks are whole files and fragments; a block it cannot wrap is
// an error.
func scratchOf(root string, pages []string, paths importPaths) (scratch, int, int, []error) {
	files := scratch{}
	var whole, fragments int
	var errs []error
	for _, page := range pages {
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		blocks, err := goBlocks(page, string(text))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, b := range blocks {
			b.abs = filepath.Join(root, page)
			fs, err := b.files(whole+fragments, paths)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for name, body := range fs {
				if was, ok := files[name]; ok && was != body {
					errs = append(errs, fmt.Errorf("%s:%d: %s is given other code by an earlier block: give a package's code once", b.file, b.line, name))
				}
				files[name] = body
			}
			if b.marker == "" || strings.HasPrefix(strings.TrimSpace(b.marker), "beside ") {
				whole++
			} else {
				fragments++
			}
		}
	}
	return files, whole, fragments, errs
}

// TestGoBlocksCompile: every Go block of README.md and docs/*.md compiles
// and passes go vet in a module outside this one, as a user's module holds
// it (a go.mod that requires the library, replaced by this repository):
// a whole file as it is, a fragment wrapped as its marker says. A user's
// module cannot import an internal package, so a block that names one
// fails here as it would there.
func TestGoBlocksCompile(t *testing.T) {
	root := repoRoot(t)
	pages, err := docPages(root)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := libraryImports(root)
	if err != nil {
		t.Fatal(err)
	}
	files, whole, fragments, errs := scratchOf(root, pages, paths)
	for _, err := range errs {
		t.Error(err)
	}
	if whole+fragments == 0 {
		t.Fatal("no Go block found in README.md or docs/*.md")
	}
	dir := t.TempDir()
	writeScratchModule(t, dir, root, files)
	if out, err := vetModule(dir); err != nil {
		t.Fatalf("go vet of the docs' Go blocks in a module of their own: %v\n%s", err, out)
	}
	t.Logf("compiled and vetted %d Go blocks of %d pages (%d whole files, %d fragments) in a module of their own", whole+fragments, len(pages), whole, fragments)
}

// TestGoBlocksCheckCanFail: the check wraps each kind of block, refuses an
// unmarked fragment, and reports a block that does not compile at its page
// and line.
func TestGoBlocksCheckCanFail(t *testing.T) {
	page := strings.Join([]string{
		"# A page",
		"",
		"```go",
		"package main",
		"",
		`import "fmt"`,
		"",
		`func main() { fmt.Println("whole") }`,
		"```",
		"",
		"<!-- go: in func(name string)",
		"type Order struct{ ID string }",
		"-->",
		"```go",
		"o := Order{ID: name}",
		"fmt.Println(strings.ToUpper(o.ID), time.Second)",
		"```",
		"",
		"<!-- go: declarations -->",
		"",
		"```go",
		"func greet() string { return fmt.Sprint(\"hi\") }",
		"```",
		"",
		"```go",
		"x := 1",
		"```",
		"",
		"<!-- go: in func() -->",
		"```go",
		"var n int = \"not a number\"",
		"```",
		"",
	}, "\n")
	root := t.TempDir()
	writeTree(t, root, map[string]string{"docs/page.md": page})
	paths := importPaths{
		"fmt":     {{path: "fmt"}},
		"strings": {{path: "strings"}},
		"time":    {{path: "time"}},
	}
	files, whole, fragments, errs := scratchOf(root, []string{"docs/page.md"}, paths)
	if whole != 1 || fragments != 3 {
		t.Errorf("%d whole files and %d fragments, want 1 and 3", whole, fragments)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "docs/page.md:26: a Go block without a package clause is a fragment: mark it") {
		t.Errorf("errors %v, want the unmarked fragment at docs/page.md:26", errs)
	}
	mod := filepath.Join(root, "module")
	writeTree(t, mod, map[string]string{"go.mod": "module " + scratchModule + "\n\ngo 1.26.0\n"})
	writeTree(t, mod, files)
	out, err := vetModule(mod)
	if err == nil {
		t.Fatal("go vet passed a block that does not compile")
	}
	if !strings.Contains(out, "docs/page.md:31:") || strings.Count(out, "docs/page.md:") != 1 {
		t.Errorf("go vet's output names not only the failing block's line docs/page.md:31:\n%s", out)
	}
	if !slices.ContainsFunc(keys(files), func(k string) bool { return strings.HasSuffix(k, "block.go") }) {
		t.Errorf("no block file written: %v", keys(files))
	}
}

func keys(m scratch) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
