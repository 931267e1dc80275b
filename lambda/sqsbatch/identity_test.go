package sqsbatch_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// handle runs one record beside a healthy neighbour and returns the
// record's log line.
func handle(t *testing.T, f *fixture, h *sqsbatch.Handler[order], rec events.SQSMessage) map[string]any {
	t.Helper()
	neighbour := message(`{"orderId":"neighbour","amount":1}`, contract.Raw)
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec, neighbour}})
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if failedIDs(resp)[neighbour.MessageId] {
		t.Fatal("the neighbour failed")
	}
	return f.LogLine(t, rec.MessageId)
}

// TestLoneSurrogatesAreBadInput: encoding/json turns every lone UTF-16
// surrogate escape into U+FFFD, so "\ud800-1" and "\udbff-1" would decode
// to one key and the second fact would be taken for a duplicate of the
// first. Such messages are bad input, found in the raw JSON text, before any
// store request: in the key, elsewhere in the message, and in an SNS
// envelope's Message itself.
func TestLoneSurrogatesAreBadInput(t *testing.T) {
	envelopeWith := func(message string) string {
		return `{"Type":"Notification","MessageId":"m","TopicArn":"arn:aws:sns:us-east-1:1:orders","Message":"` + message + `"}`
	}
	for _, c := range []struct{ name, body string }{
		{"high surrogate in the key", `{"orderId":"\ud800-1","amount":1}`},
		{"other high surrogate in the key", `{"orderId":"\udbff-1","amount":1}`},
		{"low surrogate in the key", `{"orderId":"\udc00-1","amount":1}`},
		{"reversed pair in the key", `{"orderId":"\udc00\ud800","amount":1}`},
		{"high surrogate at the end of the key", `{"orderId":"1\uD800","amount":1}`},
		{"lone surrogate in another field", `{"orderId":"1","amount":1,"note":"\ud83d"}`},
		{"lone surrogate in a field name", `{"orderId":"1","amount":1,"\ud83d":"x"}`},
		{"lone surrogate escaped in an envelope's Message", envelopeWith(`{\"orderId\":\"\ud800-1\",\"amount\":1}`)},
		{"lone surrogate twice escaped in an envelope", envelopeWith(`{\"orderId\":\"\\ud800-1\",\"amount\":1}`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			rec := message(c.body, contract.Raw)
			line := handle(t, f, f.Handler(contract.Auto), rec)
			if reason, _ := line["reason"].(string); line["outcome"] != "bad_input" || !strings.Contains(reason, "surrogate") {
				t.Errorf("outcome %v (%s), want bad_input naming the lone surrogate", line["outcome"], reason)
			}
			if got := f.Store.Requests() - 2; got != 0 {
				t.Errorf("%d store calls for bad input", got)
			}
		})
	}
	t.Run("two keys that decode alike stay two facts", func(t *testing.T) {
		f := newFixture(t)
		h := f.Handler(contract.Raw)
		first := handle(t, f, h, message(`{"orderId":"\ud800-1","amount":1}`, contract.Raw))
		second := handle(t, f, h, message(`{"orderId":"\udbff-1","amount":1}`, contract.Raw))
		if first["outcome"] == "processed" && second["outcome"] == "duplicate" {
			t.Fatalf("the second fact was taken for a duplicate of the first: %v", second)
		}
	})
	t.Run("a valid pair is one character", func(t *testing.T) {
		f := newFixture(t)
		line := handle(t, f, f.Handler(contract.Raw), message(`{"orderId":"\ud83d\ude00-1","amount":1}`, contract.Raw))
		if line["outcome"] != "processed" || line["key"] != "charge#\U0001F600-1" {
			t.Fatalf("%v: want processed under the key charge#\U0001F600-1", line)
		}
	})
}

// TestNumbersAndDuplicateNamesThroughTheAdapter: a producer that
// re-serialises a retry (5000 → 5000.0 → 5e3) sends the same fact, which is
// a duplicate, not a payload mismatch; an object with a member twice is bad
// input, because which of its values counts is undefined.
func TestNumbersAndDuplicateNamesThroughTheAdapter(t *testing.T) {
	f := newFixture(t)
	h := f.Handler(contract.Raw)
	// total is not decoded (order has no such field), so any number will
	// do for the decoder; it is part of the fact all the same.
	for i, body := range []string{`{"orderId":"n","amount":1,"total":5000}`, `{"orderId":"n","amount":1,"total":5000.0}`, `{"orderId":"n","amount":1,"total":5e3}`, `{"orderId":"n","amount":1,"total":0.5e4}`, `{"total":50E2,"amount":1,"orderId":"n"}`} {
		want := map[bool]string{true: "processed", false: "duplicate"}[i == 0]
		if line := handle(t, f, h, message(body, contract.Raw)); line["outcome"] != want {
			t.Errorf("%s: %v, want %s", body, line, want)
		}
	}
	before := f.Store.Requests()
	rec := message(`{"orderId":"d","amount":1,"amount":1000}`, contract.Raw)
	if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}}); err != nil {
		t.Fatal(err)
	}
	line := f.LogLine(t, rec.MessageId)
	if reason, _ := line["reason"].(string); line["outcome"] != "bad_input" || !strings.Contains(reason, "duplicate") {
		t.Errorf("duplicate member: %v, want bad_input", line)
	}
	if got := f.Store.Requests() - before; got != 0 {
		t.Errorf("%d store calls for bad input", got)
	}
}
