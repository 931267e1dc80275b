package idempotency

import (
	"errors"
	"fmt"
	"time"
)

// InProgressError is the error of a delivery whose fact another worker
// holds under a live lease: it wraps ErrInProgress and says when that lease
// ends, so that the adapter can bring the delivery back then rather than
// after the queue's whole visibility timeout.
type InProgressError struct {
	// Key is the fact's record key.
	Key string
	// LeaseUntil is when the blocking reservation's lease ends: the other
	// invocation's deadline (or its LeaseMax), after which its record is
	// completed, released, or taken over by a delivery of the same payload.
	LeaseUntil time.Time
}

func (e *InProgressError) Error() string {
	return fmt.Sprintf("%s: %v until %s", e.Key, ErrInProgress, e.LeaseUntil.UTC().Format(time.RFC3339Nano))
}

// Is makes errors.Is(err, ErrInProgress) true.
func (e *InProgressError) Is(target error) bool { return target == ErrInProgress }

// LeaseEnd returns when the lease that blocks a delivery ends, from an
// error of Run or RunTx: false unless err holds an *InProgressError.
func LeaseEnd(err error) (time.Time, bool) {
	var ip *InProgressError
	if errors.As(err, &ip) {
		return ip.LeaseUntil, true
	}
	return time.Time{}, false
}

// Window returns the business window (Config.Window): how long a completed
// fact suppresses its duplicates, from its completion. An adapter publishes
// it as its expiry policy.
func (g *Guard) Window() time.Duration { return g.cfg.Window }
