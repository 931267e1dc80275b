package queue

import (
	"time"
)

// Body is what a source of SQS messages implements (package sqsbatch: SNS
// envelopes and raw messages; eventbridge: events; s3event: notifications):
// how a message's body becomes the facts the handler runs. The handler
// knows nothing else of the source, and the source nothing of the queue's
// rules (order, visibility, backoff, dead-lettering, reports).
//
// A Body is a Message (one fact per message) or Records (several).
//
// The methods' names are the seam's own: a method called through a generic
// interface keeps every reachable type's method of that name in the binary
// (the linker cannot tell them apart by signature), so a Decode or a Read
// would link the SDK's event stream decoder into every queue consumer.
type Body[T any] interface {
	// MaxBody is the largest body that can carry a message of at most
	// maxMessage bytes (Config.MaxMessageBytes): a larger body is bad
	// input before it is read.
	MaxBody(maxMessage int) int
	// DecodeFact decodes a fact into the message the key function and the
	// effect get.
	DecodeFact(it *Item, out *T) error
}

// Message is a Body whose message carries one fact (New, NewTx).
type Message[T any] interface {
	Body[T]
	// ReadFact reads the body's fact. Errors wrap outcome.ErrBadInput.
	ReadFact(body []byte) (Item, error)
}

// Records is a Body whose message carries several facts (NewRecords: an S3
// notification, one per record): each record is run in order, each with
// its own outcome and log line, and the message is done when all are.
type Records[T any] interface {
	Body[T]
	// ReadRecords reads the body's facts, one per record, each with its own
	// error when it cannot be read (that record alone is bad input); or
	// skip, a body acknowledged without a fact and why (S3's test event).
	// An error is the whole message's.
	ReadRecords(body []byte) (items []Item, skip string, err error)
}

// Item is one fact of a message.
type Item struct {
	Payload   []byte    // what the guard hashes and Decode decodes
	Published time.Time // the origin time in the body (SNS Timestamp, EventBridge time, S3 eventTime); zero when none
	Source    string    // what Published is, for an expired fact's line
	Meta      any       // the source's own fields, for Decode (an EventBridge event's)
	Err       error     // a record that cannot be read: bad input, that record alone
}

// Time is a time in a body (an SNS envelope's Timestamp, an EventBridge
// event's time, an S3 record's eventTime; RFC 3339). One that does not
// parse leaves it zero, the record's origin then being SQS's
// SentTimestamp: it does not make the body bad input.
type Time struct{ time.Time }

// UnmarshalJSON reads an RFC 3339 time, or leaves t zero.
func (t *Time) UnmarshalJSON(b []byte) error {
	var v time.Time
	if v.UnmarshalJSON(b) == nil {
		t.Time = v
	}
	return nil
}
