package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orders"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orderstest"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/provider"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// TestARetriedSendSettlesOnce: a retried SendMessage is a new message id
// with the same body: one settlement.
func TestARetriedSendSettlesOnce(t *testing.T) {
	api := orderstest.NewAPI(t)
	s := &settler{provider.NewEffect(api.URL, "/settlements", slog.Default())}
	h, err := sqsbatch.FromEnv(orders.Key, s.settle, orderstest.Options(contract.Raw)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"m-1", "m-2"} {
		resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: id, Body: orderstest.Valid}}})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("%s: %+v, %v", id, resp, err)
		}
	}
	if got := api.Effects(); len(got) != 1 || got["example#o-ok"] != 1 {
		t.Errorf("settlements %v, want one", got)
	}
}

// TestInvalidOrdersCostNoStoreRequest: an order no retry can fix is bad
// input before the store.
func TestInvalidOrdersCostNoStoreRequest(t *testing.T) {
	s := &settler{provider.NewEffect("", "/settlements", slog.New(slog.DiscardHandler))}
	orderstest.RefusedBeforeTheStore(t, func(opts ...handler.Option) (*sqsbatch.Handler[orders.Order], error) {
		return sqsbatch.FromEnv(orders.Key, s.settle, opts...)
	}, nil, nil)
}
