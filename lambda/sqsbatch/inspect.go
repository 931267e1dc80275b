package sqsbatch

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// Inspect returns the fact the handler would judge for rec, as its own
// per-record path reads it before any store request: the body bounded,
// parsed (an SNS envelope or raw, by Config.Delivery), decoded into T, its
// key from the key function and the guard's Fact, with Sent at the
// record's origin (the earlier of the envelope's Timestamp and the
// SentTimestamp attribute; zero with neither). It makes no store request
// and runs no effect. An error is the record's bad input (it wraps
// ErrBadInput, idempotency.ErrInvalidKey or ErrInvalidPayload), refused
// in the words of the record's log line.
//
// It is for tools that tell an operator what the handler will do with a
// message (the operator command's show --body and its redrive dry run):
// the record's key, and with the store's record, its outcome.
func (h *Handler[T]) Inspect(rec *events.SQSMessage) (idempotency.Fact, error) {
	if maxBody := envelopeBound(h.cfg.MaxMessageBytes); len(rec.Body) > maxBody {
		return idempotency.Fact{}, fmt.Errorf("%w: body of %d bytes, more than %d, the most that can carry a message of at most %d bytes", ErrBadInput, len(rec.Body), maxBody, h.cfg.MaxMessageBytes)
	}
	payload, published, err := parse([]byte(rec.Body), h.cfg.Delivery)
	if err != nil {
		return idempotency.Fact{}, err
	}
	if len(payload) > h.cfg.MaxMessageBytes {
		return idempotency.Fact{}, fmt.Errorf("%w: message of %d bytes, more than %d", ErrBadInput, len(payload), h.cfg.MaxMessageBytes)
	}
	var msg T
	if err := json.Unmarshal(payload, &msg); err != nil {
		return idempotency.Fact{}, fmt.Errorf("%w: decode message: %v", ErrBadInput, err)
	}
	key, err := h.key(msg)
	if err != nil {
		return idempotency.Fact{}, fmt.Errorf("%w: key: %v", ErrBadInput, err)
	}
	if key == "" {
		return idempotency.Fact{}, errEmptyKey
	}
	fact, err := h.guard.Fact(key, payload)
	if err != nil {
		return idempotency.Fact{}, err
	}
	fact.Sent, _, _ = origin(rec, published, "SNS Timestamp")
	return fact, nil
}
