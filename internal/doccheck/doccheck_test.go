package doccheck

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// modulePath is the root module's path: an import path under it names a
// folder of the repository.
const modulePath = "github.com/idempotent-consumer/idempotent-consumer/"

// tops are the top-level folders whose paths docs cite ("internal/contract",
// "constructs/consumer", "demo/local"), as the before-stop hook greps them.
var tops = []string{"app", "bench", "cdktest", "constructs", "demo", "examples", "internal", "lambda", "test"}

// pathRef matches a repository path in text: a top-level folder, then one
// or more lower-case segments, not inside a longer path or word (so that
// "aws-cdk-go/awscdk/v2/awslambda" or "x/lambda/y" do not count); the
// module's import paths are matched apart.
var pathRef = regexp.MustCompile(`(?:^|[^a-zA-Z0-9_./-])((?:` + strings.Join(tops, "|") + `)(?:/[a-z0-9_]+)+)`)

var importRef = regexp.MustCompile(regexp.QuoteMeta(modulePath) + `([a-z0-9_]+(?:/[a-z0-9_]+)*)`)

// linkRef matches the target of a Markdown link, "[text](target#anchor)".
var linkRef = regexp.MustCompile(`\]\(([^)#\s]+)(?:#[^)\s]*)?\)`)

// skipDirs are never read: other projects' files and generated output.
var skipDirs = []string{"node_modules", "cdk.out", "vendor", "testdata"}

// historical are files that name removed paths on purpose.
var historical = []string{"CHANGELOG.md"}

// stale is a path that a line names and that does not exist.
type stale struct {
	file string
	line int
	path string
}

func (s stale) String() string { return fmt.Sprintf("%s:%d: %s", s.file, s.line, s.path) }

// exists reports whether p, relative to root, is a file or folder, or the
// name of a file without its extension ("constructs/consumer/byo" for
// byo.go).
func exists(root, p string) bool {
	if _, err := os.Stat(filepath.Join(root, p)); err == nil {
		return true
	}
	matches, _ := filepath.Glob(filepath.Join(root, p) + ".*")
	return len(matches) > 0
}

// walkSources calls fn with every file under root, past hidden folders and
// skipDirs.
func walkSources(root string, fn func(path string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || slices.Contains(skipDirs, d.Name())) {
				return filepath.SkipDir
			}
			return nil
		}
		return fn(path)
	})
}

// repoRoot is the repository's root, two folders up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root %s: %v", root, err)
	}
	return root
}

// writeTree writes files (path → content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// stalePaths returns every path that a .go or .md file under root names
// and that does not exist under root.
func stalePaths(root string) ([]stale, error) {
	var out []stale
	err := walkSources(root, func(path string) error {
		rel, _ := filepath.Rel(root, path)
		if (!strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".md")) || slices.Contains(historical, rel) {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			var refs []string
			for _, m := range pathRef.FindAllStringSubmatch(line, -1) {
				if !strings.HasPrefix(m[1], "constructs/v10") { // constructs-go's module, not our folder
					refs = append(refs, m[1])
				}
			}
			for _, m := range importRef.FindAllStringSubmatch(line, -1) {
				refs = append(refs, m[1])
			}
			if strings.HasSuffix(path, ".md") {
				// A relative link is relative to the Markdown file's folder.
				for _, m := range linkRef.FindAllStringSubmatch(line, -1) {
					if target := m[1]; !strings.Contains(target, ":") {
						refs = append(refs, filepath.ToSlash(filepath.Join(filepath.Dir(rel), target)))
					}
				}
			}
			for _, p := range refs {
				if !exists(root, p) {
					out = append(out, stale{file: rel, line: n, path: p})
				}
			}
		}
		return sc.Err()
	})
	return out, err
}

