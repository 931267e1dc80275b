package idempotency

import (
	"errors"
	"fmt"
	"time"
)

// inProgressError is the error of a delivery whose fact another worker
// holds under a live lease: it is ErrInProgress and says when that lease
// ends (LeaseEnd).
type inProgressError struct {
	// key is the fact's record key.
	key string
	// leaseUntil is when the blocking reservation's lease ends.
	leaseUntil time.Time
}

func (e *inProgressError) Error() string {
	return fmt.Sprintf("%s: %v until %s", e.key, ErrInProgress, e.leaseUntil.UTC().Format(time.RFC3339Nano))
}

// Is makes errors.Is(err, ErrInProgress) true.
func (e *inProgressError) Is(target error) bool { return target == ErrInProgress }

// LeaseEnd returns when the lease that blocks a delivery ends, from an
// error of Run or RunTx: the other invocation's deadline (or its LeaseMax),
// after which its record is completed, released, or taken over by a
// delivery of the same payload; false unless err is an ErrInProgress that
// says so. An adapter brings the delivery back then rather than after the
// queue's whole visibility timeout.
func LeaseEnd(err error) (time.Time, bool) {
	var ip *inProgressError
	if errors.As(err, &ip) {
		return ip.leaseUntil, true
	}
	return time.Time{}, false
}

// Window returns the business window (Config.Window): how long a completed
// fact suppresses its duplicates, from its completion. An adapter publishes
// it as its expiry policy.
func (g *Guard) Window() time.Duration { return g.cfg.Window }
