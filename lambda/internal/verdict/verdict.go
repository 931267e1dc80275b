// Package verdict maps the guard's answers onto the outcome table: the one
// mapping every source of the library shares.
package verdict

import (
	"errors"
	"fmt"
	"strings"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// ErrNotStarted marks a record a source did not start (too close to the
// deadline, or behind a failed record of its group): NotStarted.
var ErrNotStarted = errors.New("not started")

// Of is the outcome of a record for what the guard answered (its Result and
// error). An error wrapping idempotency.ErrExpired is Expired,
// outcome.ErrBadInput or the guard's invalid key or payload BadInput,
// ErrNotStarted or idempotency.ErrNotStarted NotStarted, and an error the
// table does not name Failed.
func Of(res idempotency.Result, err error) outcome.Outcome {
	switch {
	case errors.Is(err, idempotency.ErrExpired):
		return outcome.Expired
	case res.Outcome == outcome.Duplicate:
		return outcome.Duplicate
	case res.Outcome == outcome.Processed:
		return outcome.Processed
	case errors.Is(err, idempotency.ErrInvalidKey), errors.Is(err, idempotency.ErrInvalidPayload), errors.Is(err, outcome.ErrBadInput):
		return outcome.BadInput
	case errors.Is(err, idempotency.ErrPayloadMismatch):
		return outcome.Mismatch
	case errors.Is(err, idempotency.ErrInProgress):
		return outcome.InProgress
	case errors.Is(err, idempotency.ErrLeaseLost):
		return outcome.LeaseLost
	case errors.Is(err, ErrNotStarted), errors.Is(err, idempotency.ErrNotStarted):
		return outcome.NotStarted
	}
	return outcome.Failed
}

// Count is one more than the last outcome: the size of an array indexed by
// outcome.Outcome.
const Count = outcome.Expired + 1

// KeyRefusal is the bad input of a key function's error: "bad input: key: "
// and the error, whose own "bad input: " (a key function that wraps
// outcome.ErrBadInput, as it should) is not said twice.
func KeyRefusal(err error) error {
	return fmt.Errorf("%w: key: %s", outcome.ErrBadInput, strings.TrimPrefix(err.Error(), outcome.ErrBadInput.Error()+": "))
}
