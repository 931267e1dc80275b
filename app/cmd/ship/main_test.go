package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orderstest"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/provider"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/eventbridge"
)

// TestAProducersRetryBooksOneShipment: a producer's retry is a new event
// (a new id) with the same detail; the shipment is booked once, keyed by
// the source and the order id.
func TestAProducersRetryBooksOneShipment(t *testing.T) {
	api := orderstest.NewAPI(t)
	s := &shipper{provider.NewEffect(api.URL, "/shipments", slog.Default())}
	h, err := eventbridge.FromEnv(key, s.book, orderstest.Options(contract.EventBridge)...)
	if err != nil {
		t.Fatal(err)
	}
	event := func(id string) string {
		return `{"version":"0","id":"` + id + `","detail-type":"OrderPlaced","source":"orders","account":"111122223333","time":"` + orderstest.SentText() + `","region":"eu-west-1","resources":[],"detail":` + orderstest.Valid + `}`
	}
	for i, id := range []string{"e-1", "e-2"} { // the first PutEvents, and the producer's retry
		resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: id, Body: event(id)}}})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("delivery %d: %+v, %v", i+1, resp, err)
		}
	}
	if got := api.Effects(); len(got) != 1 || got["example#orders/o-ok"] != 1 {
		t.Errorf("shipments %v, want one, keyed example#orders/o-ok", got)
	}
}
