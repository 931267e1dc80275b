package ops_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/kinesis"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/ops"
)

// shipment is a stream consumer's message; its fact is the order and step.
type shipment struct {
	Order string `json:"order"`
	Step  int    `json:"step"`
}

func shipmentKey(s shipment) (string, error) { return fmt.Sprintf("%s/%d", s.Order, s.Step), nil }

// seqN is a realistic 56-digit Kinesis sequence number ending in n.
func seqN(n int) string { return fmt.Sprintf("4961%052d", n) }

// shipmentRecord is a Kinesis record of s at sequence number seq,
// partition key s.Order.
func shipmentRecord(seq string, s shipment) events.KinesisEventRecord {
	data, _ := json.Marshal(s)
	return events.KinesisEventRecord{EventID: "shardId-000000000000:" + seq, Kinesis: events.KinesisRecord{
		SequenceNumber: seq, PartitionKey: s.Order, Data: data,
		ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: time.Now()},
	}}
}

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

// outcomesOf returns the outcomes of the "record" lines in logs, by
// sequence number.
func outcomesOf(t *testing.T, logs *bytes.Buffer) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var v struct {
			Msg     string `json:"msg"`
			Seq     string `json:"sequence_number"`
			Outcome string `json:"outcome"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if v.Msg == "record" {
			out[v.Seq] = v.Outcome
		}
	}
	return out
}

// TestReplayFromTheFailureBucketIsHarmless: a batch the event source gave
// up on, replayed from its on-failure object through the same handler,
// runs only the facts that never completed, each once, in key order.
func TestReplayFromTheFailureBucketIsHarmless(t *testing.T) {
	for _, asString := range []bool{true, false} {
		store := storetest.NewMemoryStore()
		guard, err := idempotency.NewGuard(store, idempotency.Config{Namespace: "stream"})
		if err != nil {
			t.Fatal(err)
		}
		var ran []string // one handler runs at a time, in batch order (Concurrency 1)
		downstreamDown := true
		ship := func(ctx context.Context, s shipment, r idempotency.Reservation) (string, error) {
			if downstreamDown && s.Order == "b" {
				return "", errors.New("the downstream refused it")
			}
			ran = append(ran, r.Key)
			return "ok", nil
		}
		var logs bytes.Buffer
		h := kinesis.New(guard, shipmentKey, ship, handler.Batch{Concurrency: 1, Logger: outcome.NewLogger(&logs, slog.LevelDebug), Metrics: io.Discard})
		ev := events.KinesisEvent{Records: []events.KinesisEventRecord{
			shipmentRecord(seqN(1), shipment{"a", 1}), shipmentRecord(seqN(2), shipment{"b", 1}),
			shipmentRecord(seqN(3), shipment{"a", 2}), shipmentRecord(seqN(4), shipment{"b", 2}),
		}}
		// Every retry fails b; the event source gives up and keeps the batch.
		for range 3 {
			if resp, err := h.Handle(context.Background(), ev); err != nil || len(resp.BatchItemFailures) != 1 {
				t.Fatalf("%+v, %v", resp, err)
			}
		}
		event, err := ops.FailureEvent(failureObject(t, ev, asString))
		if err != nil {
			t.Fatal(err)
		}
		var replay events.KinesisEvent
		if err := json.Unmarshal(event, &replay); err != nil {
			t.Fatal(err)
		}
		downstreamDown = false
		logs.Reset()
		if resp, err := h.Handle(context.Background(), replay); err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("replay: %+v, %v", resp, err)
		}
		if got := outcomesOf(t, &logs); got[seqN(1)] != "duplicate" || got[seqN(3)] != "duplicate" || got[seqN(2)] != "processed" || got[seqN(4)] != "processed" {
			t.Errorf("replay outcomes %v", got)
		}
		if want := []string{"stream#a/1", "stream#a/2", "stream#b/1", "stream#b/2"}; !slices.Equal(ran, want) {
			t.Errorf("effects %v, want %v: each fact once, in its key's order", ran, want)
		}
		// Replayed again (an operator's second try): nothing runs.
		before := len(ran)
		if _, err := h.Handle(context.Background(), replay); err != nil || len(ran) != before {
			t.Errorf("a second replay ran %d effects (%v)", len(ran)-before, err)
		}
	}
	for _, bad := range []string{`{"requestContext":{}}`, `{"payload":"{}"}`, `not json`} {
		if _, err := ops.FailureEvent([]byte(bad)); err == nil {
			t.Errorf("FailureEvent(%s): no error", bad)
		}
	}
}
