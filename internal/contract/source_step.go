package contract

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

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
// SourceStep): a name that StepNameProblem accepts.
func (s Settings) stepProblems() []string {
	if p := StepNameProblem(s.StepName); p != "" {
		return []string{fmt.Sprintf("StepName %q: %s", s.StepName, p)}
	}
	return nil
}

// MaxStepNameBytes bounds a step's name: 80, as Step Functions bounds a state's.
const MaxStepNameBytes = 80

// StepNameProblem says what is wrong with a step's name, or "": empty, longer
// than MaxStepNameBytes, not UTF-8, holding '#' (the separator of the step's
// name from the fact's key) or control characters.
func StepNameProblem(name string) string {
	switch {
	case name == "":
		return "the step's name is empty; give the name of its state (\"reserve-stock\")"
	case len(name) > MaxStepNameBytes:
		return fmt.Sprintf("the step's name has %d bytes, more than %d", len(name), MaxStepNameBytes)
	case !utf8.ValidString(name):
		return "the step's name is not valid UTF-8"
	case strings.ContainsRune(name, '#') || strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "the step's name holds '#' (the separator of its key from the fact's) or control characters; remove them"
	}
	return ""
}
