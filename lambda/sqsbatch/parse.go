package sqsbatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/idempotent-consumer/idempotent-consumer/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/jsonesc"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// envelope is the part of an SNS notification the adapter reads.
type envelope struct {
	Type      string          `json:"Type"`
	TopicArn  string          `json:"TopicArn"`
	Message   json.RawMessage `json:"Message"`
	Timestamp queue.Time      `json:"Timestamp"`
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
// An EventBridge event or an S3 notification is not read here: see
// packages eventbridge and s3event.
func Parse(body []byte, d contract.Delivery) ([]byte, error) {
	if d == contract.EventBridge || d == contract.S3 {
		return nil, fmt.Errorf("sqsbatch.Parse reads SNS envelopes and raw messages, not delivery %q: see package eventbridge or s3event", d)
	}
	msg, _, err := parse(body, d)
	return msg, err
}

// parse is Parse, which also returns the envelope's publish time: zero for
// a raw message, or an envelope without a valid Timestamp.
func parse(body []byte, d contract.Delivery) (msg []byte, published time.Time, err error) {
	if !utf8.Valid(body) {
		return nil, time.Time{}, fmt.Errorf("%w: body is not valid UTF-8", outcome.ErrBadInput)
	}
	msg = body
	if d != contract.Raw {
		var env envelope
		isObject := bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{"))
		if isObject && json.Unmarshal(body, &env) == nil && env.Type == "Notification" && env.TopicArn != "" {
			m, err := envelopeMessage(env.Message)
			if err != nil {
				return nil, time.Time{}, err
			}
			msg, published = m, env.Timestamp.Time
		} else if d == contract.Envelope {
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
