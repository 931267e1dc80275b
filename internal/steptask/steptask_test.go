package steptask_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/steptask"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"
)

// TestATaskOutlastsItsInvocation: a Task's TimeoutSeconds is longer than
// its function's timeout by a cold start's init, and the Retry of the
// timeouts and Step.InProgress waits, in all, at least twice the function's
// timeout (the lease of the invocation that holds the fact has ended).
func TestATaskOutlastsItsInvocation(t *testing.T) {
	for _, fn := range []time.Duration{3 * time.Second, 30 * time.Second, 15 * time.Minute} {
		if got := steptask.TaskTimeout(fn); got != fn+steptask.InitMargin {
			t.Errorf("TaskTimeout(%s) = %s", fn, got)
		}
		lease := steptask.Retriers(fn)[1]
		var waited time.Duration
		for a := 1; a <= lease.MaxAttempts; a++ {
			waited += lease.Delay(a)
		}
		if waited < 2*fn || !strings.Contains(strings.Join(lease.ErrorEquals, ","), states.ErrorInProgress) {
			t.Errorf("function timeout %s: the lease retrier %+v waits %s", fn, lease, waited)
		}
	}
}

// TestTransientErrorsCoverTheGuide: the Lambda errors that the Step
// Functions Developer Guide ("Handle transient Lambda service exceptions")
// asks a Lambda task to retry, and that aws-lambda-cdk's LambdaInvoke
// retries when RetryOnServiceExceptions is on (the step's Task turns it off
// and carries Retriers instead), are all retried.
func TestTransientErrorsCoverTheGuide(t *testing.T) {
	retried := steptask.Retriers(30 * time.Second)[0].ErrorEquals
	for _, name := range []string{"Lambda.ClientExecutionTimeoutException", "Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException"} {
		if !slices.Contains(retried, name) {
			t.Errorf("%s is not retried: %v", name, retried)
		}
	}
}
