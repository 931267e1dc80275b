package states_test

import (
	"slices"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"
)

// TestEveryErrorIsRetryableOrPermanent: each error name a step reports is in
// exactly one of the lists a state machine's author builds Retry and Catch
// from, so that none is left to a default and none is both retried and
// caught.
func TestEveryErrorIsRetryableOrPermanent(t *testing.T) {
	all := []string{states.ErrorInProgress, states.ErrorNotStarted, states.ErrorLeaseLost, states.ErrorStore, states.ErrorEffect,
		states.ErrorBadInput, states.ErrorMismatch, states.ErrorOutputNotStored, states.ErrorInvalidOutput}
	for _, name := range all {
		if slices.Contains(states.Retryable(), name) == slices.Contains(states.Permanent(), name) {
			t.Errorf("%s is in Retryable %t and in Permanent %t: want exactly one", name, slices.Contains(states.Retryable(), name), slices.Contains(states.Permanent(), name))
		}
	}
	if n := len(states.Retryable()) + len(states.Permanent()); n != len(all) {
		t.Errorf("Retryable and Permanent list %d names, want the %d a step reports", n, len(all))
	}
}
