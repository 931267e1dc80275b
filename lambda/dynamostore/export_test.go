package dynamostore

import (
	"context"
	"time"

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

// FakeConflictWaits makes the store's waits between conflicting attempts
// instant, on a clock of the test's that each wait advances (starting at
// the real time, which a context's deadline is measured on), and records
// them; the real waits come back when t ends.
func FakeConflictWaits(t interface{ Cleanup(func()) }) *[]time.Duration {
	waits := &[]time.Duration{}
	now := time.Now()
	oldWait, oldNow := conflictWait, conflictNow
	conflictNow = func() time.Time { return now }
	conflictWait = func(ctx context.Context, d time.Duration) error {
		*waits = append(*waits, d)
		now = now.Add(d)
		return ctx.Err()
	}
	t.Cleanup(func() { conflictWait, conflictNow = oldWait, oldNow })
	return waits
}
