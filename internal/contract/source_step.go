package contract

import (
	"fmt"

	"github.com/idempotent-consumer/idempotent-consumer/internal/steptask"
)

// SourceStep: the Task state of a Step Functions state machine, which
// invokes the function synchronously with the state input (the step
// construct's): the handler is step.Start, over package step.
const SourceStep Source = "step"

// StepNameVar carries StepName, written for a step alone.
const StepNameVar = "STEP_NAME"

// stepFields are the step's entries of the contract (fields.go appends
// them), written only where they are set.
var stepFields = []Field{
	quietDefault(entry(StepNameVar, "StepName", "StepName",
		"none: required for a step", "reserve-stock",
		"the step's name, part of every record key (\"<namespace>#<step>#<key>\"): a compensation is another step over the same fact",
		func(s *Settings) *string { return &s.StepName }, none[string])),
}

func init() { fields = append(fields, stepFields...) }

// stepProblems are the rules of a step's settings (adapterProblems, for
// SourceStep): a name that steptask.NameProblem accepts.
func (s Settings) stepProblems() []string {
	if p := steptask.NameProblem(s.StepName); p != "" {
		return []string{fmt.Sprintf("StepName %q: %s", s.StepName, p)}
	}
	return nil
}