// TestNoStalePaths: no comment, doc comment or Markdown file names a path
// or import path of the repository, and no Markdown link a file, that does
// not exist (CHANGELOG.md, the history, names removed ones on purpose).
func TestNoStalePaths(t *testing.T) {
	found, err := stalePaths(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range found {
		t.Errorf("%s does not exist (moved or removed?): fix the reference", s)
	}
}

// TestStalePathsFindsWhatIsGone: the check finds a removed package cited in
// a doc comment, in Markdown and as an import path, and passes what exists.
func TestStalePathsFindsWhatIsGone(t *testing.T) {
	root := t.TempDir()
	gone := "lambda/" + "env" // spelt apart, so that this file cites no removed path itself
	notes := "lambda/handler/" + "NOTES.md"
	files := map[string]string{
		"internal/contract/contract.go": "// Package contract replaces package " + gone + ".\npackage contract\n",
		"lambda/handler/handler.go": "package handler\n\n// New reads what internal/contract decodes (see internal/contract/contract.go,\n" +
			"// constructs/v10 is constructs-go, and aws-cdk-go/awscdk/v2/awslambda is no path of ours).\nfunc New() {}\n",
		"README.md": "Import `" + modulePath + gone + "` or " + modulePath + "lambda/handler.\n" +
			"See [the design](DESIGN.md#the-record), [gone](docs/GONE.md), [the handler](lambda/handler) and [Go](https://go.dev).\n",
		"DESIGN.md":                "# Design\n",
		notes:                      "[up](../../DESIGN.md) and [nowhere](../nowhere.md)\n",
		"CHANGELOG.md":             "`" + gone + "` is gone.\n",
		"node_modules/x/README.md": gone + "\n",
	}
	writeTree(t, root, files)
	found, err := stalePaths(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range found {
		got = append(got, s.String())
	}
	want := []string{"README.md:1: " + gone, "README.md:2: docs/GONE.md", "internal/contract/contract.go:1: " + gone, notes + ":1: lambda/" + "nowhere.md"}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("found %q, want %q", got, want)
	}
}

// docLink matches a Go doc link to a package's identifier: pkg.Name or
// pkg.Type.Method in square brackets. (Prose, "package pkg", is not read: "package of",
// "package in" and the like are English; paths are TestNoStalePaths'.)
var docLink = regexp.MustCompile(`\[([a-z][a-z0-9]*)\.[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?\]`)

// versionElem is an import path's major version element ("v2").
var versionElem = regexp.MustCompile(`^v[0-9]+$`)

// stalePackages returns every package name that a comment of a .go file
// under root cites by a doc link, and that names no
// package: not one of the repository's (by its package clause), not one of
// std (the names in stdNames), and not one the file imports (by its name or
// the last element of its path).
func stalePackages(root string, stdNames map[string]bool) ([]stale, error) {
	known := map[string]bool{}
	files := map[string]*ast.File{}
	fset := token.NewFileSet()
	err := walkSources(root, func(path string) error {
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		known[strings.TrimSuffix(f.Name.Name, "_test")] = true
		files[path] = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []stale
	for path, f := range files {
		imported := map[string]bool{}
		for _, im := range f.Imports {
			p := strings.Trim(im.Path.Value, `"`)
			if im.Name != nil {
				imported[im.Name.Name] = true
			}
			parts := strings.Split(p, "/")
			for i := len(parts) - 1; i >= 0; i-- { // ".../awscdk/v2" is awscdk
				if !versionElem.MatchString(parts[i]) {
					imported[parts[i]] = true
					break
				}
			}
		}
		rel, _ := filepath.Rel(root, path)
		for _, g := range f.Comments {
			for _, c := range g.List {
				for _, m := range docLink.FindAllStringSubmatch(c.Text, -1) {
					if name := m[1]; !known[name] && !stdNames[name] && !imported[name] {
						out = append(out, stale{file: rel, line: fset.Position(c.Pos()).Line, path: "package " + name})
					}
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b stale) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}

// stdNames are the names of the standard library's packages (the last
// element of each import path).
func stdNames(t *testing.T) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", "list", "std").Output()
	if err != nil {
		t.Fatalf("go list std: %v", err)
	}
	names := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		names[p[strings.LastIndex(p, "/")+1:]] = true
	}
	return names
}

// TestNoStalePackages: no comment of a .go file cites a package by a doc
// link (env.FromEnv in square brackets) that is none of the repository's, the standard
// library's or the file's imports.
func TestNoStalePackages(t *testing.T) {
	found, err := stalePackages(repoRoot(t), stdNames(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range found {
		t.Errorf("%s names no package (moved or removed?): fix the reference", s)
	}
}

// TestStalePackagesFindsWhatIsGone: the check finds a removed package cited
// by a doc link, and passes the repository's, std's and imported ones.
func TestStalePackagesFindsWhatIsGone(t *testing.T) {
	root := t.TempDir()
	gone := "en" + "v" // spelt apart, so that this file cites no removed package itself
	files := map[string]string{
		"a/a.go": "// Package a is read by [" + gone + ".FromEnv] and [" + gone + ".Config.Consumer];\n" +
			"// see [b.New], [json.Marshal], [strings.Cut], [awscdk.Stack] and [jsii.String].\n" +
			"package a\n\nimport (\n\t_ \"github.com/aws/aws-cdk-go/awscdk/v2\"\n\tjsii \"github.com/aws/jsii-runtime-go\"\n)\n\nvar _ = jsii.String\n",
		"b/b.go": "package b\n",
	}
	writeTree(t, root, files)
	found, err := stalePackages(root, map[string]bool{"json": true, "strings": true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range found {
		got = append(got, s.String())
	}
	want := []string{"a/a.go:1: package " + gone, "a/a.go:1: package " + gone}
	if !slices.Equal(got, want) {
		t.Errorf("found %q, want %q", got, want)
	}
}
