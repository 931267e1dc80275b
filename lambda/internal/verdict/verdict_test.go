package verdict_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/verdict"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

func TestOutcomeOfMapsTheGuardsAnswers(t *testing.T) {
	for _, c := range []struct {
		res  idempotency.Result
		err  error
		want outcome.Outcome
	}{
		{idempotency.Result{Outcome: outcome.Processed}, nil, outcome.Processed},
		{idempotency.Result{Outcome: outcome.Duplicate}, nil, outcome.Duplicate},
		{idempotency.Result{}, fmt.Errorf("k: %w", idempotency.ErrInProgress), outcome.InProgress},
		{idempotency.Result{}, idempotency.ErrPayloadMismatch, outcome.Mismatch},
		{idempotency.Result{}, fmt.Errorf("%w: x", outcome.ErrBadInput), outcome.BadInput},
		{idempotency.Result{}, idempotency.ErrInvalidKey, outcome.BadInput},
		{idempotency.Result{}, idempotency.ErrLeaseLost, outcome.LeaseLost},
		{idempotency.Result{}, fmt.Errorf("late: %w", idempotency.ErrNotStarted), outcome.NotStarted},
		{idempotency.Result{}, fmt.Errorf("old: %w", idempotency.ErrExpired), outcome.Expired},
		{idempotency.Result{}, errors.New("boom"), outcome.Failed},
	} {
		if got := verdict.Of(c.res, c.err); got != c.want {
			t.Errorf("OutcomeOf(%v, %v) = %v, want %v", c.res.Outcome, c.err, got, c.want)
		}
	}
}
