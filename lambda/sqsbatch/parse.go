package sqsbatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/idempotent-consumer/idempotent-consumer/internal/jsonesc"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Delivery says what the queue's bodies are: SNS notifications (in their
// envelope or raw), messages that producers send to the queue themselves,
// EventBridge events, or S3 event notifications. The construct writes it in
// the contract (MESSAGE_DELIVERY) from the consumer's source; the adapter
// never guesses it from a body, but for Auto.
type Delivery string

// Deliveries.
const (
	// Auto detects an SNS envelope per message: a JSON object whose Type is
	// "Notification" and that has a TopicArn. Anything else is raw.
	Auto Delivery = "auto"
	// Raw means the body is the business message (raw message delivery, or
	// messages sent to the queue directly).
	Raw Delivery = "raw"
	// Envelope means every body is an SNS notification envelope whose
	// Message is the business message.
	Envelope Delivery = "envelope"
	// EventBridge means every body is an EventBridge event as a rule
	// delivers it to an SQS target (the whole event, no input
	// transformer): the business message is its detail, the only part
	// hashed (see Event, NewEvents).
	EventBridge Delivery = "eventbridge"
	// S3 means every body is an S3 event notification: a Records array,
	// one fact per record, each with its own outcome (see Object,
	// ObjectKey), or S3's s3:TestEvent, which is acknowledged.
	S3 Delivery = "s3"
)

// Size limits of the path a message takes.
//
// SNS counts a message (with its attributes) against the topic's
// MaximumMessageSize, 256 KiB by default and at most 1 MiB. With raw message
// delivery the SQS body is the message. Otherwise it is an SNS envelope: a
// JSON object whose Message is the message as a JSON string, so that each
// '"' and '\\' (and each newline) of the message takes two bytes: the body
// of a message of n bytes can be 2n bytes, plus the envelope's other fields.
const (
	// MaxQueueBodyBytes is the largest SQS message body: 1 MiB.
	MaxQueueBodyBytes = 1 << 20
	// EnvelopeOverheadBytes bounds what an SNS envelope adds to its escaped
	// Message: type, ids, topic ARN, subject, timestamp, signature,
	// certificate and unsubscribe URLs, and the structure of a few message
	// attributes.
	EnvelopeOverheadBytes = 8 << 10
	// MaxEnvelopedMessageBytes is the largest message that always fits an
	// SQS body in an SNS envelope, whatever its content: (1 MiB − 8 KiB) / 2
	// = 520192 bytes. Larger messages need raw message delivery.
	MaxEnvelopedMessageBytes = (MaxQueueBodyBytes - EnvelopeOverheadBytes) / 2
)

// envelope is the part of an SNS notification the adapter reads.
type envelope struct {
	Type      string          `json:"Type"`
	TopicArn  string          `json:"TopicArn"`
	Message   json.RawMessage `json:"Message"`
	Timestamp snsTime         `json:"Timestamp"`
}

// snsTime is an envelope's Timestamp, the time SNS accepted the Publish
// (RFC 3339, to the millisecond). A Timestamp that does not parse leaves it
// zero, the record's origin then being SQS's SentTimestamp: it does not make
// the envelope bad input, nor the body a raw message.
type snsTime struct{ time.Time }

func (t *snsTime) UnmarshalJSON(b []byte) error {
	var v time.Time
	if v.UnmarshalJSON(b) == nil {
		t.Time = v
	}
	return nil
}

// Parse returns the business message carried by an SQS body: the body
// itself for raw delivery, the envelope's Message for SNS delivery. The
// result is valid UTF-8 JSON, and may share body's memory. Errors wrap
// outcome.ErrBadInput.
//
// An envelope whose Message holds a lone UTF-16 surrogate escape is bad
// input: unquoting would silently turn it into U+FFFD, and two different
// messages into one. (Lone surrogates in the message itself are found by
// idempotency.Guard.Fact.)
//
// For EventBridge it is ParseEvent (the event's detail). An S3 notification
// carries one fact per record: Parse refuses the S3 delivery, and
// ParseObjects reads it.
func Parse(body []byte, d Delivery) ([]byte, error) {
	switch d {
	case EventBridge:
		return ParseEvent(body)
	case S3:
		return nil, fmt.Errorf("sqsbatch.Parse reads one message, and an S3 notification carries one per record: use ParseObjects")
	}
	msg, _, err := parse(body, d)
	return msg, err
}

// parse is Parse, which also returns the envelope's publish time: zero for
// a raw message, or an envelope without a valid Timestamp.
func parse(body []byte, d Delivery) (msg []byte, published time.Time, err error) {
	if !utf8.Valid(body) {
		return nil, time.Time{}, fmt.Errorf("%w: body is not valid UTF-8", outcome.ErrBadInput)
	}
	msg = body
	if d != Raw {
		var env envelope
		isObject := bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{"))
		if isObject && json.Unmarshal(body, &env) == nil && env.Type == "Notification" && env.TopicArn != "" {
			m, err := envelopeMessage(env.Message)
			if err != nil {
				return nil, time.Time{}, err
			}
			msg, published = m, env.Timestamp.Time
		} else if d == Envelope {
			return nil, time.Time{}, fmt.Errorf("%w: body is not an SNS notification envelope", outcome.ErrBadInput)
		}
	}
	if !json.Valid(msg) {
		return nil, time.Time{}, fmt.Errorf("%w: message is not JSON", outcome.ErrBadInput)
	}
	return msg, published, nil
}

// envelopeMessage unquotes the envelope's Message, which must be a string,
// in one pass (jsonesc.Unquote: the body is valid UTF-8 and JSON already).
func envelopeMessage(raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("%w: SNS envelope has no Message", outcome.ErrBadInput)
	}
	msg, err := jsonesc.Unquote(raw)
	switch {
	case errors.Is(err, jsonesc.ErrLoneSurrogate):
		escape := ""
		if i := jsonesc.LoneSurrogate(raw); i >= 0 {
			escape = " (" + string(raw[i:i+6]) + ")"
		}
		return nil, fmt.Errorf("%w: SNS envelope Message holds a lone UTF-16 surrogate escape%s, which is not valid Unicode", outcome.ErrBadInput, escape)
	case err != nil:
		return nil, fmt.Errorf("%w: SNS envelope Message is not a string", outcome.ErrBadInput)
	}
	return msg, nil
}
