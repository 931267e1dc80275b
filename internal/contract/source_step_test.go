package contract_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// TestAStepNeedsAValidName: a step's contract carries its name
// (STEP_NAME, written for it alone) and refuses a missing or malformed one
// naming the variable at init.
func TestAStepNeedsAValidName(t *testing.T) {
	s := contract.Defaults(30 * time.Second)
	s.Table, s.Namespace, s.Consumer, s.Source, s.StepName = "t", "orders", "Shop/ReserveStock", contract.SourceStep, "reserve-stock"
	env := s.Encode()
	if env[contract.StepNameVar] != "reserve-stock" || env[contract.SourceVar] != "step" {
		t.Fatalf("env %v: want STEP_NAME and CONSUMER_SOURCE=step", env)
	}
	got, err := contract.Decode(func(k string) string { return env[k] }, "")
	if err != nil || got.StepName != "reserve-stock" || got.Source != contract.SourceStep {
		t.Fatalf("Decode: %+v, %v", got, err)
	}
	if err := got.CheckSource(contract.SourceQueue, "sqsbatch.Start"); err == nil || !strings.Contains(err.Error(), "(step.Start)") {
		t.Errorf("a queue entry point on a step's contract: %v, want a refusal naming step.Start", err)
	}
	q := contract.Defaults(30 * time.Second)
	q.Table, q.Namespace, q.Consumer = "t", "orders", "c"
	if _, ok := q.Encode()[contract.StepNameVar]; ok {
		t.Errorf("a queue consumer's environment carries %s", contract.StepNameVar)
	}
	for name, want := range map[string]string{"": "the step's name is empty", "a#b": "holds '#'"} {
		env[contract.StepNameVar] = name
		_, err := contract.Decode(func(k string) string { return env[k] }, "")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "StepName") {
			t.Errorf("STEP_NAME %q: %v, want an error with %q", name, err, want)
		}
	}
}

// TestStepNameProblem: a step's name is what a record key can hold.
func TestStepNameProblem(t *testing.T) {
	for name, bad := range map[string]bool{"reserve-stock": false, "": true, "a#b": true, "a\nb": true, strings.Repeat("n", contract.MaxStepNameBytes+1): true, "\xff": true} {
		if got := contract.StepNameProblem(name) != ""; got != bad {
			t.Errorf("StepNameProblem(%q) = %q", name, contract.StepNameProblem(name))
		}
	}
}
