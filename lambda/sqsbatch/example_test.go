package sqsbatch_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

var discardLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// A consumer that charges each order once. In a Lambda main package
// sqsbatch.FromEnv builds the guard, its DynamoDB store and the handler from the
// environment the construct sets, and the last line is lambda.Start(h.Handle).
func Example() {
	type Order struct {
		OrderID string `json:"orderId"`
		Amount  int    `json:"amount"`
	}
	guard, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "charge"})
	if err != nil {
		panic(err)
	}
	charge := func(ctx context.Context, o Order, r idempotency.Reservation) (string, error) {
		// r.Key ("charge#42") is the payment API's idempotency key.
		fmt.Println("charging", o.OrderID, "with idempotency key", r.Key)
		return "receipt-" + o.OrderID, nil
	}
	key := func(o Order) (string, error) { return o.OrderID, nil } // the business fact, never the message id
	h := sqsbatch.New(guard, key, charge, sqsbatch.Config{Batch: handler.Batch{Logger: discardLogger, Metrics: io.Discard}})

	// SNS delivered the order twice (a producer retry): two SQS messages.
	batch := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m-1", Body: `{"orderId":"42","amount":5000}`},
		{MessageId: "m-2", Body: `{"amount":5000,"orderId":"42"}`},
		{MessageId: "m-3", Body: `not json`},
	}}
	resp, err := h.Handle(context.Background(), batch)
	fmt.Println("error:", err)
	for _, f := range resp.BatchItemFailures {
		fmt.Println("retry or dead-letter:", f.ItemIdentifier)
	}
	// Output:
	// charging 42 with idempotency key charge#42
	// error: <nil>
	// retry or dead-letter: m-3
}
