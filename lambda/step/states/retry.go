package states

import (
	"math"
	"time"
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
// be running it: the retry gets the stored output, or ErrorInProgress until
// the invocation's lease ends.
var TimeoutErrors = []string{"States.Timeout", "Sandbox.Timedout"}

// Retriers returns the Retry policy of a step's Task state, for a function
// whose timeout is functionTimeout (which bounds every lease):
//
//   - TransientErrors and the step's transient answers (ErrorNotStarted,
//     ErrorStore, ErrorEffect, ErrorLeaseLost): 6 attempts from 1s, doubling
//     (about a minute in all);
//   - TimeoutErrors and ErrorInProgress: from 1s, doubling, each wait at
//     most half the function's timeout, with attempts enough that the waits
//     add up to twice the function's timeout: the lease of the invocation
//     that holds the fact has ended by then, and the next attempt gets its
//     output or takes the fact over.
//
// Permanent errors and an effect's named failures are left to a Catch.
func Retriers(functionTimeout time.Duration) []Retrier {
	maxDelay := max(1, int(math.Ceil(functionTimeout.Seconds()/2)))
	lease := Retrier{ErrorEquals: append(append([]string(nil), TimeoutErrors...), ErrorInProgress), IntervalSeconds: 1, BackoffRate: 2, MaxDelaySeconds: maxDelay}
	var waited time.Duration
	for waited < 2*functionTimeout || lease.MaxAttempts < 2 {
		lease.MaxAttempts++
		waited += lease.Delay(lease.MaxAttempts)
	}
	return []Retrier{
		{ErrorEquals: append(append([]string(nil), TransientErrors...), ErrorNotStarted, ErrorStore, ErrorEffect, ErrorLeaseLost), IntervalSeconds: 1, BackoffRate: 2, MaxAttempts: 6},
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
