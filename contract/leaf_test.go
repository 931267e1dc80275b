package contract_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestALeaf: the public contract depends on the standard library alone, so
// that a CDK app links no AWS SDK and a handler no CDK for its names, and
// the runtime contract (internal/contract) can stand on it.
func TestALeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	if deps := strings.Fields(string(out)); len(deps) != 1 {
		t.Errorf("the public contract depends on %v; it must depend on the standard library alone", deps)
	}
}
