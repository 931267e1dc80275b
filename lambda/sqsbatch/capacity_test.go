package sqsbatch_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// meteredStore charges its calls as a DynamoDB store reports them: 1 write
// unit per reserve, 2 per complete.
type meteredStore struct{ *storetest.MemoryStore }

func (s meteredStore) Reserve(ctx context.Context, r idempotency.Record, now time.Time) error {
	idempotency.AddCapacity(ctx, idempotency.Capacity{Write: 1})
	return s.MemoryStore.Reserve(ctx, r, now)
}

func (s meteredStore) Complete(ctx context.Context, r idempotency.Record) error {
	idempotency.AddCapacity(ctx, idempotency.Capacity{Write: 2})
	return s.MemoryStore.Complete(ctx, r)
}

// TestCapacityMetrics: the batch's metrics line carries the capacity its
// records' store calls consumed, in all and for the processed and the
// duplicate records; a duplicate answered within the batch costs nothing.
func TestCapacityMetrics(t *testing.T) {
	f := newFixture(t)
	g, err := idempotency.NewGuard(meteredStore{storetest.NewMemoryStore()}, idempotency.Config{Namespace: "charge"})
	if err != nil {
		t.Fatal(err)
	}
	f.Guard = g
	h := f.Handler(contract.Raw)
	ctx := context.Background()
	if _, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{message(`{"orderId":"done","amount":1}`, contract.Raw)}}); err != nil {
		t.Fatal(err)
	}
	batch := []events.SQSMessage{
		message(`{"orderId":"new","amount":1}`, contract.Raw),
		message(`{"orderId":"new","amount":1}`, contract.Raw),  // the same fact, in the same batch
		message(`{"orderId":"done","amount":1}`, contract.Raw), // a duplicate in the store
	}
	if _, err := h.Handle(ctx, events.SQSEvent{Records: batch}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{
		"WriteUnits": 4, "ReadUnits": 0, "ProcessedWriteUnits": 3, "ProcessedReadUnits": 0,
		"DuplicateWriteUnits": 1, "DuplicateReadUnits": 0, "Processed": 1, "Duplicate": 2,
	} {
		if got := f.Metric(t, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}
