package doccheck

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// modulePath is the root module's path: an import path under it names a
// folder of the repository.
const modulePath = "github.com/idempotent-consumer/idempotent-consumer/"

// tops are the top-level folders whose paths docs cite ("lambda/contract",
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

// stalePaths returns every path that a .go or .md file under root names
// and that does not exist under root.
func stalePaths(root string) ([]stale, error) {
	var out []stale
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || slices.Contains(skipDirs, d.Name())) {
				return filepath.SkipDir
			}
			return nil
		}
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
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root %s: %v", root, err)
	}
	found, err := stalePaths(root)
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
		"lambda/contract/contract.go": "// Package contract replaces package " + gone + ".\npackage contract\n",
		"lambda/handler/handler.go": "package handler\n\n// New reads what lambda/contract decodes (see lambda/contract/contract.go,\n" +
			"// constructs/v10 is constructs-go, and aws-cdk-go/awscdk/v2/awslambda is no path of ours).\nfunc New() {}\n",
		"README.md": "Import `" + modulePath + gone + "` or " + modulePath + "lambda/handler.\n" +
			"See [the design](DESIGN.md#the-record), [gone](docs/GONE.md), [the handler](lambda/handler) and [Go](https://go.dev).\n",
		"DESIGN.md":                "# Design\n",
		notes:                      "[up](../../DESIGN.md) and [nowhere](../nowhere.md)\n",
		"CHANGELOG.md":             "`" + gone + "` is gone.\n",
		"node_modules/x/README.md": gone + "\n",
	}
	for name, body := range files {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	found, err := stalePaths(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range found {
		got = append(got, s.String())
	}
	want := []string{"README.md:1: " + gone, "README.md:2: docs/GONE.md", "lambda/contract/contract.go:1: " + gone, notes + ":1: lambda/" + "nowhere.md"}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("found %q, want %q", got, want)
	}
}
