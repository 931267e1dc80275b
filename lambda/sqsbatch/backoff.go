package sqsbatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Defaults of the backoff of failed records (Config.BackoffBase,
// BackoffCap, BackoffFIFOCap). With the default MaxReceiveCount of 5 a
// failing message comes back after its receives 1 to 4 at least 5m, 10m,
// 20m and 30m later (the floors of equal jitter), 65m in all: a
// downstream outage of an hour is ridden out before the dead-letter queue
// takes the message; at most 10m, 20m, 40m and 60m, 130m in all (its
// retry horizon, Backoff.Horizon).
const (
	DefaultBackoffBase    = 10 * time.Minute
	DefaultBackoffCap     = time.Hour
	DefaultBackoffFIFOCap = 15 * time.Minute
	// MaxBackoff is SQS's longest visibility timeout, the most
	// ChangeMessageVisibility takes (12 hours).
	MaxBackoff = 12 * time.Hour
)

// Backoff is the schedule on which a failed record comes back: capped
// exponential with equal jitter. After its n-th receive, the message is
// visible again after Delay(n, u) = c/2 + u·c/2, rounded up to a whole
// second, where c = min(Cap, Base·2^(n−1)) and u is uniform in [0, 1).
//
// Equal jitter rather than full jitter (u·c): full jitter spreads retries
// best, but it can bring a message back at once, which spends a receive
// (and a step towards the dead-letter queue) in the middle of the outage it
// should wait out; equal jitter keeps a floor of c/2, so that the floors
// alone give a horizon the construct can promise, and still spreads the
// retries of a batch that failed together over c/2. AWS's Architecture Blog
// post "Exponential Backoff And Jitter" (Marc Brooker, 2015) compares both:
// full jitter does slightly less work, equal jitter never waits little.
type Backoff struct {
	// Base is the first receive's c; zero or less: no backoff.
	Base time.Duration
	// Cap bounds c.
	Cap time.Duration
}

// Ceiling is the longest Delay after the n-th receive: c.
func (b Backoff) Ceiling(n int) time.Duration {
	if b.Base <= 0 || n < 1 {
		return 0
	}
	c := b.Base
	for i := 1; i < n && c < b.Cap; i++ {
		c *= 2
	}
	return roundUp(min(c, b.Cap))
}

// Delay is how long after its n-th receive (ApproximateReceiveCount) a
// failed message becomes visible again, for u in [0, 1).
func (b Backoff) Delay(n int, u float64) time.Duration {
	c := b.Ceiling(n)
	return roundUp(c/2 + time.Duration(u*float64(c/2)))
}

// Horizon is the longest a message that fails every receive spends in the
// queue before its last receive: the sum of the Ceilings after its receives
// 1 to maxReceiveCount − 1 (no backoff on the last: SQS moves it to the
// dead-letter queue after the queue's visibility timeout).
func (b Backoff) Horizon(maxReceiveCount int) time.Duration {
	var sum time.Duration
	for n := 1; n < maxReceiveCount; n++ {
		sum += b.Ceiling(n)
	}
	return sum
}

// Floor is the least a message that fails every receive spends in the
// queue before its last receive: half the Horizon, rounded up per receive.
func (b Backoff) Floor(maxReceiveCount int) time.Duration {
	var sum time.Duration
	for n := 1; n < maxReceiveCount; n++ {
		sum += b.Delay(n, 0)
	}
	return sum
}

func roundUp(d time.Duration) time.Duration {
	return time.Duration(math.Ceil(d.Seconds())) * time.Second
}

// RetryAfter returns err carrying when to try again: a provider's
// Retry-After, a throttle's hint. An effect that returns it brings its
// record back after d (rounded up to a second) instead of the backoff's
// delay, within the same caps. d ≤ 0 leaves the schedule's delay. Any error
// with a method RetryAfter() time.Duration in its chain does the same.
func RetryAfter(err error, d time.Duration) error {
	return &retryAfter{err: err, d: d}
}

type retryAfter struct {
	err error
	d   time.Duration
}

func (e *retryAfter) Error() string {
	return fmt.Sprintf("%v (retry after %s)", e.err, roundUp(e.d))
}
func (e *retryAfter) Unwrap() error             { return e.err }
func (e *retryAfter) RetryAfter() time.Duration { return e.d }

// retryAfterOf is the retry time err carries, if any.
func retryAfterOf(err error) (time.Duration, bool) {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) && ra.RetryAfter() > 0 {
		return ra.RetryAfter(), true
	}
	return 0, false
}

