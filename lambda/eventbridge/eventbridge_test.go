package eventbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/internal/replay"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/eventbridge"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/queue/queuetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// ebEvent is an EventBridge event as a rule delivers it to an SQS target,
// in the shape of the EventBridge User Guide's "Amazon EventBridge events"
// (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-events-structure.html):
// version, id, detail-type, source, account, time, region, resources,
// detail.
func ebEvent(id string, at time.Time, detail string) string {
	return `{"version":"0","id":"` + id + `","detail-type":"OrderPlaced","source":"com.example.orders",` +
		`"account":"111122223333","time":"` + at.UTC().Format(time.RFC3339) + `","region":"us-west-1",` +
		`"resources":["arn:aws:dynamodb:us-west-1:111122223333:table/Orders"],"detail":` + detail + `}`
}

// ebMessage is an SQS record whose body is an EventBridge event, sent (the
// SentTimestamp) at sent.
func ebMessage(body string, sent time.Time) events.SQSMessage {
	return queuetest.MessageAt(body, contract.Raw, sent)
}

// TestEventBridgeProducerRetryIsOneFact: a producer that retries PutEvents
// sends a new event (a new id, a new time) with the same detail. Only the
// detail is hashed and decoded, so the retry is a duplicate of the first:
// the effect runs once, and the retry costs one store request.
func TestEventBridgeProducerRetryIsOneFact(t *testing.T) {
	f := queuetest.NewFixture(t)
	h := eventsHandlerOf(f, f.Config(contract.EventBridge))
	now := time.Now()
	first := ebMessage(ebEvent("6a7e8feb-b491-4cf7-a9f1-bf3703467718", now, `{"orderId":"o-1","amount":50}`), now)
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{first}})
	if err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("first: %v %v", resp, err)
	}
	before := f.Store.Requests()
	// The retry: another id, a later time, the detail re-serialised.
	retry := ebMessage(ebEvent("0b7c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3", now.Add(3*time.Second), `{ "amount": 50, "orderId": "o-1" }`), now.Add(3*time.Second))
	resp, err = h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{retry}})
	if err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("retry: %v %v", resp, err)
	}
	if n := f.EffectCount("o-1"); n != 1 {
		t.Fatalf("effect ran %d times, want 1", n)
	}
	if got := f.LogLine(t, retry.MessageId)["outcome"]; got != "duplicate" {
		t.Fatalf("retry: %v, want duplicate", got)
	}
	if n := f.Store.Requests() - before; n != 1 {
		t.Errorf("the retry made %d store requests, want 1", n)
	}
	// The same key with another detail is another content: a mismatch.
	other := ebMessage(ebEvent("c3", now, `{"orderId":"o-1","amount":70}`), now)
	if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{other}}); err != nil {
		t.Fatal(err)
	}
	if got := f.LogLine(t, other.MessageId)["outcome"]; got != "mismatch" {
		t.Fatalf("same key, other detail: %v, want mismatch", got)
	}
}

// TestNewGivesTheKeyTheEvent: New hands the key function and
// the effect the whole event, its detail decoded; the key may take the
// source, and the hash is still the detail's alone.
func TestNewGivesTheKeyTheEvent(t *testing.T) {
	f := queuetest.NewFixture(t)
	var seen []eventbridge.Event[queuetest.Order]
	key := func(e eventbridge.Event[queuetest.Order]) (string, error) {
		return e.Source + "/" + e.Detail.OrderID, nil
	}
	effect := func(ctx context.Context, e eventbridge.Event[queuetest.Order], r idempotency.Reservation) (string, error) {
		seen = append(seen, e)
		return "", nil
	}
	cfg := f.Config("") // New sets the delivery
	cfg.Concurrency = 1
	h := eventbridge.New(f.Guard, key, effect, cfg)
	now := time.Now()
	a := ebMessage(ebEvent("id-a", now, `{"orderId":"o-7","amount":5}`), now)
	b := ebMessage(ebEvent("id-b", now, `{"orderId":"o-7","amount":5}`), now)
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{a, b}})
	if err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("%v %v", resp, err)
	}
	if len(seen) != 1 {
		t.Fatalf("the effect ran %d times, want 1", len(seen))
	}
	e := seen[0]
	if e.ID != "id-a" || e.Source != "com.example.orders" || e.DetailType != "OrderPlaced" || e.Account != "111122223333" ||
		e.Region != "us-west-1" || len(e.Resources) != 1 || e.Detail.OrderID != "o-7" || e.Detail.Amount != 5 || e.Time.IsZero() {
		t.Fatalf("event %+v", e)
	}
	if got := f.LogLine(t, a.MessageId)["key"]; got != "charge#com.example.orders/o-7" {
		t.Errorf("key %v", got)
	}
	if got := f.LogLine(t, b.MessageId)["outcome"]; got != "duplicate" {
		t.Errorf("the same detail in another event: %v, want duplicate", got)
	}
}

