package apicheck

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/idempotent-consumer/idempotent-consumer/internal/modroot"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// modulePath is the root module's path.
const modulePath = "github.com/idempotent-consumer/idempotent-consumer"

// example are the root module's folders that are not the library: the
// example application (its packages are programs and the stacks of one
// app, which users copy from rather than import).
var example = []string{"app"}

// library is the root module's library as the compiler exports it.
type library struct {
	// pkgs are the library's packages, by import path: every package of
	// the root module that is not a command, not under an internal/ folder
	// and not in an example folder.
	pkgs []*types.Package
	// files are each library package's Go files (tests left out), by
	// import path.
	files map[string][]string
	// byName are the module's packages by name, internal ("queue",
	// "limits", "contract") and of the library ("contract", "sqsbatch"),
	// for the names a doc comment cites ("contract.Settings").
	internalByName, publicByName map[string][]*types.Package
}

var (
	loadOnce sync.Once
	loaded   library
	loadErr  error
)

// loadLibrary lists the root module's packages and type-checks the
// library's from their export data (go list -export builds them, with
// the build cache).
func loadLibrary(t *testing.T) library {
	t.Helper()
	loadOnce.Do(func() { loaded, loadErr = load(repoRoot(t)) })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loaded
}

func load(root string) (library, error) {
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Name}}\t{{with .Module}}{{.Path}}{{end}}\t{{.Dir}}\t{{join .GoFiles \",\"}}", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return library{}, fmt.Errorf("go list -export ./...: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	lib := library{files: map[string][]string{}, internalByName: map[string][]*types.Package{}, publicByName: map[string][]*types.Package{}}
	var paths, internals []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 6 {
			continue
		}
		path, export, name, module, dir, files := f[0], f[1], f[2], f[3], f[4], f[5]
		exports[path] = export
		switch {
		case module != modulePath || name == "main":
		case isInternal(path):
			internals = append(internals, path)
		case inLibrary(path):
			paths = append(paths, path)
			for _, file := range strings.Split(files, ",") {
				lib.files[path] = append(lib.files[path], filepath.Join(dir, file))
			}
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	slices.Sort(paths)
	for _, p := range paths {
		pkg, err := imp.Import(p)
		if err != nil {
			return library{}, fmt.Errorf("import %s: %v", p, err)
		}
		lib.pkgs = append(lib.pkgs, pkg)
		lib.publicByName[pkg.Name()] = append(lib.publicByName[pkg.Name()], pkg)
	}
	for _, p := range internals {
		pkg, err := imp.Import(p)
		if err != nil {
			return library{}, fmt.Errorf("import %s: %v", p, err)
		}
		lib.internalByName[pkg.Name()] = append(lib.internalByName[pkg.Name()], pkg)
	}
	return lib, nil
}

// inLibrary reports whether the root module's package path is of the
// library: not internal, not in an example folder.
func inLibrary(path string) bool {
	rel := strings.TrimPrefix(strings.TrimPrefix(path, modulePath), "/")
	if isInternal(path) {
		return false
	}
	for _, e := range example {
		if rel == e || strings.HasPrefix(rel, e+"/") {
			return false
		}
	}
	return true
}

// isInternal reports whether a package path has an internal element, which
// the go command refuses to import from outside the tree that holds it.
func isInternal(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "internal")
}

// rel is a package path of the module without the module's path
// ("lambda/sqsbatch").
func rel(path string) string {
	return strings.TrimPrefix(strings.TrimPrefix(path, modulePath), "/")
}

// repoRoot is the root module's folder (modroot's).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := modroot.OfWorkingDirectory()
	if err != nil {
		t.Fatal(err)
	}
	return root
}
