package sqsbatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// envelope is an SNS notification whose Message is the JSON value v, as is.
func envelope(v string) string {
	return `{"Type":"Notification","MessageId":"sns-1","TopicArn":"arn:aws:sns:eu-west-1:123456789012:orders","Message":` + v + `}`
}

// quoted is s as a JSON string.
func quoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestHostileInput: whatever reaches the adapter, the record ends with one
// outcome and a reason that says what is wrong, and its healthy neighbour in
// the batch is processed. Bad input never reaches the store. It extends
// TestOutcomeTable (which has the common cases) with hostile bodies.
func TestHostileInput(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	room := limits.MaxKeyBytes - len("charge#") // the longest business key
	cases := []struct {
		name    string
		body    string // the SQS body, as is
		outcome string
		reason  string // a part of the logged reason ("" for success)
	}{
		// Not JSON.
		{"empty body", ``, "bad_input", "not JSON"},
		{"only whitespace", " \n\t ", "bad_input", "not JSON"},
		{"byte order mark", "\ufeff" + `{"orderId":"bom","amount":1}`, "bad_input", "not JSON"},
		{"truncated", `{"orderId":"cut","amount":`, "bad_input", "not JSON"},
		{"two values", `{"orderId":"a","amount":1} {"orderId":"b","amount":1}`, "bad_input", "not JSON"},
		{"NUL bytes", "\x00\x00\x00", "bad_input", "not JSON"},
		// JSON of the wrong shape.
		{"top-level array", `[{"orderId":"arr","amount":1}]`, "bad_input", "decode message"},
		{"top-level string", `"orderId"`, "bad_input", "decode message"},
		{"top-level number", `42`, "bad_input", "decode message"},
		{"top-level null", `null`, "bad_input", "empty"},
		{"empty object", `{}`, "bad_input", "empty"},
		{"key is an object", `{"orderId":{"id":"x"},"amount":1}`, "bad_input", "decode message"},
		{"key is null", `{"orderId":null,"amount":1}`, "bad_input", "empty"},
		{"amount overflows", `{"orderId":"big","amount":1e400}`, "bad_input", "decode message"},
		{"amount has a fraction", `{"orderId":"frac","amount":1.5}`, "bad_input", "decode message"},
		// SNS envelopes with a missing or non-string Message.
		{"envelope, Message null", envelope(`null`), "bad_input", "no Message"},
		{"envelope, Message true", envelope(`true`), "bad_input", "Message is not a string"},
		{"envelope, Message an array", envelope(`["{\"orderId\":\"x\"}"]`), "bad_input", "Message is not a string"},
		{"envelope, Message a number", envelope(`12`), "bad_input", "Message is not a string"},
		{"envelope, Message empty", envelope(`""`), "bad_input", "not JSON"},
		{"envelope, Message not JSON", envelope(`"orderId=7"`), "bad_input", "not JSON"},
		{"envelope inside an envelope", envelope(quoted(envelope(quoted(`{"orderId":"inner","amount":1}`)))), "bad_input", "empty"},
		// Huge bodies, deep nesting.
		{"message one byte over the limit", `{"orderId":"fat","amount":1,"pad":"` + strings.Repeat("x", contract.DefaultMaxMessageBytes-len(`{"orderId":"fat","amount":1,"pad":""}`)+1) + `"}`, "bad_input", "message of 262145 bytes, more than 262144"},
		{"4 MiB body", strings.Repeat("{", 4<<20), "bad_input", "body of 4194304 bytes, more than 532480"},
		{"nested beyond the JSON parser's limit", `{"orderId":"deep","amount":1,"x":` + nest(20000) + `}`, "bad_input", "not JSON"},
		{"nested beyond the hash's limit", `{"orderId":"deep","amount":1,"x":` + nest(1000) + `}`, "bad_input", "nested"},
		{"nested key", `{"orderId":` + nest(200) + `,"amount":1}`, "bad_input", "decode message"},
		{"deep envelope Message", envelope(quoted(`{"orderId":"deep","amount":1,"x":` + nest(100) + `}`)), "bad_input", "nested"},
		// Invalid UTF-8.
		{"invalid UTF-8 in a raw body", "{\"orderId\":\"\xff\",\"amount\":1}", "bad_input", "UTF-8"},
		{"truncated UTF-8 sequence", "{\"orderId\":\"\xe2\x82\",\"amount\":1}", "bad_input", "UTF-8"},
		{"invalid UTF-8 in an envelope", envelope("\"{\\\"orderId\\\":\\\"\xc3\\\"}\""), "bad_input", "UTF-8"},
		// Keys with separators or control characters.
		{"key with the namespace separator", `{"orderId":"a#b","amount":1}`, "processed", ""},
		{"key that looks namespaced", `{"orderId":"charge#x","amount":1}`, "processed", ""},
		{"key with a newline", `{"orderId":"a\nb","amount":1}`, "bad_input", "control characters"},
		{"key with a tab", `{"orderId":"a\tb","amount":1}`, "bad_input", "control characters"},
		{"key with DEL", `{"orderId":"a\u007fb","amount":1}`, "bad_input", "control characters"},
		{"key with a C1 control", `{"orderId":"a\u0085b","amount":1}`, "bad_input", "control characters"},
		{"key with an escaped NUL in an envelope", envelope(quoted(`{"orderId":"a\u0000b","amount":1}`)), "bad_input", "control characters"},
		// Keys against DynamoDB's 2048-byte partition key, namespace included.
		{"key at the limit", `{"orderId":"` + strings.Repeat("k", room) + `","amount":1}`, "processed", ""},
		{"key one byte over the limit", `{"orderId":"` + strings.Repeat("k", room+1) + `","amount":1}`, "bad_input", "2049 bytes with the namespace, more than 2048"},
		{"multi-byte key over the limit", `{"orderId":"` + strings.Repeat("€", 700) + `","amount":1}`, "bad_input", "more than 2048"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			rec := message("", contract.Raw)
			rec.Body = c.body
			neighbour := message(`{"orderId":"neighbour","amount":1}`, contract.Envelope)
			resp, err := f.Handler(contract.Auto).Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{neighbour, rec}})
			if err != nil {
				t.Fatalf("Handle: %v; a bad record must fail alone", err)
			}
			failed := failedIDs(resp)
			if failed[neighbour.MessageId] || f.EffectCount("neighbour") != 1 {
				t.Fatalf("the neighbour failed=%v ran %d times; it must be processed once", failed[neighbour.MessageId], f.EffectCount("neighbour"))
			}
			line := f.LogLine(t, rec.MessageId)
			reason, _ := line["reason"].(string)
			if line["outcome"] != c.outcome || !strings.Contains(reason, c.reason) {
				t.Errorf("outcome %v (%s), want %s mentioning %q", line["outcome"], reason, c.outcome, c.reason)
			}
			if wantFailed := c.outcome != "processed"; failed[rec.MessageId] != wantFailed {
				t.Errorf("reported failed=%v, want %v", failed[rec.MessageId], wantFailed)
			}
			if c.outcome == "bad_input" && f.Store.Requests() != 2 {
				t.Errorf("bad input made %d store calls", f.Store.Requests()-2)
			}
		})
	}
}

