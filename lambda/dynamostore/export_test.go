package dynamostore

import (
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// FromSettings is the store of settings that did not come through the
// contract's rules, for the tests of the store's own check.
func FromSettings(api API, s contract.Settings) (*Store, error) { return fromSettings(api, s) }

// ObserveCapacity sets the test hook that sees every request's reported
// and computed capacity.
func ObserveCapacity(f func(reported *idempotency.Capacity, computed idempotency.Capacity)) {
	observeCapacity = f
}
