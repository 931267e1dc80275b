package shop_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeImport is how README.md imports the app's package, in place of
// this package's import path.
const readmeImport = `"example.com/shop" // your app's package, with NewShopStack(scope, id) awscdk.Stack`

// TestREADMEShowsShopTest: README.md's "Test your app" shows shop_test.go
// verbatim (but for the import path of the app's package), so that the
// test a user copies is one that compiles and passes.
func TestREADMEShowsShopTest(t *testing.T) {
	self, err := os.ReadFile("shop_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const pkg = `"github.com/idempotent-consumer/idempotent-consumer/cdktest/internal/shop"`
	if !strings.Contains(string(self), pkg) {
		t.Fatalf("shop_test.go does not import %s", pkg)
	}
	want := strings.Replace(string(self), pkg, readmeImport, 1)
	_, after, ok := strings.Cut(string(readme), "\n## Test your app\n")
	if !ok {
		t.Fatal(`README.md has no "## Test your app" section`)
	}
	_, block, ok := strings.Cut(after, "```go\n")
	block, _, closed := strings.Cut(block, "```\n")
	if !ok || !closed {
		t.Fatal(`README.md's "Test your app" has no Go block`)
	}
	if block != want {
		w, g := strings.Split(want, "\n"), strings.Split(block, "\n")
		for i := 0; i < len(w) || i < len(g); i++ {
			if i >= len(w) || i >= len(g) || w[i] != g[i] {
				t.Fatalf("README.md's test differs from shop_test.go at its line %d:\nREADME:       %q\nshop_test.go: %q\n(copy shop_test.go into README, with the import %s)",
					i+1, at(g, i), at(w, i), readmeImport)
			}
		}
	}
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end)"
}
