package contract_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTheContractIsALeaf: the runtime contract imports no package of the
// runtime (lambda/) or of the constructs (constructs/), not even through
// another (go list -deps): both halves stand on it, and what it needs of
// theirs (the guard's rules, the step's name rule, the metrics namespace's
// default) lives below it.
func TestTheContractIsALeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		rel, ours := strings.CutPrefix(p, "github.com/idempotent-consumer/idempotent-consumer/")
		if ours && (strings.HasPrefix(rel, "lambda/") || strings.HasPrefix(rel, "constructs/")) {
			t.Errorf("internal/contract depends on %s", rel)
		}
	}
}
