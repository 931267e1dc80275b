// Package states is what a state machine sees of a step (package
// lambda/step): the names of its errors, which a Task state's Retry and
// Catch match. It is data, on the standard library alone, so that the
// runtime (lambda/step), the construct (constructs/step), which links no
// AWS SDK, and a state machine's author read them from one place. The Retry
// policy the construct's Task state carries is built from them.
package states

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
	// ErrorOutputNotStored: the effect ran and its output, with the step's
	// input, was larger than Step Functions accepts less a margin for the
	// Task state (step.MaxOutputBytes), so that it was not stored and no
	// call returns it: returned, it would fail the execution with
	// States.DataLimitExceeded, which no Catch matches. Never retried: the
	// effect is not run again.
	ErrorOutputNotStored = "Step.OutputNotStored"
	// ErrorInvalidOutput: the effect ran and returned an output that is not
	// JSON, which no state can take as input; the fact is completed without
	// an output, so that its duplicates get ErrorOutputNotStored and the
	// effect never runs again. Never retried: fix the effect.
	ErrorInvalidOutput = "Step.InvalidOutput"
)

// Retryable returns the error names a Task state's Retry should match for a
// step (with Lambda's transient errors and States.Timeout, which the construct's
// Task state retries too):
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
