package sqsbatch_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

func TestOutcomeOfMapsTheGuardsAnswers(t *testing.T) {
	for _, c := range []struct {
		res  idempotency.Result
		err  error
		want sqsbatch.Outcome
	}{
		{idempotency.Result{Outcome: idempotency.Processed}, nil, sqsbatch.Processed},
		{idempotency.Result{Outcome: idempotency.Duplicate}, nil, sqsbatch.Duplicate},
		{idempotency.Result{}, fmt.Errorf("k: %w", idempotency.ErrInProgress), sqsbatch.InProgress},
		{idempotency.Result{}, idempotency.ErrPayloadMismatch, sqsbatch.Mismatch},
		{idempotency.Result{}, fmt.Errorf("%w: x", sqsbatch.ErrBadInput), sqsbatch.BadInput},
		{idempotency.Result{}, idempotency.ErrInvalidKey, sqsbatch.BadInput},
		{idempotency.Result{}, idempotency.ErrLeaseLost, sqsbatch.LeaseLost},
		{idempotency.Result{}, fmt.Errorf("late: %w", idempotency.ErrNotStarted), sqsbatch.NotStarted},
		{idempotency.Result{}, fmt.Errorf("old: %w", sqsbatch.ErrExpired), sqsbatch.Expired},
		{idempotency.Result{}, errors.New("boom"), sqsbatch.Failed},
	} {
		if got := sqsbatch.OutcomeOf(c.res, c.err); got != c.want {
			t.Errorf("OutcomeOf(%v, %v) = %v, want %v", c.res.Outcome, c.err, got, c.want)
		}
	}
}
