// Package steptask is what the construct gives a step's Task state and
// what the runtime asks of a step: the Retry policy and TimeoutSeconds of
// the Task state (built from the error names of lambda/step/states), the
// rule of a step's name, the bound of a step's output, and the window a
// Standard workflow's redrive asks of the step's guard. It is data on the standard library, so that the
// construct (constructs/step), the contract and the runtime (lambda/step)
// read it from one place; users read the values in the construct's and
// lambda/step's documentation.
package steptask

import (
	"math"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"
)

// Retrier is one entry of a Task state's Retry field, as the Amazon States
// Language writes it.
type Retrier struct {
	ErrorEquals     []string
	IntervalSeconds int
	BackoffRate     float64
	MaxAttempts     int
	// MaxDelaySeconds caps each wait; 0 means none.
	MaxDelaySeconds int
}

// Delay returns the wait before retry attempt (1 for the first retry).
func (r Retrier) Delay(attempt int) time.Duration {
	d := float64(r.IntervalSeconds) * math.Pow(r.BackoffRate, float64(attempt-1))
	if r.MaxDelaySeconds > 0 && d > float64(r.MaxDelaySeconds) {
		d = float64(r.MaxDelaySeconds)
	}
	return time.Duration(d * float64(time.Second))
}

// TransientErrors are the errors of the Lambda service and runtime that a
// Task state retries at once, whatever the step: those the Step Functions
// Developer Guide asks a lambda:invoke task to retry, and Lambda.Unknown
// (the function crashed or ran out of memory before it answered).
var TransientErrors = []string{"Lambda.ClientExecutionTimeoutException", "Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException", "Lambda.TooManyRequestsException", "Lambda.Unknown"}

// TimeoutErrors are the errors of an attempt that ran out of time: the
// task's TimeoutSeconds (States.Timeout) or the function's own timeout
// (Sandbox.Timedout). The invocation may have run its effect, or may still
// be running it: the retry gets the stored output, or states.ErrorInProgress until
// the invocation's lease ends.
var TimeoutErrors = []string{"States.Timeout", "Sandbox.Timedout"}

// Retriers returns the Retry policy of a step's Task state, for a function
// whose timeout is functionTimeout (which bounds every lease):
//
//   - TransientErrors and the step's transient answers (states.ErrorNotStarted,
//     states.ErrorStore, states.ErrorEffect, states.ErrorLeaseLost): 6 attempts from 1s, doubling
//     (about a minute in all);
//   - TimeoutErrors and states.ErrorInProgress: from 1s, doubling, each wait at
//     most half the function's timeout, with attempts enough that the waits
//     add up to twice the function's timeout: the lease of the invocation
//     that holds the fact has ended by then, and the next attempt gets its
//     output or takes the fact over.
//
// Permanent errors and an effect's named failures are left to a Catch.
func Retriers(functionTimeout time.Duration) []Retrier {
	maxDelay := max(1, int(math.Ceil(functionTimeout.Seconds()/2)))
	lease := Retrier{ErrorEquals: append(append([]string(nil), TimeoutErrors...), states.ErrorInProgress), IntervalSeconds: 1, BackoffRate: 2, MaxDelaySeconds: maxDelay}
	var waited time.Duration
	for waited < 2*functionTimeout || lease.MaxAttempts < 2 {
		lease.MaxAttempts++
		waited += lease.Delay(lease.MaxAttempts)
	}
	return []Retrier{
		{ErrorEquals: append(append([]string(nil), TransientErrors...), states.ErrorNotStarted, states.ErrorStore, states.ErrorEffect, states.ErrorLeaseLost), IntervalSeconds: 1, BackoffRate: 2, MaxAttempts: 6},
		lease,
	}
}

// InitMargin is what a Task state waits for beside its function's timeout:
// a cold start's init, which the function's timeout does not count and
// Lambda bounds to 10 seconds.
const InitMargin = 10 * time.Second

// TaskTimeout is a step's Task state's TimeoutSeconds for a function whose
// timeout is functionTimeout: the function's timeout and InitMargin, so that
// an attempt does not end (States.Timeout) before its invocation's lease,
// which ends at the function's deadline; an invocation that runs out of
// time is reported as Sandbox.Timedout, and States.Timeout means an answer
// that did not arrive. Either way the retry (Retriers) gets the step's
// stored output, or Step.InProgress until the lease ends.
func TaskTimeout(functionTimeout time.Duration) time.Duration {
	return functionTimeout + InitMargin
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

// StatePayloadBytes is what Step Functions accepts as a task's result and
// as a state's input or output: 262,144 bytes of UTF-8 ("Step Functions
// service quotas", "Maximum input or output size for a task, state, or
// execution"). A larger one fails the execution with
// States.DataLimitExceeded, a terminal error that no Retry or Catch matches,
// States.ALL included ("Handling errors in Step Functions workflows"); a
// redrive runs the state again and fails the same way.
const StatePayloadBytes = 262_144

// TaskMargin is what a step leaves of StatePayloadBytes for what its Task
// state adds to its output: 16 KiB. The step construct's Task
// (PayloadResponseOnly: the function's ARN as the Resource) adds nothing to
// the result and, with a ResultPath such as "$.reservation", the field's
// name beside the input (which OutputBound counts apart). A Task of one's
// own on the optimized integration (arn:aws:states:::lambda:invoke) wraps
// the output in Lambda's answer (ExecutedVersion, StatusCode, the HTTP
// headers of SdkHttpMetadata, SdkResponseMetadata: about 1.5 KB; with
// LogType Tail, LogResult, the base64 of the log's last 4 KB, about 5.5 KB
// more). Step Functions re-serializes what it passes on without
// whitespace, which only shrinks an output.
const TaskMargin = 16 * 1024

// MaxOutputBytes is the largest output a step returns: StatePayloadBytes
// less TaskMargin, 245,760 bytes, for an empty input.
const MaxOutputBytes = StatePayloadBytes - TaskMargin

// OutputBound is the largest output a step returns for an input of
// inputBytes: MaxOutputBytes less the input, since a ResultPath other than
// "$" (the example app's "$.reservation") merges the output into the
// state's input, and the state's output then carries both. A step cannot
// see its Task's ResultPath, so it counts the input whatever it is: under
// ResultPath "$" (the output replaces the input) a large input makes the
// bound stricter than Step Functions is, and the output is refused, by
// name, rather than fail the execution where no Catch sees it. A Task
// whose InputPath or Parameters gives the step a part of a larger state
// must leave room for the rest itself. Never negative.
func OutputBound(inputBytes int) int { return max(0, MaxOutputBytes-inputBytes) }
