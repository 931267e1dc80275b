package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orderstest"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/provider"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamodbstream"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

func record(event, seq, status string) events.DynamoDBEventRecord {
	img := map[string]events.DynamoDBAttributeValue{
		"orderId": events.NewStringAttribute("o-1"), "customerId": events.NewStringAttribute("c1"),
		"amount": events.NewNumberAttribute("5000"), "currency": events.NewStringAttribute("EUR"),
		"status": events.NewStringAttribute(status), "chargeId": events.NewStringAttribute("ch_1"),
	}
	return events.DynamoDBEventRecord{EventID: seq, EventName: event, EventSource: "aws:dynamodb", Change: events.DynamoDBStreamRecord{
		Keys: map[string]events.DynamoDBAttributeValue{"orderId": events.NewStringAttribute("o-1")}, NewImage: img,
		SequenceNumber: seq, StreamViewType: "NEW_IMAGE",
	}}
}

// TestAChangeReplayedOrRewrittenNotifiesOnce: the checkpoint's replay of a
// record, and a rewrite of the same order (a MODIFY with the INSERT's
// image, from a retried charge), are the same fact: one notice. A new
// status is a fact of its own.
func TestAChangeReplayedOrRewrittenNotifiesOnce(t *testing.T) {
	api := orderstest.NewAPI(t)
	n := &notifier{provider.NewEffect(api.URL, "/notices", slog.New(slog.DiscardHandler))}
	s := contract.Defaults(30 * time.Second)
	s.Table, s.Namespace, s.Consumer = "example", "notify", "NotifyCharge"
	s.Source, s.StreamImages, s.StreamRemoves, s.PayloadIgnore = contract.SourceDynamoDBStreams, contract.ImagesNew, contract.RemoveSkip, []string{"event"}
	env := s.Encode()
	h, err := dynamodbstream.FromEnv(key, n.notify, handler.WithStore(storetest.NewMemoryStore()), handler.WithGetenv(func(k string) string { return env[k] }),
		handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range [][]events.DynamoDBEventRecord{
		{record("INSERT", "100", "CHARGED")},
		{record("INSERT", "100", "CHARGED"), record("MODIFY", "200", "CHARGED")}, // the replay, the rewrite
		{record("MODIFY", "300", "REFUNDED")},
	} {
		resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: batch})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("%+v, %v", resp, err)
		}
	}
	got := api.Effects()
	if len(got) != 2 || got["notify#o-1/CHARGED"] != 1 || got["notify#o-1/REFUNDED"] != 1 {
		t.Errorf("notices by key %v, want one per status", got)
	}
}

func TestAChangeWithoutItsImageIsBadInput(t *testing.T) {
	for name, c := range map[string]dynamodbstream.Change[order]{
		"no new image": {Event: dynamodbstream.Modify, Keys: order{OrderID: "o-1"}},
		"no status":    {Event: dynamodbstream.Insert, New: &order{OrderID: "o-1"}},
	} {
		if _, err := key(c); !errors.Is(err, outcome.ErrBadInput) {
			t.Errorf("%s: %v, want bad input", name, err)
		}
	}
}
