package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// receiptMargin is taken off the earliest end of a receipt's 12 hours
// (receiptEnd): the change's own call (visibilityCall), the skew between
// the function's clock and SQS's (limits.ClockSkewMargin), the time from
// Lambda's decision to invoke to the handler's start without a deadline to
// bound it (a new execution environment's init, at most 10s), and the
// approximation of SQS's approximate timestamps, with room to spare. A
// minute off a delay of hours changes nothing a backoff is for.
const receiptMargin = time.Minute

// receiptEnd returns the earliest time at which SQS's 12 hours
// (contract.MaxBackoff) of a receipt can end, less receiptMargin: a change
// of its visibility must make the message visible again by then, or SQS
// refuses it. SQS counts a receipt's 12 hours from its receive, which the
// record does not carry, and refuses a change beyond what is left of them
// (SQS API Reference, ChangeMessageVisibility).
//
// The receive came less than the queue's visibility timeout
// (queueVisibility) before the invocation: Lambda invokes a function with a
// message only while it is in flight, and retries a throttled invocation
// only until the message's visibility timeout ends (Lambda operator guide,
// "Handling errors for an SQS event source"), so neither a batching window
// (at most 300s) nor throttling retries put it further back. The
// invocation came no earlier than its deadline less the queue's visibility
// timeout, which Lambda requires to be at least the function's timeout
// (Lambda developer guide, "Creating and configuring an Amazon SQS event
// source mapping"): that bound does not depend on how long a new execution
// environment's init took. Without a deadline (a handler called by other
// means), or with one further than the queue's timeout after the handler's
// start (a function timeout longer than the queue's, which Lambda refuses),
// the handler's start (start) stands for the invocation, and receiptMargin
// covers an init before it. The end is the same for every record of the
// batch, so that the later records of a group, which follow their failed
// record's time, fit their receipts whenever it fits its own (follow).
//
// Without the queue's timeout (queueVisibility ≤ 0: GetQueueAttributes
// failed), the message's first receive (ApproximateFirstReceiveTimestamp),
// which comes no later than this one, bounds it instead: loosely, since
// after the first receive it is the receive of an earlier receipt. With
// neither, nothing bounds it (false).
func receiptEnd(start, deadline time.Time, queueVisibility time.Duration, firstReceive time.Time) (time.Time, bool) {
	var received time.Time
	switch {
	case queueVisibility > 0:
		invoked := start
		if latest := deadline.Add(-queueVisibility); !deadline.IsZero() && latest.Before(invoked) {
			invoked = latest
		}
		received = invoked.Add(-queueVisibility)
	case !firstReceive.IsZero():
		received = firstReceive
	default:
		return time.Time{}, false
	}
	return received.Add(contract.MaxBackoff - receiptMargin), true
}

// within bounds d, a visibility timeout set at now, so that the message is
// visible again by end: in whole seconds, rounded down; zero or less when
// nothing fits.
func within(d time.Duration, end, now time.Time) time.Duration {
	return min(d, end.Sub(now).Truncate(time.Second))
}

// receiptEnd is receiptEnd for rec, in this batch: from the queue's
// visibility timeout (through Config.Visibility, read once per queue), or
// rec's first receive.
func (b *round[T]) receiptEnd(ctx context.Context, rec *events.SQSMessage) (time.Time, error) {
	qv, err := b.h.cfg.Visibility.QueueVisibility(ctx, rec.EventSourceARN)
	why := fmt.Sprintf("the queue's visibility timeout is %s", qv)
	if err != nil {
		qv, why = 0, "GetQueueAttributes: "+err.Error()
	}
	first, _ := epochMillis(rec, "ApproximateFirstReceiveTimestamp")
	end, ok := receiptEnd(b.invoked, b.deadline, qv, first)
	if !ok {
		return time.Time{}, fmt.Errorf("nothing bounds when SQS's 12 hours of this receipt end: the record has no ApproximateFirstReceiveTimestamp, and %s", why)
	}
	return end, nil
}
