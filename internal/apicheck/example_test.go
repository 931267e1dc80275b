package apicheck

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/internal/modroot"
)

// TestTheExampleAppUsesThePublicAPI: the example app's programs and its
// platform package (app/..., their non-test files) import nothing of the
// library's internal packages, so that a user who copies them into a
// module of their own compiles them as they are. The app's test kits
// (packages named …test, which only its tests import) are left out: they
// build their fixtures on the library's test rigs.
func TestTheExampleAppUsesThePublicAPI(t *testing.T) {
	const module = "github.com/idempotent-consumer/idempotent-consumer/"
	root, err := modroot.OfWorkingDirectory()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./app/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./app/...: %v", err)
	}
	var bad []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		if strings.HasSuffix(pkg, "test") {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, module) && strings.Contains(imp, "/internal/") && !strings.HasPrefix(imp, module+"app/") {
				bad = append(bad, strings.TrimPrefix(pkg, module)+" imports "+strings.TrimPrefix(imp, module))
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("the example app imports the library's internal packages, which a user's copy cannot:\n  %s", strings.Join(bad, "\n  "))
	}
}
