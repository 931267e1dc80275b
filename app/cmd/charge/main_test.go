package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orders"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orderstest"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/provider"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// TestChargePassesTheKeyDownstream: the payment API receives the fact's
// key as its Idempotency-Key, so the charge of a retried effect is the same
// charge; duplicates get the payment id back from the record.
func TestChargePassesTheKeyDownstream(t *testing.T) {
	var mu sync.Mutex
	keys := map[string]int{}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req chargeRequest
		if r.URL.Path != "/charges" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Amount != 5000 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		keys[r.Header.Get("Idempotency-Key")]++
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(charge{ID: "ch_1"})
	}))
	defer api.Close()
	guard, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "charge", PayloadIgnore: []string{"placedAt"}})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	p := &payments{api: provider.New(api.URL), logger: logger}
	h := sqsbatch.New(guard, orders.Key, p.charge, sqsbatch.Config{Batch: handler.Batch{Logger: logger, Metrics: io.Discard}})
	body := `{"orderId":"42","customerId":"c1","amount":5000,"currency":"EUR","placedAt":"%s"}`
	batch := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m1", Body: strings.Replace(body, "%s", "2026-11-29T10:00:00Z", 1)},
		{MessageId: "m2", Body: strings.Replace(body, "%s", "2026-11-29T10:00:05Z", 1)}, // a producer retry
		{MessageId: "m3", Body: `{"orderId":"43","customerId":"c1","amount":-5,"currency":"EUR"}`},
	}}
	resp, err := h.Handle(context.Background(), batch)
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m3" {
		t.Fatalf("%+v, %v: want only the negative amount to fail", resp, err)
	}
	if len(keys) != 1 || keys["charge#42"] != 1 {
		t.Fatalf("payment API calls by idempotency key: %v, want one call with charge#42", keys)
	}
	f, _ := guard.Fact("42", []byte(strings.Replace(body, "%s", "x", 1)))
	res, err := guard.Run(context.Background(), f, nil)
	if err != nil || res.Outcome != outcome.Duplicate || res.Value != "ch_1" {
		t.Fatalf("the record: %+v, %v; want the payment id stored", res, err)
	}
}

func TestSandboxCharge(t *testing.T) {
	p := &payments{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	o := orders.Order{OrderID: "1", CustomerID: "c", Amount: 1, Currency: "EUR"}
	a, err := p.charge(context.Background(), o, idempotency.Reservation{Key: "charge#1"})
	b, _ := p.charge(context.Background(), o, idempotency.Reservation{Key: "charge#1"})
	if err != nil || a != b || !strings.HasPrefix(a, "ch_sandbox_") {
		t.Fatalf("sandbox charges %q, %q, %v: want one stable sandbox id per key", a, b, err)
	}
}

// TestInvalidOrdersCostNoStoreRequest: an order no retry can fix is bad
// input before the store, on every delivery.
func TestInvalidOrdersCostNoStoreRequest(t *testing.T) {
	p := &payments{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	orderstest.RefusedBeforeTheStore(t, func(opts ...handler.Option) (*sqsbatch.Handler[orders.Order], error) {
		return sqsbatch.FromEnv(orders.Key, p.charge, opts...)
	}, nil, nil)
}
