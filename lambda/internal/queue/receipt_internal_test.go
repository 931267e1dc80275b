package queue

import (
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// TestTheDelayFitsTheReceiptsTwelveHours: the delay set at now is bounded
// so that the message is visible again by the earliest end of its receipt's
// 12 hours, less receiptMargin, counted from the earliest receive the
// invocation allows: the queue's visibility timeout before the invocation,
// which came no later than the handler's start, nor than its deadline less
// the queue's timeout (at least the function's); or from the first receive
// without the queue's timeout. At the edge, every receive those rules allow
// leaves SQS room for the change.
func TestTheDelayFitsTheReceiptsTwelveHours(t *testing.T) {
	invoked := time.Unix(1_000_000, 0) // a time of this test's own: nothing here reads a clock
	const (
		qv      = 15 * time.Minute
		timeout = 150 * time.Second // the function's: at most qv
	)
	for _, c := range []struct {
		name     string
		start    time.Duration // the handler's start, from the invocation
		deadline bool          // the invocation has one: invoked + timeout
		qv       time.Duration
		first    time.Time
		elapsed  time.Duration // from invoked to the change
		d, want  time.Duration
	}{
		{"a short delay is untouched", 0, false, qv, time.Time{}, 0, 10 * time.Minute, 10 * time.Minute},
		{"12h at the start", 0, false, qv, time.Time{}, 0, contract.MaxBackoff, contract.MaxBackoff - qv - receiptMargin},
		{"12h late in the invocation", 0, false, qv, time.Time{}, 2 * time.Minute, contract.MaxBackoff, contract.MaxBackoff - qv - receiptMargin - 2*time.Minute},
		{"rounded down to a second", 0, false, qv, time.Time{}, 1500 * time.Millisecond, contract.MaxBackoff, contract.MaxBackoff - qv - receiptMargin - 2*time.Second},
		{"with a deadline: the invocation came at most the queue's timeout before it", 0, true, qv, time.Time{}, 0, contract.MaxBackoff,
			contract.MaxBackoff - (qv - timeout) - qv - receiptMargin},
		{"with a deadline, a late start (a long init) does not move it", 2 * time.Minute, true, qv, time.Time{}, 2 * time.Minute, contract.MaxBackoff,
			contract.MaxBackoff - (qv - timeout) - qv - receiptMargin - 2*time.Minute},
		{"the first receive bounds it without the queue's timeout", 0, false, 0, invoked.Add(-3 * time.Hour), 0, contract.MaxBackoff, 9*time.Hour - receiptMargin},
		{"the queue's timeout bounds it, not an older first receive", 0, false, qv, invoked.Add(-30 * time.Hour), 0, contract.MaxBackoff, contract.MaxBackoff - qv - receiptMargin},
		{"a queue timeout of 12h leaves nothing", 0, false, contract.MaxBackoff, time.Time{}, 0, time.Minute, -receiptMargin},
	} {
		t.Run(c.name, func(t *testing.T) {
			var deadline time.Time
			if c.deadline {
				deadline = invoked.Add(timeout)
			}
			end, ok := receiptEnd(invoked.Add(c.start), deadline, c.qv, c.first)
			if !ok {
				t.Fatal("no end")
			}
			now := invoked.Add(c.elapsed)
			got := within(c.d, end, now)
			if got != c.want {
				t.Fatalf("within(%s) = %s, want %s", c.d, got, c.want)
			}
			if got <= 0 {
				return
			}
			// SQS's rule, for the earliest receive the invocation allows:
			// the queue's timeout before the earliest invocation (its
			// deadline less a function timeout as long as the queue's, or
			// the invocation itself), or the first receive.
			earliest := invoked.Add(-c.qv)
			if c.deadline {
				earliest = deadline.Add(-2 * c.qv)
			}
			if c.qv == 0 {
				earliest = c.first
			}
			if total := now.Add(got).Sub(earliest); total > contract.MaxBackoff-receiptMargin {
				t.Errorf("received %s before the invocation: the receipt's total visibility would be %s, more than 12h less the margin", invoked.Sub(earliest), total)
			}
		})
	}
	if _, ok := receiptEnd(invoked, time.Time{}, 0, time.Time{}); ok {
		t.Error("an end without the queue's timeout or a first receive")
	}
}
