package step

import (
	"errors"
	"reflect"

	"github.com/aws/aws-lambda-go/lambda/messages"
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
	// ErrorInvalidOutput: the effect returned an output that is not JSON,
	// which no state can take as input; its reservation was released. Never
	// retried: fix the effect.
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

// Failure is an effect's failure with the name a Catch matches: a business
// outcome that ends the step ("OutOfStock", "PaymentDeclined"), so that the
// state machine runs the compensations. The effect's reservation is
// released, as for any failure: the fact has no effect, and a new attempt
// (a redrive) runs it again.
type Failure struct {
	// Name is the error name Step Functions reports; not "States." (which
	// the service keeps) and not empty.
	Name string
	// Err is the cause, reported as the error's message.
	Err error
}

func (f *Failure) Error() string { return f.Name + ": " + f.Err.Error() }

// Unwrap returns the cause.
func (f *Failure) Unwrap() error { return f.Err }

// Fail returns err as a failure named name, for an effect to return.
func Fail(name string, err error) error { return &Failure{Name: name, Err: err} }

// invokeError is the error a step returns to the Lambda runtime: aws-lambda-go
// reports a messages.InvokeResponse_Error as it is, so that its Type becomes
// the function error's errorType, the name Step Functions matches. (Any other
// Go error is reported under its type's name, "errorString" or "wrapError",
// which a state machine cannot match with meaning.)
func invokeError(name, message string) error {
	return messages.InvokeResponse_Error{Type: name, Message: message}
}

// ErrorName returns the name Step Functions sees for an error a Lambda
// handler returns, by aws-lambda-go's rule: the Type of a
// messages.InvokeResponse_Error (every error of a step), otherwise the name
// of the error's Go type. "" for nil.
func ErrorName(err error) string {
	if err == nil {
		return ""
	}
	var ie messages.InvokeResponse_Error
	if errors.As(err, &ie) {
		return ie.Type
	}
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// ErrorMessage returns the message Step Functions reports as an error's
// Cause: the Message of a messages.InvokeResponse_Error, otherwise
// err.Error(). "" for nil.
func ErrorMessage(err error) string {
	var ie messages.InvokeResponse_Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ie):
		return ie.Message
	}
	return err.Error()
}
