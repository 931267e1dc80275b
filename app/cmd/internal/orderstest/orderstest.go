// Package orderstest checks the example consumers' handlers: an order no
// retry can fix is refused before the idempotency store, so that it costs
// no request on any of its deliveries.
package orderstest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orders"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/storespy"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Invalid are orders that every example consumer refuses.
var Invalid = map[string]string{
	"negative amount":  `{"orderId":"o-neg","customerId":"c1","amount":-5,"currency":"EUR","email":"a@example.com"}`,
	"zero amount":      `{"orderId":"o-zero","customerId":"c1","amount":0,"currency":"EUR","email":"a@example.com"}`,
	"no currency code": `{"orderId":"o-cur","customerId":"c1","amount":5,"currency":"euro","email":"a@example.com"}`,
	"no customer":      `{"orderId":"o-cus","amount":5,"currency":"EUR","email":"a@example.com"}`,
}

// Valid is an order every example consumer processes.
const Valid = `{"orderId":"o-ok","customerId":"c1","amount":5000,"currency":"EUR","email":"a@example.com"}`

// NewHandler builds a consumer's handler with opts (sqsbatch.FromEnv or
// sqsbatch.FromEnvTx with the consumer's key function and effect).
type NewHandler func(opts ...handler.Option) (*sqsbatch.Handler[orders.Order], error)

// RefusedBeforeTheStore delivers a valid order, then each invalid order
// (Invalid and extra) three times, and checks that the valid order is
// processed and that every delivery of an invalid one is bad input that
// made no store request. store makes the store under the counter (nil: an
// storetest.MemoryStore).
func RefusedBeforeTheStore(t *testing.T, newHandler NewHandler, store func() idempotency.TxStore, extra map[string]string) {
	t.Helper()
	cases := map[string]string{}
	for k, v := range Invalid {
		cases[k] = v
	}
	for k, v := range extra {
		cases[k] = v
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			var inner idempotency.TxStore = storetest.NewMemoryStore()
			if store != nil {
				inner = store()
			}
			counter := storespy.NewCounter(inner)
			settings := contract.Defaults(30 * time.Second)
			settings.Table, settings.Namespace, settings.Consumer, settings.Delivery = "example", "example", "example", contract.Raw
			env := settings.Encode()
			var logs strings.Builder
			h, err := newHandler(handler.WithStore(counter), handler.WithGetenv(func(k string) string { return env[k] }),
				handler.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))), handler.WithMetrics(io.Discard))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "valid", Body: Valid}}})
			if err != nil || len(resp.BatchItemFailures) != 0 || counter.Requests() == 0 {
				t.Fatalf("a valid order: %+v, %v, %d store requests; want it processed\n%s", resp, err, counter.Requests(), logs.String())
			}
			before := counter.Requests()
			for i := range 3 { // three deliveries, as SQS makes before the DLQ
				resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "bad", Body: body}}})
				if err != nil || len(resp.BatchItemFailures) != 1 {
					t.Fatalf("delivery %d: %+v, %v: want the order reported failed", i+1, resp, err)
				}
			}
			if got := counter.Requests() - before; got != 0 {
				t.Errorf("3 deliveries of an invalid order made %d store requests, want 0", got)
			}
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var l map[string]any
				if json.Unmarshal([]byte(line), &l) == nil && l["message_id"] == "bad" && l["outcome"] != "bad_input" {
					t.Errorf("outcome %v (%v), want bad_input", l["outcome"], l["reason"])
				}
			}
		})
	}
}
