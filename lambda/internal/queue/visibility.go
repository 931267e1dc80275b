package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/batch"
)

// VisibilityChanger changes the visibility timeout of a received message
// (handler.VisibilityChanger, the public interface). NewVisibility
// implements it with the AWS SDK's SQS client.
type VisibilityChanger = handler.VisibilityChanger

const (
	// inProgressMargin is how long after the blocking lease's end a
	// delivery found in progress comes back: the time for the holder's
	// complete or release (it has ended by the lease's end; the lease is
	// its invocation's deadline) and limits.ClockSkewMargin.
	inProgressMargin = 2 * time.Second
	// defaultInProgressWait is the default Config.InProgressWait.
	defaultInProgressWait = 5 * time.Second
	// visibilityCall bounds one ChangeMessageVisibility.
	visibilityCall = 2 * time.Second
)

// InProgress brings back sooner a record found IN_PROGRESS elsewhere (r):
// the blocking lease ends at the other invocation's deadline, usually long
// before the queue's visibility timeout (six times the function's timeout
// by default) would make the message visible again. When the lease ends
// within Config.InProgressWait and early enough to leave MinRemaining
// before this invocation's deadline, the record waits for it here and runs
// again, once. Otherwise, with a Config.Visibility, the message's visibility
// is set to the lease's end plus inProgressMargin, when that is sooner than
// the queue's visibility timeout would bring it back, but only while
// its ApproximateReceiveCount is below MaxReceiveCount − 1 (DESIGN.md, "In
// progress deliveries come back when the lease can end"). On a FIFO queue the
// later records of its group, not started behind it, follow it (follow).
func (b *round[T]) InProgress(ctx context.Context, f batch.Fact[T], used *idempotency.Capacity, err error) (idempotency.Result, error) {
	h := b.h
	rec := f.Record.(*events.SQSMessage)
	until, ok := idempotency.LeaseEnd(err)
	if !ok {
		return idempotency.Result{}, err
	}
	back := until.Add(inProgressMargin)
	wait := time.Until(back)
	deadline, hasDeadline := ctx.Deadline()
	if wait > 0 && wait <= h.cfg.InProgressWait && (!hasDeadline || time.Until(deadline)-wait >= h.e.MinRemaining) {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
			res, again := h.e.Run(idempotency.WithCapacity(ctx, used), f.Fact, f.Msg)
			if !errors.Is(again, idempotency.ErrInProgress) {
				return res, again
			}
			err = again
			if until, ok = idempotency.LeaseEnd(err); !ok {
				return res, err
			}
			back = until.Add(inProgressMargin)
		}
	}
	if d, ok := b.showAt(ctx, rec, back); ok {
		b.noteGroup(rec, back, false)
		err = fmt.Errorf("%w; visible again in %s, after the lease ends (ChangeMessageVisibility)", err, d)
	}
	return idempotency.Result{}, err
}

// follow sets the visibility of a record not started behind a record of
// its ordering group (a FIFO message group, or the records without one on a
// FIFO consumer: orderingGroup) found in progress, or failed and delayed by
// its backoff, to that record's: the group comes back together, in order.
func (b *round[T]) follow(ctx context.Context, rec *events.SQSMessage, r *report) {
	gid, ok := orderingGroup(rec, b.h.cfg.FIFO)
	if !ok {
		return
	}
	b.mu.Lock()
	w, held := b.groupBack[gid]
	b.mu.Unlock()
	if !held {
		return
	}
	if w.backoff {
		if d, ok := b.delay(ctx, rec, contract.RoundUp(max(w.at.Sub(b.h.now()), 0))); ok {
			r.Err = fmt.Errorf("%w; visible again in %s with the earlier message of its group, which failed (ChangeMessageVisibility)", r.Err, d)
		}
		return
	}
	if d, ok := b.showAt(ctx, rec, w.at); ok {
		r.Err = fmt.Errorf("%w; visible again in %s with the earlier message of its group (ChangeMessageVisibility)", r.Err, d)
	}
}

// groupWait is when a FIFO group comes back, and why: a record in progress
// (its lease), or one that failed (its backoff).
type groupWait struct {
	at      time.Time
	backoff bool
}

// noteGroup records when the ordering group of rec comes back.
func (b *round[T]) noteGroup(rec *events.SQSMessage, back time.Time, backoff bool) {
	gid, ok := orderingGroup(rec, b.h.cfg.FIFO)
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.groupBack == nil {
		b.groupBack = map[string]groupWait{}
	}
	b.groupBack[gid] = groupWait{back, backoff}
}

// showAt makes rec's message visible again at back (seconds, rounded up),
// when that is sooner than the queue's visibility timeout; it returns the
// timeout set, and false when it set none: no Visibility, an unknown
// MaxReceiveCount, a message on one of its last two receives, a lease that
// ends no sooner than the queue's timeout or after what is left of the
// receipt's 12 hours (receiptEnd), or a failed call (logged: the
// message comes back after the queue's visibility timeout, as without it).
//
// Why not on the last two receives: each early return costs a receive. A
// message is dead-lettered when a receive would exceed MaxReceiveCount, so
// a fact that stays in progress across receives (its holder failing and
// retrying) must not spend its last receives sooner than the queue's own
// timeout would: its receive MaxReceiveCount − 1 ends, as without this,
// after the full visibility timeout, and so does its last, so that the
// time a message spends before the DLQ takes it is never shorter than one
// full visibility timeout after its early returns, which is what a holder
// that runs to its deadline needs to finish.
func (b *round[T]) showAt(ctx context.Context, rec *events.SQSMessage, back time.Time) (time.Duration, bool) {
	h := b.h
	if h.cfg.Visibility == nil || h.cfg.MaxReceiveCount <= 0 || rec.ReceiptHandle == "" {
		return 0, false
	}
	n, err := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
	if err != nil || n >= h.cfg.MaxReceiveCount-1 {
		return 0, false
	}
	now := h.now()
	d := time.Duration(math.Ceil(max(back.Sub(now).Seconds(), 0))) * time.Second
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), visibilityCall)
	defer cancel()
	qv, err := h.cfg.Visibility.QueueVisibility(cctx, rec.EventSourceARN)
	if err == nil && d >= qv {
		return 0, false // the queue's own timeout brings it back no later
	}
	if err == nil {
		if end, _ := receiptEnd(b.invoked, b.deadline, qv, time.Time{}); within(d, end, now) < d {
			return 0, false // past what is left of the receipt's 12 hours: the queue's own timeout brings it back within them
		}
		err = h.cfg.Visibility.ChangeVisibility(cctx, rec.EventSourceARN, rec.ReceiptHandle, d)
	}
	if err != nil {
		h.e.Logger.LogAttrs(ctx, slog.LevelWarn, "visibility",
			slog.String("consumer", h.e.Consumer), slog.String("message_id", rec.MessageId),
			slog.String("reason", "could not bring the message back when the lease ends; it comes back after the queue's visibility timeout: "+err.Error()))
		return 0, false
	}
	return d, true
}
