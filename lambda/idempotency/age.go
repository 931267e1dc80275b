package idempotency

import (
	"errors"
	"fmt"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// ErrExpired means the message that carries the fact is as old as the
// business window (Fact.Sent): the fact's record, if it ran, may have left
// the window, so the guard takes the key for nobody and runs nothing. A
// fact reserved at R, after its message was sent, and completed at C ≥ R
// holds its record until C + Window: a delivery younger than the window
// always meets it; an older one may not.
var ErrExpired = errors.New("expired")

// Expired returns an error wrapping ErrExpired if, on the guard's clock, the
// message of f (f.Sent) is at least Window less a second (for the skew between the clock that stamped it and
// the guard's) old; nil for
// a younger one, or when f.Sent is zero. Run and RunTx make the same check
// before every write that would take the key (a retry after a record that
// expired while it was read included), and a transactional commit after its
// effect.
func (g *Guard) Expired(f Fact) error { return g.expired(f, g.cfg.Now()) }

func (g *Guard) expired(f Fact, now time.Time) error {
	if f.Sent.IsZero() {
		return nil
	}
	age := now.Sub(f.Sent)
	if age < g.cfg.Window-limits.ClockSkewMargin {
		return nil
	}
	return fmt.Errorf("%w: the message was sent %v ago (%s), and the business window is %v (less %v for clock skew): "+
		"its fact's record may have left the window, so its effect may have run already and is not run again",
		ErrExpired, age.Round(time.Millisecond), f.Sent.UTC().Format(time.RFC3339Nano), g.cfg.Window, limits.ClockSkewMargin)
}
