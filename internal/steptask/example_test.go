package steptask_test

import (
	"fmt"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/steptask"
)

// The Retry field of a step's Task state, for a function with a 30-second
// timeout.
func ExampleRetriers() {
	for _, r := range steptask.Retriers(30 * time.Second) {
		fmt.Printf("%v every %ds ×%v, at most %ds, %d attempts\n", r.ErrorEquals, r.IntervalSeconds, r.BackoffRate, r.MaxDelaySeconds, r.MaxAttempts)
	}
	// Output:
	// [Lambda.ClientExecutionTimeoutException Lambda.ServiceException Lambda.AWSLambdaException Lambda.SdkClientException Lambda.TooManyRequestsException Lambda.Unknown Step.NotStarted Step.StoreFailed Step.EffectFailed Step.LeaseLost] every 1s ×2, at most 0s, 6 attempts
	// [States.Timeout Sandbox.Timedout Step.InProgress] every 1s ×2, at most 15s, 7 attempts
}
