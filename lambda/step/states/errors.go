// Package states is what a state machine sees of a step (package
// lambda/step): the names of its errors, which a Task state's Retry and
// Catch match, the Retry policy a step's Task state carries, the rule of a
// step's name and the window a Standard workflow's redrive asks of its
// guard. It is data, on the standard library alone, so that the runtime
// (lambda/step) and the construct (constructs/step), which links no AWS
// SDK, read it from one place.
package states

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Error names a step reports, as the errorType of its Lambda function error:
// Step Functions matches a Task state's Retry and Catch ErrorEquals against
// them. Retryable lists those a Retry should match; the others are never
// retried (retrying gives the same answer) and belong in a Catch.
const (
	// ErrorInProgress: an invocation of another execution (or of this one,
	// before a timeout) holds the step's fact under a live lease, which ends
	// at that invocation's Lambda deadline at the latest. Retry later: the
	// retry gets the step's stored output, or takes the fact over.
	ErrorInProgress = "Step.InProgress"
	// ErrorNotStarted: too little time was left before the Lambda deadline
	// to run the effect and record it; nothing was written. Retry.
	ErrorNotStarted = "Step.NotStarted"
	// ErrorLeaseLost: the effect outlived its lease and another invocation
	// took the fact over; its output may not be the fact's. Retry: the retry
	// gets the newer invocation's output.
	ErrorLeaseLost = "Step.LeaseLost"
	// ErrorStore: the idempotency store failed (throttled, unreachable);
	// nothing was decided, or a completed effect's record could not be
	// written (the fact is then retaken after its lease). Retry.
	ErrorStore = "Step.StoreFailed"
	// ErrorEffect: the effect returned an error that Fail did not name, or
	// panicked; its reservation was released. Retry: the retry runs the
	// effect again.
	ErrorEffect = "Step.EffectFailed"
	// ErrorBadInput: the state input is not JSON or carries no valid key
	// for the fact. Never retried.
	ErrorBadInput = "Step.BadInput"
	// ErrorMismatch: the step's fact was run with another input (the same
	// key for different content). The effect does not run. Never retried.
	ErrorMismatch = "Step.PayloadMismatch"
	// ErrorOutputNotStored: the effect ran and its output was larger than
	// the guard stores, so that a duplicate cannot return it. Never retried:
	// the effect is not run again.
	ErrorOutputNotStored = "Step.OutputNotStored"
	// ErrorInvalidOutput: the effect ran and returned an output that is not
	// JSON, which no state can take as input; the fact is completed without
	// an output, so that its duplicates get ErrorOutputNotStored and the
	// effect never runs again. Never retried: fix the effect.
	ErrorInvalidOutput = "Step.InvalidOutput"
)

// Retryable returns the error names a Task state's Retry should match for a
// step (with Lambda's transient errors and States.Timeout, see Retriers):
// the answers after which another invocation can succeed.
func Retryable() []string {
	return []string{ErrorInProgress, ErrorNotStarted, ErrorLeaseLost, ErrorStore, ErrorEffect}
}

// Permanent returns the error names that a retry would only repeat, for a
// Task state's Catch: bad input, a payload mismatch and an output that was
// not stored, an output that is not JSON. An effect's own failures named with Fail are the effect's to
// list.
func Permanent() []string {
	return []string{ErrorBadInput, ErrorMismatch, ErrorOutputNotStored, ErrorInvalidOutput}
}

// RedrivePeriod is how long after a Standard execution fails, aborts or times
// out that RedriveExecution may start it again from the state that did not
// succeed, with the same input: 14 days. A step whose effect ran and whose
// answer was lost may be run again by a redrive that late.
const RedrivePeriod = 14 * 24 * time.Hour

// DefaultWindow is the business window a step's guard should keep
// (idempotency.Config.Window): RedrivePeriod and a day, so that a redrive
// finds the record of every effect its execution made. The guard's own
// default (a day) fits Express workflows, which last at most five minutes
// and are never redriven; a guard with a shorter window than this under a
// Standard workflow runs a redriven step's effect again once the window has
// passed.
const DefaultWindow = RedrivePeriod + 24*time.Hour

// MaxNameBytes bounds a step's name: 80, as Step Functions bounds a state's.
const MaxNameBytes = 80

// NameProblem says what is wrong with a step's name, or "": empty, longer
// than MaxNameBytes, not UTF-8, holding '#' (the separator of the step's
// name from the fact's key) or control characters.
func NameProblem(name string) string {
	switch {
	case name == "":
		return "the step's name is empty; give the name of its state (\"reserve-stock\")"
	case len(name) > MaxNameBytes:
		return fmt.Sprintf("the step's name has %d bytes, more than %d", len(name), MaxNameBytes)
	case !utf8.ValidString(name):
		return "the step's name is not valid UTF-8"
	case strings.ContainsRune(name, '#') || strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "the step's name holds '#' (the separator of its key from the fact's) or control characters; remove them"
	}
	return ""
}