// backoff sets the visibility of a failed record's message from its
// receive count (Config.backoff), or from the retry time its error carries
// (RetryAfter), within the cap; on a FIFO queue the group waits with it (the
// later records of its group in the batch follow it). Nothing changes on
// the message's last receive (it goes to the dead-letter queue after the
// queue's timeout, as without a backoff), without a Visibility, or with an
// unknown MaxReceiveCount. A failed call is a WARN line: the record stays
// failed and comes back after the queue's timeout.
func (b *batch[T]) backoff(ctx context.Context, rec *events.SQSMessage, r *report) {
	h := b.h
	sched := h.cfg.backoff(rec)
	if sched.Base <= 0 || h.cfg.Visibility == nil || h.cfg.MaxReceiveCount <= 0 || rec.ReceiptHandle == "" {
		return
	}
	n, err := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
	if err != nil || n < 1 || n >= h.cfg.MaxReceiveCount {
		return
	}
	d, why := sched.Delay(n, h.cfg.Random()), "backoff"
	if ra, ok := retryAfterOf(r.err); ok {
		d, why = min(roundUp(ra), roundUp(sched.Cap)), "the effect's RetryAfter"
	}
	d, ok := b.delay(ctx, rec, d)
	if !ok {
		return
	}
	b.noteGroup(rec, time.Now().Add(d), true)
	r.err = fmt.Errorf("%w; visible again in %s (%s, receive %d of %d)", r.err, d, why, n, h.cfg.MaxReceiveCount)
}

// delay makes rec's message visible again after d (at most MaxBackoff),
// unless it is on its last receive; it returns the timeout set, and false
// when it set none (logged when the call failed: the message comes back
// after the queue's visibility timeout).
func (b *batch[T]) delay(ctx context.Context, rec *events.SQSMessage, d time.Duration) (time.Duration, bool) {
	h := b.h
	if h.cfg.Visibility == nil || h.cfg.MaxReceiveCount <= 0 || rec.ReceiptHandle == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"]); err != nil || n >= h.cfg.MaxReceiveCount {
		return 0, false
	}
	d = min(d, MaxBackoff)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), visibilityCall)
	defer cancel()
	if err := h.cfg.Visibility.ChangeVisibility(cctx, rec.EventSourceARN, rec.ReceiptHandle, d); err != nil {
		h.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "visibility",
			slog.String("consumer", h.cfg.Consumer), slog.String("message_id", rec.MessageId),
			slog.String("reason", "could not delay the failed message by its backoff; it comes back after the queue's visibility timeout: "+err.Error()))
		return 0, false
	}
	return d, true
}

// backoff is the schedule of rec's message: BackoffCap, or on a FIFO queue
// the shorter BackoffFIFOCap (an invisible message holds its whole group).
func (c Config) backoff(rec *events.SQSMessage) Backoff {
	b := Backoff{Base: c.BackoffBase, Cap: c.BackoffCap}
	if c.isFIFO(rec) {
		b.Cap = min(b.Cap, c.BackoffFIFOCap)
	}
	return b
}

// isFIFO reports whether rec comes from a FIFO queue, as groups decides.
func (c Config) isFIFO(rec *events.SQSMessage) bool {
	_, grouped := rec.Attributes["MessageGroupId"]
	return c.FIFO || grouped && strings.HasSuffix(rec.EventSourceARN, ".fifo")
}

// defaultRandom is Config.Random's default.
func defaultRandom() float64 { return rand.Float64() }
