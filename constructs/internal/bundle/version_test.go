package bundle

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// Build infos as the Go toolchain writes them, for checkLibrary's table.
func mainModule(path string) debug.Module { return debug.Module{Path: path, Version: "(devel)"} }

func dep(version string) *debug.Module {
	return &debug.Module{Path: libraryPath, Version: version, Sum: "h1:x"}
}

func replaced(version, path, replVersion string) *debug.Module {
	m := dep(version)
	m.Replace = &debug.Module{Path: path, Version: replVersion}
	return m
}

func app(deps ...*debug.Module) *debug.BuildInfo {
	return &debug.BuildInfo{Main: mainModule("example.com/platform"), Deps: deps}
}

func handler(deps ...*debug.Module) *debug.BuildInfo {
	return &debug.BuildInfo{Main: mainModule("example.com/orders"), Deps: append([]*debug.Module{{Path: "github.com/aws/aws-lambda-go", Version: "v1.55.1"}}, deps...)}
}

// TestCheckLibrary holds one row per case of checkLibrary's definition of
// compatible: want is nil for an accepted pair, else what the refusal says.
func TestCheckLibrary(t *testing.T) {
	const fork = "github.com/acme/idempotent-consumer"
	for _, tc := range []struct {
		name               string
		construct, handler *debug.BuildInfo
		want               []string
	}{{
		name:      "same released version",
		construct: app(dep("v1.4.0")),
		handler:   handler(dep("v1.4.0")),
	}, {
		name:      "same pseudo-version",
		construct: app(dep("v1.4.1-0.20260101120000-0123456789ab")),
		handler:   handler(dep("v1.4.1-0.20260101120000-0123456789ab")),
	}, {
		name:      "different released versions",
		construct: app(dep("v1.4.0")),
		handler:   handler(dep("v1.3.0")),
		want: []string{
			"the handler is built with " + libraryPath + " v1.3.0 but this construct with " + libraryPath + " v1.4.0",
			"rule: a construct and the handler it bundles must be built with the same module version",
			"fix: in the handler's module example.com/orders, run `go get " + libraryPath + "@v1.4.0 && go mod tidy`",
		},
	}, {
		name:      "a release and a pseudo-version after it",
		construct: app(dep("v1.4.1-0.20260101120000-0123456789ab")),
		handler:   handler(dep("v1.4.0")),
		want:      []string{"v1.4.0 but this construct with " + libraryPath + " v1.4.1-0.20260101120000-0123456789ab"},
	}, {
		name:      "handler replaced by a directory",
		construct: app(dep("v1.4.0")),
		handler:   handler(replaced("v1.3.0", "../idempotent-consumer", "(devel)")),
	}, {
		name:      "handler replaced by a directory, as Go before 1.24 recorded it",
		construct: app(dep("v1.4.0")),
		handler:   handler(replaced("v1.3.0", "../idempotent-consumer", "")),
	}, {
		name:      "construct replaced by a directory",
		construct: app(replaced("v0.0.0-00010101000000-000000000000", "../", "(devel)")),
		handler:   handler(dep("v1.3.0")),
	}, {
		name:      "construct in the library's own module, as this repository's app",
		construct: &debug.BuildInfo{Main: mainModule(libraryPath)},
		handler:   handler(dep("v1.3.0")),
	}, {
		name:      "handler in the library's own module, as app/cmd/charge",
		construct: app(dep("v1.4.0")),
		handler:   &debug.BuildInfo{Main: mainModule(libraryPath)},
	}, {
		name:      "handler from a go.work workspace",
		construct: app(dep("v1.4.0")),
		handler:   handler(dep("(devel)")),
	}, {
		name:      "handler replaced by the construct's version",
		construct: app(dep("v1.4.0")),
		handler:   handler(replaced("v1.2.0", libraryPath, "v1.4.0")),
	}, {
		name:      "handler replaced by another version",
		construct: app(dep("v1.4.0")),
		handler:   handler(replaced("v1.4.0", libraryPath, "v1.3.0")),
		want: []string{
			"built with " + libraryPath + " v1.4.0 replaced by " + libraryPath + " v1.3.0 but this construct with " + libraryPath + " v1.4.0;",
			"run `go mod edit -dropreplace=" + libraryPath + " && go get " + libraryPath + "@v1.4.0 && go mod tidy`",
		},
	}, {
		name:      "handler replaced by a fork at the construct's version",
		construct: app(dep("v1.4.0")),
		handler:   handler(replaced("v1.4.0", fork, "v1.4.0")),
		want:      []string{"replaced by " + fork + " v1.4.0 but this construct with " + libraryPath + " v1.4.0;"},
	}, {
		name:      "both replaced by the same fork version",
		construct: app(replaced("v1.4.0", fork, "v1.4.1")),
		handler:   handler(replaced("v1.3.0", fork, "v1.4.1")),
	}, {
		name:      "construct replaced by a fork, handler not",
		construct: app(replaced("v1.4.0", fork, "v1.4.1")),
		handler:   handler(dep("v1.4.0")),
		want: []string{
			"but this construct with " + libraryPath + " v1.4.0 replaced by " + fork + " v1.4.1;",
			"run `go mod edit -replace=" + libraryPath + "=" + fork + "@v1.4.1 && go mod tidy`",
		},
	}, {
		name:      "handler without the library",
		construct: app(dep("v1.4.0")),
		handler:   handler(),
		want: []string{
			"the handler's bootstrap (its main module example.com/orders) links no package of " + libraryPath,
			"rule: a handler must be built on the library",
			"fix: point Entry at the main package of a handler built on " + libraryPath,
			"`go get " + libraryPath + "@v1.4.0`",
		},
	}, {
		name:      "handler without the library, construct from a working tree",
		construct: &debug.BuildInfo{Main: mainModule(libraryPath)},
		handler:   handler(),
		want:      []string{"links no package of", "(README, \"A handler\")"},
	}, {
		name:      "handler without build info",
		construct: app(dep("v1.4.0")),
		want:      []string{"the handler's bootstrap (a binary without module build info) links no package of"},
	}, {
		name:    "synth process without build info",
		handler: handler(dep("v1.3.0")),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkLibrary(tc.construct, tc.handler)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestBootstrapDirKeepsTheVerdict builds a handler that does not import the
// library, then removes its source: the second call answers from the memo,
// with the same refusal, rather than building again.
func TestBootstrapDirKeepsTheVerdict(t *testing.T) {
	entry := filepath.Join(t.TempDir(), "nolibrary")
	if err := os.MkdirAll(entry, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{
		"go.mod":  "module example.com/nolibrary\n\ngo 1.26\n",
		"main.go": "package main\n\nfunc main() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(entry, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		builds.Lock()
		defer builds.Unlock()
		delete(builds.dirs, buildKey{entry, "arm64"})
	})
	_, first := Dir(entry, "arm64")
	if first == nil || !strings.Contains(first.Error(), "links no package of "+libraryPath) {
		t.Fatalf("first build: %v, want the refusal", first)
	}
	if err := os.RemoveAll(entry); err != nil {
		t.Fatal(err)
	}
	_, second := Dir(entry, "arm64")
	if second == nil || second.Error() != first.Error() {
		t.Fatalf("second call: %v, want the memoized %v", second, first)
	}
}
