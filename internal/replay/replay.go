// Package replay is the wire between the operator command and the queue
// consumer for an operator's replay of an expired message: the message
// attribute that marks it (Attribute) and its value (Replay).
package replay

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Attribute is the SQS message attribute (a String) that marks a
// message as an operator's replay: a dead-lettered message that expired
// (idempotency.ErrExpired), sent back to the queue on purpose by the operator command
// (idemctl redrive --replay-expired --reason …), whose value is the
// Replay's JSON (Replay.Encode).
//
// A replay's origin is the earlier of the operator's time (Replay.At) and
// its SentTimestamp, instead of the time its body carries (an SNS
// Timestamp, an EventBridge event's time, an S3 eventTime): the age rule
// holds for the replay's own redeliveries, which expire a window after the
// operator's decision, and a plain redrive of it later keeps Replay.At.
// Nothing else changes: the guard's conditional write still meets a record
// that holds the key, so a fact whose record is still in its window is a
// duplicate. The record the replay's reservation writes keeps the Replay
// (idempotency.Record.Replay), and the record's log line carries it, at
// WARN when it succeeds.
//
// Who can forge it: anyone allowed to send to the queue. That gives them
// nothing they lacked: they can send the fact in a fresh message (a raw
// body, an event with a current time, an envelope) whose age starts now.
// The marker is an audit, not a credential; the queue's policy is the
// control.
const Attribute = "idempotency-replay"

// MaxBytes bounds the value of Attribute: the audit is stored
// with the record, and a longer one is bad input.
const MaxBytes = 1024

// Replay is an operator's replay of an expired message: the value of
// Attribute.
type Replay struct {
	// By is who replayed the message (the caller's ARN, from STS).
	By string `json:"by"`
	// Reason is why, as the operator gave it. It is stored with the record
	// and logged: it must not hold a key or personal data.
	Reason string `json:"reason"`
	// At is when the operator replayed the message: the replay's origin.
	At time.Time `json:"at"`
	// MessageID is the id of the dead-lettered message replayed.
	MessageID string `json:"message_id"`
}

// Encode returns r as Attribute's value.
func (r Replay) Encode() string {
	b, _ := json.Marshal(r) // strings and a time: it cannot fail
	return string(b)
}

// LogAttr is the Replay in a record's log line.
func (r *Replay) LogAttr() slog.Attr {
	return slog.Group("replay", slog.String("by", r.By), slog.String("reason", r.Reason), slog.Time("at", r.At), slog.String("message_id", r.MessageID))
}

// Of reads rec's Attribute: nil when it has none; an error
// wrapping outcome.ErrBadInput when it cannot be read (not a String, longer than
// MaxBytes, not a Replay's JSON, no By, Reason or At).
func Of(rec *events.SQSMessage) (*Replay, error) {
	a, ok := rec.MessageAttributes[Attribute]
	if !ok {
		return nil, nil
	}
	bad := func(why string) (*Replay, error) {
		return nil, fmt.Errorf("%w: the %s message attribute %s; an operator's replay carries the JSON that idemctl redrive --replay-expired writes", outcome.ErrBadInput, Attribute, why)
	}
	if a.StringValue == nil || !strings.HasPrefix(a.DataType, "String") {
		return bad(fmt.Sprintf("is of type %q, not a String", a.DataType))
	}
	if len(*a.StringValue) > MaxBytes {
		return bad(fmt.Sprintf("has %d bytes, more than %d", len(*a.StringValue), MaxBytes))
	}
	var r Replay
	if err := json.Unmarshal([]byte(*a.StringValue), &r); err != nil {
		return bad("is not a replay's JSON: " + err.Error())
	}
	if r.By == "" || strings.TrimSpace(r.Reason) == "" || r.At.IsZero() {
		return bad("lacks who (by), why (reason) or when (at)")
	}
	return &r, nil
}
