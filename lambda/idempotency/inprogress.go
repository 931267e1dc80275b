package idempotency

import "time"

// InProgressError is the error, wrapping ErrInProgress, that Run and RunTx
// return when another worker holds a valid reservation of the fact: it
// carries that reservation's lease, so that an adapter can say when to
// retry (an HTTP adapter's Retry-After). errors.Is(err, ErrInProgress) holds
// for it; errors.As finds it.
type InProgressError struct {
	// LeaseUntil is when the reservation that holds the fact may be taken
	// over: the earliest time a retry can run the effect, if the other worker
	// neither completes nor releases it before.
	LeaseUntil time.Time
}

func (e *InProgressError) Error() string {
	return ErrInProgress.Error() + " until " + e.LeaseUntil.UTC().Format(time.RFC3339Nano)
}

// Is makes errors.Is(err, ErrInProgress) true.
func (e *InProgressError) Is(target error) bool { return target == ErrInProgress }

// Window returns the business window (Config.Window): how long a completed
// fact suppresses its duplicates, from its completion. An adapter publishes
// it as its expiry policy.
func (g *Guard) Window() time.Duration { return g.cfg.Window }
