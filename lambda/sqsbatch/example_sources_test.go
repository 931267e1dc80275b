package sqsbatch_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// A queue that an EventBridge rule delivers to: the detail is the fact, so
// the producer's retry (another event id) is a duplicate.
func ExampleNewEvents() {
	guard, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "ship"})
	type shipment struct {
		OrderID string `json:"orderId"`
	}
	h := sqsbatch.NewEvents(guard,
		func(e sqsbatch.Event[shipment]) (string, error) { return e.Detail.OrderID, nil },
		func(ctx context.Context, e sqsbatch.Event[shipment], r idempotency.Reservation) (string, error) {
			fmt.Println("ship", e.Detail.OrderID, "from", e.Source)
			return "", nil
		},
		sqsbatch.Config{Logger: slog.New(slog.DiscardHandler), Metrics: discard{}})
	event := func(id string) events.SQSMessage {
		return events.SQSMessage{MessageId: "m-" + id, Body: `{"version":"0","id":"` + id + `","detail-type":"OrderPaid","source":"shop",` +
			`"account":"111122223333","time":"2026-12-01T10:00:00Z","region":"eu-west-1","resources":[],"detail":{"orderId":"o-1"}}`}
	}
	resp, _ := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{event("a"), event("b")}})
	fmt.Println("failed:", len(resp.BatchItemFailures))
	// Output:
	// ship o-1 from shop
	// failed: 0
}

// A queue that a bucket's notifications are delivered to: one fact per
// record, the key decoded.
func ExampleNewObjects() {
	guard, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "uploads"})
	h := sqsbatch.NewObjects(guard, func(ctx context.Context, o sqsbatch.Object, r idempotency.Reservation) (string, error) {
		fmt.Printf("import %s/%s (%d bytes) as %s\n", o.Bucket, o.Key, o.Size, r.Key)
		return "", nil
	}, sqsbatch.Config{Logger: slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelError})), Metrics: discard{}})
	body := `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","eventTime":"2026-12-01T10:00:00.000Z","eventName":"ObjectCreated:Put",` +
		`"s3":{"bucket":{"name":"invoices"},"object":{"key":"2026/caf%C3%A9+bill.pdf","size":1024,"eTag":"d41d8cd98f00b204e9800998ecf8427e","sequencer":"0055AED6DCD90281E5"}}}]}`
	resp, _ := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-1", Body: body}}})
	fmt.Println("failed:", len(resp.BatchItemFailures))
	// Output:
	// import invoices/2026/café bill.pdf (1024 bytes) as uploads#invoices/2026/café bill.pdf@0055AED6DCD90281E5
	// failed: 0
}