// TestEventBridgeBadInput: a body that is not a whole EventBridge event is
// bad input with a reason that says what is missing, never a panic, never
// a store request, beside a healthy neighbour.
func TestEventBridgeBadInput(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		name, body, reason string
	}{
		{"a raw message", `{"orderId":"o-1","amount":1}`, "no id"},
		{"an SNS envelope", envelope(`{"orderId":"o-1"}`), "no id"},
		{"not JSON", `order o-1`, "not a JSON object"},
		{"a JSON array", `[{"detail":{}}]`, "not a JSON object"},
		{"truncated", ebEvent("x", now, `{"orderId":"o-1"}`)[:60], "is not an EventBridge event"},
		{"no detail", `{"version":"0","id":"x","detail-type":"T","source":"s","time":"2026-12-01T10:00:00Z"}`, "no detail"},
		{"a null detail", `{"version":"0","id":"x","detail-type":"T","source":"s","detail":null}`, "no detail"},
		{"no detail-type", `{"version":"0","id":"x","source":"s","detail":{"orderId":"o-1"}}`, "no detail-type"},
		{"no source", `{"version":"0","id":"x","detail-type":"T","detail":{"orderId":"o-1"}}`, "no source"},
		{"a string detail (an input transformer's)", `{"id":"x","detail-type":"T","source":"s","detail":"{\"orderId\":\"o-1\"}"}`, "its detail is not a JSON object"},
		{"a lone surrogate in the source", `{"id":"x","detail-type":"T","source":"s\ud800","detail":{"orderId":"o-1"}}`, "lone UTF-16 surrogate"},
		{"a lone surrogate in the detail", ebEvent("x", now, `{"orderId":"o-\udbff"}`), "lone UTF-16 surrogate"},
		{"a duplicate member in the detail", ebEvent("x", now, `{"orderId":"o-1","orderId":"o-2"}`), "duplicate member"},
		{"not UTF-8", "{\"id\":\"\xff\"}", "not valid UTF-8"},
		{"no key in the detail", ebEvent("x", now, `{"amount":1}`), "empty key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := queuetest.NewFixture(t)
			rec := ebMessage(c.body, now)
			neighbour := ebMessage(ebEvent("n", now, `{"orderId":"neighbour","amount":1}`), now)
			resp, err := eventsHandlerOf(f, f.Config(contract.EventBridge)).Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec, neighbour}})
			if err != nil {
				t.Fatal(err)
			}
			if failed := queuetest.FailedIDs(resp); !failed[rec.MessageId] || failed[neighbour.MessageId] {
				t.Fatalf("failures %v", failed)
			}
			line := f.LogLine(t, rec.MessageId)
			if line["outcome"] != "bad_input" || !strings.Contains(fmt.Sprint(line["reason"]), c.reason) {
				t.Fatalf("%v: %v; want bad_input with %q", line["outcome"], line["reason"], c.reason)
			}
			if f.Store.Requests() != 2 { // the neighbour's reserve and complete
				t.Errorf("%d store requests, want the neighbour's 2", f.Store.Requests())
			}
		})
	}
}

// TestEventBridgeAge: an event's age is from the earlier of its time and
// the SQS SentTimestamp. A time older than the window expires it whatever
// the SentTimestamp (EventBridge's retries re-send an event for up to 24 h,
// each a new SQS message with a new SentTimestamp, while the event keeps its
// time); a time in the future never makes an old message young.
func TestEventBridgeAge(t *testing.T) {
	limit := queuetest.Window - limits.ClockSkewMargin
	for _, c := range []struct {
		name          string
		eventAge      time.Duration // how long before now the event's time is
		sentAge       time.Duration
		outcome, from string
	}{
		{"young", time.Minute, time.Minute, "processed", ""},
		{"an EventBridge retry long after its event", limit + time.Second, time.Second, "expired", "EventBridge event time"},
		{"a time in the future", -time.Hour, limit + time.Second, "expired", "SQS SentTimestamp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, clk := queuetest.NewClockFixture(t)
			now := clk.Now()
			rec := ebMessage(ebEvent("x", now.Add(-c.eventAge), `{"orderId":"o-1","amount":1}`), now.Add(-c.sentAge))
			resp, err := eventsHandlerOf(f, f.Config(contract.EventBridge)).Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}})
			if err != nil {
				t.Fatal(err)
			}
			line := f.LogLine(t, rec.MessageId)
			if line["outcome"] != c.outcome {
				t.Fatalf("%v (%v), want %s", line["outcome"], line["reason"], c.outcome)
			}
			if c.outcome == "expired" {
				if !queuetest.FailedIDs(resp)[rec.MessageId] || !strings.Contains(fmt.Sprint(line["reason"]), "its origin time is the "+c.from) {
					t.Errorf("reason %v: want the origin %s", line["reason"], c.from)
				}
				if f.Store.Requests() != 0 {
					t.Errorf("%d store requests for an expired record", f.Store.Requests())
				}
			}
		})
	}
}

