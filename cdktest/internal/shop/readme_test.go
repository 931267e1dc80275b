package shop_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeImport is how docs/testing.md imports the app's package, in place
// of this package's import path.
const readmeImport = `"example.com/shop" // your app's package, with NewShopStack(scope, id) awscdk.Stack`

// section is the heading of the page's section that shows the test.
const section = "## A snapshot and cdk-nag test of your stack"

// TestDocsShowShopTest: docs/testing.md's "A snapshot and cdk-nag test
// of your stack" shows shop_test.go verbatim (but for the import path of
// the app's package), so that the test a user copies is one that compiles
// and passes.
func TestDocsShowShopTest(t *testing.T) {
	self, err := os.ReadFile("shop_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	const pkg = `"github.com/idempotent-consumer/idempotent-consumer/cdktest/internal/shop"`
	if !strings.Contains(string(self), pkg) {
		t.Fatalf("shop_test.go does not import %s", pkg)
	}
	want := strings.Replace(string(self), pkg, readmeImport, 1)
	_, after, ok := strings.Cut(string(readme), "\n"+section+"\n")
	if !ok {
		t.Fatalf("docs/testing.md has no %q section", section)
	}
	_, block, ok := strings.Cut(after, "```go\n")
	block, _, closed := strings.Cut(block, "```\n")
	if !ok || !closed {
		t.Fatalf("docs/testing.md's %q has no Go block", section)
	}
	if block != want {
		w, g := strings.Split(want, "\n"), strings.Split(block, "\n")
		for i := 0; i < len(w) || i < len(g); i++ {
			if i >= len(w) || i >= len(g) || w[i] != g[i] {
				t.Fatalf("docs/testing.md's test differs from shop_test.go at its line %d:\ndocs:         %q\nshop_test.go: %q\n(copy shop_test.go into docs/testing.md, with the import %s)",
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
