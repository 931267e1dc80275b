package dynamostore

import "github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"

// ObserveCapacity sets the test hook that sees every request's reported
// and computed capacity.
func ObserveCapacity(f func(reported *idempotency.Capacity, computed idempotency.Capacity)) {
	observeCapacity = f
}
