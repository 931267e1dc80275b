// Package eventbridge is the queue consumer of an EventBridge rule that
// delivers whole events to an SQS queue: each event's detail is a fact,
// run once under an idempotency.Guard by the SQS transport (its Handler and
// Config are package sqsbatch's, whose rules hold here: order, same-batch
// duplicates, visibility, backoff, partial batch failures).
//
// Only the detail is the fact, so that a producer's retry (a new PutEvents
// call: a new event id and time, the same detail) runs once. A record's
// age is taken from the earlier of the event's time and the SQS
// SentTimestamp (see idempotency.ErrExpired).
package eventbridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/jsonesc"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Event is an EventBridge event as a rule delivers it to an SQS target,
// with its detail decoded into T: what the handler hands to the key function
// and the effect.
//
// Only Detail is the fact: the adapter hashes the detail alone, so that a
// producer's retry (a new PutEvents call: a new ID and Time, the same
// detail) is the same fact. The other fields say where the fact comes from;
// a key function may read them (a key of Source and an id in the detail,
// when two sources number their facts alike), and should never read ID,
// which is new on every PutEvents call.
type Event[T any] struct {
	// ID is the event's id: new on every PutEvents call, the same on
	// EventBridge's own redelivery. Not the fact's key.
	ID string
	// Source is the event's source ("com.example.orders").
	Source string
	// DetailType is the event's detail-type ("OrderPlaced").
	DetailType string
	// Account is the AWS account id the event came from.
	Account string
	// Region is the AWS Region of the event bus.
	Region string
	// Time is the event's time: the PutEvents entry's Time, or the time of
	// the call when the producer set none. Zero when it does not parse.
	Time time.Time
	// Resources are the ARNs the event names.
	Resources []string
	// Detail is the business message, decoded from the event's detail.
	Detail T
}

// eventFields are the fields of an EventBridge event the adapter reads.
type eventFields struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType *string         `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       queue.Time      `json:"time"` // RFC 3339; a time that does not parse is none
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// errNotAnEvent is the start of the reason of a body that is not an
// EventBridge event.
const errNotAnEvent = "body is not an EventBridge event as a rule delivers it to an SQS target"

// parseEvent reads an EventBridge event. It refuses a body that is not
// UTF-8, not a JSON object, holds a lone UTF-16 surrogate escape anywhere
// (decoding would turn it into U+FFFD, and two different sources or details
// into one), or lacks an id, a source, a detail-type or a detail that is a
// JSON object (EventBridge's PutEvents takes no other).
func parseEvent(body []byte) (*eventFields, error) {
	if !utf8.Valid(body) {
		return nil, fmt.Errorf("%w: body is not valid UTF-8", outcome.ErrBadInput)
	}
	if !bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{")) {
		return nil, fmt.Errorf("%w: %s: not a JSON object", outcome.ErrBadInput, errNotAnEvent)
	}
	var ev eventFields
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", outcome.ErrBadInput, errNotAnEvent, err)
	}
	if i := jsonesc.LoneSurrogate(body); i >= 0 {
		return nil, fmt.Errorf("%w: the event holds a lone UTF-16 surrogate escape (%s), which is not valid Unicode", outcome.ErrBadInput, body[i:i+6])
	}
	var missing string
	switch {
	case ev.ID == "":
		missing = "id"
	case ev.Source == "":
		missing = "source"
	case ev.DetailType == nil:
		missing = "detail-type"
	case len(ev.Detail) == 0 || string(ev.Detail) == "null":
		missing = "detail"
	}
	if missing != "" {
		return nil, fmt.Errorf("%w: %s: no %s (the consumer's delivery is %q: every body must be a whole event, as a rule without an input transformer delivers it; producers that send their message to the queue directly need a consumer of delivery %q)",
			outcome.ErrBadInput, errNotAnEvent, missing, contract.EventBridge, contract.Raw)
	}
	if ev.Detail[0] != '{' {
		return nil, fmt.Errorf("%w: %s: its detail is not a JSON object", outcome.ErrBadInput, errNotAnEvent)
	}
	return &ev, nil
}

// New returns a Handler for a queue that an EventBridge rule delivers to:
// each body is an event, fn runs once per fact (per detail: see Event), and
// key derives the fact's key from the event. cfg.Delivery is set to
// "eventbridge".
//
// The detail alone is hashed and checked against cfg.MaxMessageBytes (at
// most 1,040,384 bytes, since EventBridge carries events of up to 1 MB:
// the queue's 1 MiB body less what EventBridge adds to the detail); a body
// that is not an EventBridge event is bad input.
func New[T any](guard *idempotency.Guard, key handler.KeyFunc[Event[T]], fn handler.Func[Event[T]], cfg sqsbatch.Config) *sqsbatch.Handler[Event[T]] {
	cfg.Delivery = contract.EventBridge
	return (*sqsbatch.Handler[Event[T]])(queue.New(guard, key, fn, queue.Config(cfg), body[T]{}))
}

// NewTx is New for a transactional effect (see sqsbatch.NewTx).
func NewTx[T, W any](guard *idempotency.Guard, key handler.KeyFunc[Event[T]], fn handler.TxFunc[Event[T], W], cfg sqsbatch.Config) *sqsbatch.Handler[Event[T]] {
	cfg.Delivery = contract.EventBridge
	return (*sqsbatch.Handler[Event[T]])(queue.NewTx(guard, key, fn, queue.Config(cfg), body[T]{}))
}

// body reads EventBridge events (queue.Body).
type body[T any] struct{}

// MaxBody is the queue's largest body: an event's other fields (its
// resources) are not the message's, so only the detail is bounded by
// MaxMessageBytes.
func (body[T]) MaxBody(int) int { return contract.MaxQueueBodyBytes }

// ReadFact reads an event: its detail is the fact, its time the origin.
func (body[T]) ReadFact(raw []byte) (queue.Item, error) {
	ev, err := parseEvent(raw)
	if err != nil {
		return queue.Item{}, err
	}
	return queue.Item{Payload: ev.Detail, Published: ev.Time.Time, Source: "EventBridge event time", Meta: ev}, nil
}

// DecodeFact decodes the fact into an Event.
func (body[T]) DecodeFact(it *queue.Item, out *Event[T]) error {
	ev := it.Meta.(*eventFields)
	dt := ""
	if ev.DetailType != nil {
		dt = *ev.DetailType
	}
	*out = Event[T]{ID: ev.ID, Source: ev.Source, DetailType: dt, Account: ev.Account, Region: ev.Region, Time: ev.Time.Time, Resources: ev.Resources}
	return json.Unmarshal(it.Payload, &out.Detail)
}
