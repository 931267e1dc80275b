package kinesis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/kinesis"
)

// A shipment consumer: each shipment step of an order is shipped once,
// however often the stream delivers its record. In a Lambda main package
// kinesis.Start builds the guard, its store and the handler from the
// environment the stream construct sets.
func Example() {
	type Shipment struct {
		Order string `json:"order"`
		Step  int    `json:"step"`
	}
	guard, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "ship"})
	if err != nil {
		panic(err)
	}
	// The fact: this step of this order, whatever record carries it.
	key := func(s Shipment) (string, error) { return fmt.Sprintf("%s/%d", s.Order, s.Step), nil }
	ship := func(ctx context.Context, s Shipment, r idempotency.Reservation) (string, error) {
		fmt.Println("shipping", s.Order, "step", s.Step)
		return "", nil
	}
	h := kinesis.New(guard, key, ship, handler.Batch{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: io.Discard})
	rec := func(seq string, s Shipment) events.KinesisEventRecord {
		data, _ := json.Marshal(s)
		return events.KinesisEventRecord{Kinesis: events.KinesisRecord{SequenceNumber: seq, PartitionKey: s.Order, Data: data}}
	}
	batch := events.KinesisEvent{Records: []events.KinesisEventRecord{rec("100", Shipment{"42", 1}), rec("200", Shipment{"42", 2})}}
	h.Handle(context.Background(), batch)
	// Lambda replays the shard from a checkpoint (a later record failed):
	// the same records come again, and nothing runs twice.
	resp, err := h.Handle(context.Background(), batch)
	fmt.Println("failures:", len(resp.BatchItemFailures), "error:", err)
	// Output:
	// shipping 42 step 1
	// shipping 42 step 2
	// failures: 0 error: <nil>
}
