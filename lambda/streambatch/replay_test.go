package streambatch_test

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/streambatch"
)

// failureObject is an on-failure record as an S3 destination keeps it, the
// event in its payload (as a string, or as an object).
func failureObject(t *testing.T, ev events.KinesisEvent, asString bool) []byte {
	t.Helper()
	event, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var payload any = json.RawMessage(event)
	if asString {
		payload = string(event)
	}
	obj, err := json.Marshal(map[string]any{
		"requestContext":   map[string]any{"condition": "RetryAttemptsExhausted", "approximateInvokeCount": 11},
		"version":          "1.0",
		"KinesisBatchInfo": map[string]any{"shardId": "shardId-000000000000", "startSequenceNumber": seqN(1), "endSequenceNumber": seqN(4), "batchSize": 4},
		"payload":          payload,
	})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestReplayFromTheFailureBucketIsHarmless: a batch the event source gave
// up on, replayed from its on-failure object through the same handler,
// runs only the facts that never completed, each once, in key order.
func TestReplayFromTheFailureBucketIsHarmless(t *testing.T) {
	for _, asString := range []bool{true, false} {
		var e effects
		store := storetest.NewMemoryStore()
		ev := events.KinesisEvent{Records: []events.KinesisEventRecord{
			kin(seqN(1), order{ID: "a", Seq: 1}),
			kin(seqN(2), order{ID: "b", Seq: 1}),
			kin(seqN(3), order{ID: "a", Seq: 2}),
			kin(seqN(4), order{ID: "b", Seq: 2}),
		}}
		downstreamDown := true
		h := streambatch.NewKinesis(newGuard(t, store), orderKey, func(ctx context.Context, o order, r idempotency.Reservation) (string, error) {
			if downstreamDown && o.ID == "b" {
				o.Fail = true
			}
			return e.fn(ctx, o, r)
		}, config(io.Discard))
		// Every retry fails b; the event source gives up and keeps the batch.
		for range 3 {
			if resp, err := h.Handle(context.Background(), ev); err != nil || len(resp.BatchItemFailures) != 1 {
				t.Fatalf("%+v, %v", resp, err)
			}
		}
		event, err := streambatch.FailureEvent(failureObject(t, ev, asString))
		if err != nil {
			t.Fatal(err)
		}
		var replay events.KinesisEvent
		if err := json.Unmarshal(event, &replay); err != nil {
			t.Fatal(err)
		}
		downstreamDown = false
		var logs logBuf
		h2 := streambatch.NewKinesis(newGuard(t, store), orderKey, func(ctx context.Context, o order, r idempotency.Reservation) (string, error) { return e.fn(ctx, o, r) }, config(&logs))
		if resp, err := h2.Handle(context.Background(), replay); err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("replay: %+v, %v", resp, err)
		}
		if got := logs.outcomes(t); got[seqN(1)] != "duplicate" || got[seqN(3)] != "duplicate" || got[seqN(2)] != "processed" || got[seqN(4)] != "processed" {
			t.Errorf("replay outcomes %v", got)
		}
		if a, b := e.of("a"), e.of("b"); !slices.Equal(a, []string{"a/1", "a/2"}) || !slices.Equal(b, []string{"b/1", "b/2"}) {
			t.Errorf("effects a %v, b %v: want each fact once, in order", a, b)
		}
		// Replayed again (an operator's second try): nothing runs.
		before := len(e.ran)
		if _, err := h2.Handle(context.Background(), replay); err != nil || len(e.ran) != before {
			t.Errorf("a second replay ran %d effects (%v)", len(e.ran)-before, err)
		}
	}
	for _, bad := range []string{`{"requestContext":{}}`, `{"payload":"{}"}`, `not json`} {
		if _, err := streambatch.FailureEvent([]byte(bad)); err == nil {
			t.Errorf("FailureEvent(%s): no error", bad)
		}
	}
}
