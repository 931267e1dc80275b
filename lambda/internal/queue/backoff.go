package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// retryAfterOf is the retry time err carries, if any: an error with a
// method RetryAfter() time.Duration in its chain (sqsbatch.RetryAfter).
func retryAfterOf(err error) (time.Duration, bool) {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) && ra.RetryAfter() > 0 {
		return ra.RetryAfter(), true
	}
	return 0, false
}

// backoff sets the visibility of a failed record's message from its
// receive count (Config.backoff), or from the retry time its error carries
// (RetryAfter), within the receive's ceiling (contract.Backoff.RetryAfter:
// the retry horizon the contract checks holds whatever the effect asks); on
// a FIFO queue the group waits with it (the later records of its group in
// the batch follow it). Nothing changes on the message's last receive (it
// goes to the dead-letter queue after the queue's timeout, as without a
// backoff), without a Visibility, or with an unknown MaxReceiveCount. A
// failed call is a WARN line: the record stays failed and comes back after
// the queue's timeout.
func (b *round[T]) backoff(ctx context.Context, rec *events.SQSMessage, r *report) {
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
	if ra, ok := retryAfterOf(r.Err); ok {
		d, why = sched.RetryAfter(n, ra), "the effect's RetryAfter"
		if asked := contract.RoundUp(ra); d < asked {
			why = fmt.Sprintf("the effect's RetryAfter %s, within receive %d's ceiling, so that the retry horizon stays shorter than the window", contract.Format(asked), n)
		}
	}
	d, ok := b.delay(ctx, rec, d)
	if !ok {
		return
	}
	b.noteGroup(rec, b.h.now().Add(d), true)
	r.Err = fmt.Errorf("%w; visible again in %s (%s, receive %d of %d)", r.Err, d, why, n, h.cfg.MaxReceiveCount)
}

// delay makes rec's message visible again after d, within what is left of
// its receipt's 12 hours (receiptEnd), unless it is on its last receive; it
// returns the timeout set, and false when it set none (logged when nothing
// fits the receipt or the call failed: the message comes back after the
// queue's visibility timeout).
func (b *round[T]) delay(ctx context.Context, rec *events.SQSMessage, d time.Duration) (time.Duration, bool) {
	h := b.h
	if h.cfg.Visibility == nil || h.cfg.MaxReceiveCount <= 0 || rec.ReceiptHandle == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"]); err != nil || n >= h.cfg.MaxReceiveCount {
		return 0, false
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), visibilityCall)
	defer cancel()
	end, err := b.receiptEnd(cctx, rec)
	if err == nil {
		if d = within(d, end, h.now()); d < time.Second {
			err = fmt.Errorf("no time is left of SQS's 12 hours of this receipt, less %s, for a backoff", receiptMargin)
		}
	}
	if err == nil {
		err = h.cfg.Visibility.ChangeVisibility(cctx, rec.EventSourceARN, rec.ReceiptHandle, d)
	}
	if err != nil {
		h.e.Logger.LogAttrs(ctx, slog.LevelWarn, "visibility",
			slog.String("consumer", h.e.Consumer), slog.String("message_id", rec.MessageId),
			slog.String("reason", "could not delay the failed message by its backoff; it comes back after the queue's visibility timeout: "+err.Error()))
		return 0, false
	}
	return d, true
}

// backoff is the schedule of rec's message: BackoffCap, or on a FIFO queue
// the shorter BackoffFIFOCap (an invisible message holds its whole group).
func (c Config) backoff(rec *events.SQSMessage) contract.Backoff {
	b := contract.Backoff{Base: c.BackoffBase, Cap: c.BackoffCap}
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