// TestEventDetailSize: the limit is the detail's, whatever the event adds
// around it (resources included); the largest the contract allows,
// MaxEventDetailBytes, goes through in a body SQS takes; a byte more is bad
// input.
func TestEventDetailSize(t *testing.T) {
	for _, size := range []int{contract.MaxEventDetailBytes, contract.MaxEventDetailBytes + 1} {
		f := queuetest.NewFixture(t)
		cfg := f.Config(contract.EventBridge)
		cfg.MaxMessageBytes = contract.MaxEventDetailBytes
		detail := queuetest.Sized(t, "large", size)
		var resources []string
		for i := range 20 {
			resources = append(resources, "arn:aws:s3:::bucket-"+strconv.Itoa(i)+"/"+strings.Repeat("k", 200))
		}
		res, _ := json.Marshal(resources)
		body := strings.Replace(ebEvent("x", time.Now(), detail), `"resources":["arn:aws:dynamodb:us-west-1:111122223333:table/Orders"]`, `"resources":`+string(res), 1)
		rec := ebMessage(body, time.Now())
		neighbour := ebMessage(ebEvent("n", time.Now(), `{"orderId":"neighbour","amount":1}`), time.Now())
		resp, err := eventsHandlerOf(f, cfg).Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec, neighbour}})
		if err != nil || queuetest.FailedIDs(resp)[neighbour.MessageId] {
			t.Fatalf("%v %v", resp, err)
		}
		line := f.LogLine(t, rec.MessageId)
		want := map[bool]string{true: "processed", false: "bad_input"}[size == contract.MaxEventDetailBytes]
		if line["outcome"] != want {
			t.Fatalf("detail of %d bytes: %v (%v), want %s", size, line["outcome"], line["reason"], want)
		}
		if size == contract.MaxEventDetailBytes && len(body) > contract.MaxQueueBodyBytes {
			t.Fatalf("an event of the largest detail and 20 resources is %d bytes: the overhead %d is too small", len(body), contract.EventOverheadBytes)
		}
	}
}

// TestNewTx: a transactional effect over events commits once per
// detail; a producer's retry is a duplicate.
func TestNewTx(t *testing.T) {
	f := queuetest.NewFixture(t)
	balance := 0
	h := eventbridge.NewTx(f.Guard, func(e eventbridge.Event[queuetest.Order]) (string, error) { return e.Detail.OrderID, nil },
		func(ctx context.Context, e eventbridge.Event[queuetest.Order], r idempotency.Reservation) (any, string, error) {
			return storetest.MemoryWrites(func() error { balance += e.Detail.Amount; return nil }), "credited", nil
		}, f.Config(""))
	now := time.Now()
	for i, want := range []string{"processed", "duplicate"} {
		rec := ebMessage(ebEvent(fmt.Sprint("id-", i), now, `{"orderId":"w1","amount":10}`), now)
		if resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}}); err != nil || len(resp.BatchItemFailures) > 0 {
			t.Fatal(resp, err)
		}
		if got := f.LogLine(t, rec.MessageId)["outcome"]; got != want {
			t.Errorf("event %d: %v, want %s", i, got, want)
		}
	}
	if balance != 10 {
		t.Fatalf("balance %d, want 10", balance)
	}
}

// FuzzEvents: whatever the body, an EventBridge consumer never panics or
// fails the batch, and every message it does not delete has a log line
// that says why.
func FuzzEvents(f *testing.F) {
	now := time.Now()
	for _, s := range []string{
		ebEvent("x", now, `{"orderId":"o-1","amount":1}`),
		`{"id":"x","source":"s","detail-type":"t","detail":{"orderId":"\ud800"}}`,
		`{"Records":[null]}`, `[]`, `{`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		fx := queuetest.NewFixture(t)
		queuetest.CheckEveryFailureSaysWhy(t, fx, eventsHandlerOf(fx, fx.Config(contract.EventBridge)).Handle, body)
	})
}