// TestSameKeyOtherPayloadInOneBatch: two records of one batch carry one key
// with different content (a producer bug). They are not the same fact, so
// both run: exactly one is processed, the other is a payload mismatch,
// whichever reaches the store first.
func TestSameKeyOtherPayloadInOneBatch(t *testing.T) {
	f := newFixture(t)
	recs := []events.SQSMessage{
		message(`{"orderId":"twin","amount":10}`, contract.Raw),
		message(`{"orderId":"twin","amount":99}`, contract.Envelope),
		message(`{"orderId":"neighbour","amount":1}`, contract.Raw),
	}
	resp, err := f.Handler(contract.Auto).Handle(context.Background(), events.SQSEvent{Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[any]int{}
	for _, r := range recs[:2] {
		outcomes[f.LogLine(t, r.MessageId)["outcome"]]++
	}
	if outcomes["processed"] != 1 || outcomes["mismatch"] != 1 || len(resp.BatchItemFailures) != 1 || f.EffectCount("twin") != 1 {
		t.Fatalf("outcomes %v, failures %v, effects %d: want one processed, one mismatch", outcomes, resp.BatchItemFailures, f.EffectCount("twin"))
	}
	if failedIDs(resp)[recs[2].MessageId] || f.EffectCount("neighbour") != 1 {
		t.Fatal("the neighbour must be processed")
	}
}

// TestAuthorCodePanics: a key function that panics on a hostile message
// fails that record only.
func TestAuthorCodePanics(t *testing.T) {
	f := newFixture(t)
	key := func(o order) (string, error) {
		if o.OrderID == "boom" {
			panic("a bug in the key function that this message finds")
		}
		return o.OrderID, nil
	}
	h := sqsbatch.New(f.Guard, key, f.Effect, f.Config(contract.Raw))
	recs := []events.SQSMessage{message(`{"orderId":"boom","amount":1}`, contract.Raw), message(`{"orderId":"neighbour","amount":1}`, contract.Raw)}
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != recs[0].MessageId {
		t.Fatalf("%v, %v: want the panicking record alone to fail", resp, err)
	}
	if line := f.LogLine(t, recs[0].MessageId); line["outcome"] != "failed" || !strings.Contains(line["reason"].(string), "panic") {
		t.Fatalf("log line %v: want failed with the panic", line)
	}
}

// TestResultTooLarge pins what happens, end to end, to a result over
// limits.DefaultMaxResultBytes: the effect has happened (or, transactional,
// is committed), so the record is completed without the result and the
// record is processed, with a warning that says why; its redelivery is a
// duplicate with an empty result, and the effect never runs again.
func TestResultTooLarge(t *testing.T) {
	big := strings.Repeat("r", limits.DefaultMaxResultBytes+1)
	check := func(t *testing.T, f *fixture, h interface {
		Handle(context.Context, events.SQSEvent) (events.SQSEventResponse, error)
	}) {
		body := `{"orderId":"large","amount":1}`
		first := message(body, contract.Raw)
		resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{first, message(`{"orderId":"neighbour","amount":1}`, contract.Raw)}})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("%v, %v: want both records processed", resp, err)
		}
		line := f.LogLine(t, first.MessageId)
		if line["outcome"] != "processed" || line["level"] != "WARN" || !strings.Contains(line["reason"].(string), "exceeds the default MaxResultBytes") {
			t.Fatalf("first delivery: %v; want processed, with a warning", line)
		}
		rec, err := f.Store.Get(context.Background(), "charge#large")
		if err != nil || rec == nil || rec.Status != idempotency.StatusCompleted || rec.Result != "" {
			t.Fatalf("record %+v, %v: want COMPLETED without the result", rec, err)
		}
		again := message(body, contract.Raw)
		resp, err = h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{again}})
		if err != nil || len(resp.BatchItemFailures) != 0 || f.LogLine(t, again.MessageId)["outcome"] != "duplicate" {
			t.Fatalf("redelivery: %v, %v, %v: want a duplicate", resp, err, f.LogLine(t, again.MessageId))
		}
	}
	t.Run("effect", func(t *testing.T) {
		f := newFixture(t)
		var runs atomic.Int32
		h := sqsbatch.New(f.Guard, orderKey, func(_ context.Context, o order, _ idempotency.Reservation) (string, error) {
			runs.Add(1)
			if o.OrderID == "large" {
				return big, nil
			}
			return "ok", nil
		}, f.Config(contract.Raw))
		check(t, f, h)
		if runs.Load() != 2 { // "large" once, the neighbour once
			t.Fatalf("the effect ran %d times, want 2", runs.Load())
		}
	})
	t.Run("transactional", func(t *testing.T) {
		f := newFixture(t)
		var applied atomic.Int32
		h := sqsbatch.NewTx(f.Guard, orderKey, func(_ context.Context, o order, _ idempotency.Reservation) (any, string, error) {
			result := "ok"
			if o.OrderID == "large" {
				result = big
			}
			return storetest.MemoryWrites(func() error { applied.Add(1); return nil }), result, nil
		}, f.Config(contract.Raw))
		check(t, f, h)
		if applied.Load() != 2 {
			t.Fatalf("%d writes applied, want 2: each record's once", applied.Load())
		}
	})
}

