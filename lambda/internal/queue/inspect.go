package queue

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// Inspect returns the facts the handler would judge for rec, as its own
// per-message path reads them before any store request (the same code):
// the body bounded and read by the source's Body (an SNS envelope or raw
// body, an EventBridge event's detail, or an S3 notification's records,
// one fact each; none for S3's test event), each decoded into T, its key
// from the key function and the guard's Fact, with Sent at its origin (see
// Config; zero without one). It makes no store request and runs no effect.
// An error is the message's bad input (it wraps outcome.ErrBadInput,
// idempotency.ErrInvalidKey or ErrInvalidPayload), in the words of the
// record's log line; for an S3 notification, its first record's that is.
//
// It is for tools that tell an operator what the handler will do with a
// message (the operator command's show --body and its redrive dry run):
// each fact's key, and with the store's record, its outcome.
func (h *Handler[T]) Inspect(rec *events.SQSMessage) ([]idempotency.Fact, error) {
	if h.records == nil {
		it, err := h.message(rec)
		if err != nil {
			return nil, err
		}
		j, bad := h.judge(rec, &it)
		if bad != nil {
			return nil, bad.Err
		}
		return []idempotency.Fact{j.fact}, nil
	}
	if err := h.bounded(rec); err != nil {
		return nil, err
	}
	items, _, err := h.records.ReadRecords([]byte(rec.Body))
	if err != nil {
		return nil, err
	}
	facts := make([]idempotency.Fact, 0, len(items))
	for i := range items {
		j, bad := h.judge(rec, &items[i])
		if bad != nil {
			return nil, fmt.Errorf("record %d: %w", i, bad.Err)
		}
		facts = append(facts, j.fact)
	}
	return facts, nil
}