// TestReplayOfAnExpiredEvent: an EventBridge event older than the window
// expires; the operator's replay of it runs once (its origin the replay's
// time, the replay in the record and at WARN in the line); a second replay
// is a duplicate; a replay as old as the window (a plain redrive of it,
// long after) expires again; a marker without its audit is bad input.
func TestReplayOfAnExpiredEvent(t *testing.T) {
	f, clk := queuetest.NewClockFixture(t)
	h := eventsHandlerOf(f, f.Config(contract.EventBridge))
	now := clk.Now()
	body := ebEvent("archived-1", now.Add(-2*queuetest.Window), `{"orderId":"o-1","amount":1}`)
	handle := func(rec events.SQSMessage) map[string]any {
		t.Helper()
		if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}}); err != nil {
			t.Fatal(err)
		}
		return f.LogLine(t, rec.MessageId)
	}
	audit := replay.Replay{By: "arn:aws:iam::111122223333:user/ops", Reason: "INC-9: archive replay of 1 Dec", At: now, MessageID: "dlq-1"}

	if line := handle(ebMessage(body, now)); line["outcome"] != "expired" || f.EffectCount("o-1") != 0 {
		t.Fatalf("a plain redrive: %v (%v), want expired", line["outcome"], line["reason"])
	}
	line := handle(replayed(ebMessage(body, now), audit.Encode()))
	r, _ := line["replay"].(map[string]any)
	if line["outcome"] != "processed" || line["level"] != "WARN" || f.EffectCount("o-1") != 1 || r["by"] != audit.By || r["reason"] != audit.Reason || r["message_id"] != "dlq-1" {
		t.Fatalf("the replay: %v, effect ran %d times", line, f.EffectCount("o-1"))
	}
	key, _ := f.Guard.Key("o-1")
	rec, err := f.Store.Get(context.Background(), key)
	if err != nil || rec == nil || rec.Replay != audit.Encode() {
		t.Fatalf("the record's replay: %+v, %v; want %s", rec, err, audit.Encode())
	}

	again := audit
	again.MessageID = "dlq-2"
	if line := handle(replayed(ebMessage(body, now), again.Encode())); line["outcome"] != "duplicate" || f.EffectCount("o-1") != 1 {
		t.Fatalf("a second replay: %v, effect ran %d times; want a duplicate", line["outcome"], f.EffectCount("o-1"))
	}

	old := audit
	old.At = now.Add(-queuetest.Window)
	line = handle(replayed(ebMessage(ebEvent("archived-2", now.Add(-2*queuetest.Window), `{"orderId":"o-2","amount":1}`), now), old.Encode()))
	if line["outcome"] != "expired" || !strings.Contains(fmt.Sprint(line["reason"]), "time of the operator's replay") || f.EffectCount("o-2") != 0 {
		t.Fatalf("a replay as old as the window: %v (%v), want expired", line["outcome"], line["reason"])
	}

	for _, v := range []string{`{"by":"x","at":"2026-12-01T08:00:00Z"}`, `not json`, strings.Repeat("x", replay.MaxBytes+1)} {
		line := handle(replayed(ebMessage(ebEvent("archived-3", now.Add(-2*queuetest.Window), `{"orderId":"o-3","amount":1}`), now), v))
		if line["outcome"] != "bad_input" || !strings.Contains(fmt.Sprint(line["reason"]), replay.Attribute) || f.EffectCount("o-3") != 0 {
			t.Errorf("marker %.40q: %v (%v), want bad input", v, line["outcome"], line["reason"])
		}
	}
}

// replayed is rec marked as an operator's replay with value v.
func replayed(rec events.SQSMessage, v string) events.SQSMessage {
	rec.MessageAttributes = map[string]events.SQSMessageAttribute{replay.Attribute: {DataType: "String", StringValue: &v}}
	return rec
}

// eventsHandlerOf is the fixture's handler of events whose detail is an
// Order, keyed by its id.
func eventsHandlerOf(f *queuetest.Fixture, cfg sqsbatch.Config) *sqsbatch.Handler[eventbridge.Event[queuetest.Order]] {
	return eventbridge.New(f.Guard, func(e eventbridge.Event[queuetest.Order]) (string, error) { return e.Detail.OrderID, nil },
		func(ctx context.Context, e eventbridge.Event[queuetest.Order], r idempotency.Reservation) (string, error) {
			return f.Effect(ctx, e.Detail, r)
		}, cfg)
}

// envelope is an SNS notification whose Message is the JSON value v, as is.
func envelope(v string) string {
	return `{"Type":"Notification","MessageId":"sns-1","TopicArn":"arn:aws:sns:eu-west-1:123456789012:orders","Message":` + v + `}`
}