// FuzzHandle: any two bodies in a batch with a healthy neighbour between
// them. Handle never panics or fails the batch, every record gets exactly one
// log line whose outcome matches the response, failures say why, and the
// neighbour is processed once.
func FuzzHandle(f *testing.F) {
	for _, s := range []struct{ a, b string }{
		{`{"orderId":"1","amount":5}`, `{"orderId":"1","amount":5}`},
		{`{"orderId":"1","amount":5}`, `{"orderId":"1","amount":6}`},
		{envelope(quoted(`{"orderId":"2","amount":4097}`)), `not json`},
		{envelope(`null`), envelope(`{"orderId":"3"}`)},
		{`{"orderId":"a#b\u0001","amount":1}`, `[[[[[[[[]]]]]]]]`},
		{"{\"orderId\":\"\xff\"}", `{"orderId":"` + strings.Repeat("k", 2050) + `"}`},
		{`{"orderId":"p","amount":1,"mode":"panic"}`, `{"orderId":"f","amount":1,"mode":"fail"}`},
		{`null`, `{}`},
	} {
		f.Add(s.a, s.b)
	}
	var n int
	var mu sync.Mutex
	f.Fuzz(func(t *testing.T, a, b string) {
		mu.Lock()
		n++
		id := fmt.Sprintf("neighbour-%d-%x", n, len(a)*31+len(b))
		mu.Unlock()
		for _, body := range []string{a, b} {
			var o order
			if msg, err := sqsbatch.Parse([]byte(body), contract.Auto); err == nil && json.Unmarshal(msg, &o) == nil && o.OrderID == id {
				return // the input carries the neighbour's key: not a hostile body, nothing to check
			}
		}
		store := storetest.NewMemoryStore()
		g, err := idempotency.NewGuard(store, idempotency.Config{Namespace: "charge"})
		if err != nil {
			t.Fatal(err)
		}
		logs := &lines{}
		h := sqsbatch.New(g, orderKey, func(_ context.Context, o order, _ idempotency.Reservation) (string, error) {
			switch o.Mode {
			case "panic":
				panic("effect bug")
			case "fail":
				return "", errors.New("declined")
			}
			return strings.Repeat("r", max(o.Amount, 0)%(2*limits.DefaultMaxResultBytes)), nil
		}, sqsbatch.Config{Batch: handler.Batch{Logger: slog.New(logs), Metrics: discard{}}})
		recs := []events.SQSMessage{
			{MessageId: "a", Body: a},
			{MessageId: "n", Body: envelope(quoted(`{"orderId":"` + id + `","amount":7}`))},
			{MessageId: "b", Body: b},
		}
		resp, err := h.Handle(context.Background(), events.SQSEvent{Records: recs})
		if err != nil {
			t.Fatalf("Handle: %v; the neighbour was judged, so the batch must not fail", err)
		}
		failed := failedIDs(resp)
		if failed["n"] {
			t.Fatalf("the healthy neighbour failed: %+v", logs.byID["n"])
		}
		if rec, _ := store.Get(context.Background(), "charge#"+id); rec == nil || rec.Status != idempotency.StatusCompleted {
			t.Fatalf("the neighbour's record is %+v", rec)
		}
		for _, r := range recs {
			got := logs.byID[r.MessageId]
			if len(got) != 1 {
				t.Fatalf("record %s has %d log lines", r.MessageId, len(got))
			}
			l := got[0]
			succeeded := l.outcome == "processed" || l.outcome == "duplicate"
			if succeeded == failed[r.MessageId] {
				t.Fatalf("record %s: outcome %s but reported failed=%v", r.MessageId, l.outcome, failed[r.MessageId])
			}
			if !succeeded && l.reason == "" {
				t.Fatalf("record %s failed (%s) without a reason", r.MessageId, l.outcome)
			}
		}
	})
}

// lines is a slog.Handler that keeps each record's outcome and reason.
type lines struct {
	mu   sync.Mutex
	byID map[string][]struct{ outcome, reason string }
}

func (l *lines) Enabled(context.Context, slog.Level) bool { return true }
func (l *lines) Handle(_ context.Context, r slog.Record) error {
	var id, outcome, reason string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "message_id":
			id = a.Value.String()
		case "outcome":
			outcome = a.Value.String()
		case "reason":
			reason = a.Value.String()
		}
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byID == nil {
		l.byID = make(map[string][]struct{ outcome, reason string })
	}
	l.byID[id] = append(l.byID[id], struct{ outcome, reason string }{outcome, reason})
	return nil
}
func (l *lines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *lines) WithGroup(string) slog.Handler      { return l }
