package dynamodbstream_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamodbstream"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// An outbox consumer: an orders table's stream feeds a function that
// publishes each order's confirmation once. In a Lambda main package
// dynamodbstream.Start builds the guard, its store and the handler
// from the environment the stream construct sets.
func Example() {
	type Order struct {
		OrderID string `json:"orderId"`
		Status  string `json:"status"`
	}
	guard, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "confirm"})
	if err != nil {
		panic(err)
	}
	// The fact: this order reaching this status, whatever stream record
	// carries it.
	key := func(c dynamodbstream.Change[Order]) (string, error) { return c.New.OrderID + "/" + c.New.Status, nil }
	confirm := func(ctx context.Context, c dynamodbstream.Change[Order], r idempotency.Reservation) (string, error) {
		fmt.Println("confirming", c.New.OrderID, c.New.Status)
		return "", nil
	}
	h, err := dynamodbstream.New(guard, key, confirm, dynamodbstream.Config{
		Removes: contract.RemoveSkip, // a deleted order confirms nothing: said, not assumed
		Batch:   handler.Batch{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: io.Discard},
	})
	if err != nil {
		panic(err)
	}
	rec := func(seq, status string) events.DynamoDBEventRecord {
		return events.DynamoDBEventRecord{EventName: "MODIFY", Change: events.DynamoDBStreamRecord{
			SequenceNumber: seq,
			Keys:           map[string]events.DynamoDBAttributeValue{"orderId": events.NewStringAttribute("42")},
			NewImage: map[string]events.DynamoDBAttributeValue{
				"orderId": events.NewStringAttribute("42"), "status": events.NewStringAttribute(status),
			},
		}}
	}
	batch := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{rec("100", "PAID"), rec("200", "SHIPPED")}}
	h.Handle(context.Background(), batch)
	// Lambda replays the shard from a checkpoint (a later record failed):
	// the same records come again, and nothing runs twice.
	resp, err := h.Handle(context.Background(), batch)
	fmt.Println("failures:", len(resp.BatchItemFailures), "error:", err)
	// Output:
	// confirming 42 PAID
	// confirming 42 SHIPPED
	// failures: 0 error: <nil>
}
