package idempotency_test

import (
	"context"
	"fmt"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// The same fact delivered twice: the effect runs once and the duplicate gets
// the stored result. In production the store is dynamostore.New(client, table).
func ExampleGuard_Do() {
	guard, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "charge"})
	if err != nil {
		panic(err)
	}
	charge := func(ctx context.Context, r idempotency.Reservation) (string, error) {
		fmt.Println("charged, idempotency key", r.Key)
		return "ch_1", nil
	}
	for range 2 {
		res, err := guard.Do(context.Background(), "order-42", []byte(`{"orderId":"order-42","amount":5000}`), charge)
		fmt.Println(res.Outcome, res.Value, err)
	}
	// Output:
	// charged, idempotency key charge#order-42
	// processed ch_1 <nil>
	// duplicate ch_1 <nil>
}
