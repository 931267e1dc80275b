package eventbridge_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/eventbridge"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// A queue that an EventBridge rule delivers to: the detail is the fact, so
// the producer's retry (another event id) is a duplicate.
func ExampleNew() {
	guard, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "ship"})
	sent := time.Now().Add(-time.Minute) // within the guard's Window (24 h by default)
	type shipment struct {
		OrderID string `json:"orderId"`
	}
	h := eventbridge.New(guard,
		func(e eventbridge.Event[shipment]) (string, error) { return e.Detail.OrderID, nil },
		func(ctx context.Context, e eventbridge.Event[shipment], r idempotency.Reservation) (string, error) {
			fmt.Println("ship", e.Detail.OrderID, "from", e.Source)
			return "", nil
		},
		sqsbatch.Config{Batch: handler.Batch{Logger: slog.New(slog.DiscardHandler), Metrics: io.Discard}})
	event := func(id string) events.SQSMessage {
		return events.SQSMessage{MessageId: "m-" + id, Body: `{"version":"0","id":"` + id + `","detail-type":"OrderPaid","source":"shop",` +
			`"account":"111122223333","time":"` + sent.Format(time.RFC3339) + `","region":"eu-west-1","resources":[],"detail":{"orderId":"o-1"}}`}
	}
	resp, _ := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{event("a"), event("b")}})
	fmt.Println("failed:", len(resp.BatchItemFailures))
	// Output:
	// ship o-1 from shop
	// failed: 0
}
