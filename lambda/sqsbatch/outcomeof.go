package sqsbatch

import "github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"

// OutcomeOf is the outcome of a record for what the guard answered (its
// Result and error): the one mapping of the guard's answers onto the
// outcome table, shared by every adapter of the library (the stream
// adapter, package streambatch, reports its records in these outcomes).
// An error wrapping ErrExpired is Expired, ErrBadInput or the guard's
// invalid key or payload BadInput, idempotency.ErrNotStarted NotStarted,
// and an error the table does not name Failed.
func OutcomeOf(res idempotency.Result, err error) Outcome { return classify(res, err) }
