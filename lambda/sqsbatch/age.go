package sqsbatch

import (
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// ClockSkewMargin is taken off the guard's Window before a record's age is
// compared with it (see ErrExpired): idempotency.ClockSkewMargin, the skew
// between the clock that stamped the message and the functions' clocks.
const ClockSkewMargin = idempotency.ClockSkewMargin

// ErrExpired marks a record whose message is as old as the business window
// (outcome Expired): its age, on the guard's clock, is at least the guard's
// Window less ClockSkewMargin. Its effect is not run, because it may have
// run already and its record may be gone. It is idempotency.ErrExpired:
// the adapter gives the guard the record's origin (Fact.Sent), and the guard
// checks it before every write that would take the key, so that time spent
// in the store (a retry after a record that expired while it was read, a
// transactional effect before its commit) cannot carry a record past it.
//
// Why the age decides: a message's fact is reserved at R, after the message
// was first sent (its origin), and completed at C ≥ R; its record then holds
// until C + Window. A delivery of that message younger than the window comes
// before origin + Window ≤ C + Window and always meets the record, as a
// duplicate. An older one may come after it: SQS makes a message visible
// again until it is deleted or its retention ends (a whole batch whose
// invocation failed after some of its records completed, a record whose
// delete was lost, a backlog or an outage that delays the receive), so
// maxReceiveCount × the visibility timeout bounds nothing, and no setting
// shorter than the queue's retention closes that gap.
//
// The origin is the earlier of the SNS envelope's Timestamp (the time of the
// Publish, when the body is an SNS notification) and the SQS SentTimestamp
// attribute: a Timestamp later than the SentTimestamp (a producer that wrote
// the envelope itself, or a skewed clock) never makes a message younger. A
// record with neither (SQS always sends SentTimestamp, so only a hand-made
// event lacks it) runs without the check, and its line says so at WARN.
//
// What it costs: a message that waited longer than the window before its
// first receive (a backlog longer than the window) is expired too, although
// it may never have run: choose a Window longer than the longest a message
// may wait in the queue, which is what the default (24 h) gives for most
// queues. An expired record is reported failed on every receive, counted as
// Expired and logged at ERROR, and reaches the dead-letter queue after
// maxReceiveCount receives, where the DLQ alarm sees it.
//
// A redrive from the dead-letter queue sends a new message (new message id,
// new SentTimestamp): with raw message delivery its age starts again at zero
// and it runs, so redrive only messages whose fact did not run (or whose
// effect is idempotent downstream on Reservation.Key); with SNS envelopes
// the Timestamp travels in the body, so a redriven message is still as old
// as it was and expires again: find out from the business system whether
// its fact happened, and replay on purpose those that did not
// (ReplayAttribute: idemctl redrive --replay-expired). Raising Window does not make
// such a message safe to run: its fact's record may have expired under the
// old window already, and the guard would then run the effect again.
//
// With raw message delivery the origin is the SQS enqueue time of each
// delivery that SNS makes into the queue: a late duplicate delivery by SNS
// itself (at least once, too) starts at age zero. Envelopes carry the
// publish time and close that gap; raw delivery leaves it to the key and the
// window.
var ErrExpired = idempotency.ErrExpired

// expiredFix is what the line of an expired record adds to the guard's
// reason.
const expiredFix = "it is reported failed and reaches the dead-letter queue after maxReceiveCount receives. " +
	"Fix: a Window longer than the longest a message can wait in the queue (a backlog, redeliveries after the visibility timeout), " +
	"or, if the message is older than any fact record can be, settle it from the dead-letter queue: check that its fact did not happen, then idemctl redrive --replay-expired"

// errNoOrigin is the warning of a record that carries no origin time.
const errNoOrigin = "the record carries no origin time (neither a time in its body, an SNS envelope's Timestamp, an EventBridge event's time or an S3 record's eventTime, nor the SQS SentTimestamp attribute, which SQS always sends): run without the age check"

// origin returns when the record's message was first sent, and what says
// so: the earlier of the SNS publish time of an envelope (published, zero
// when there is none) and SQS's SentTimestamp (epoch milliseconds). A
// publish always comes before its enqueue, so the earlier is the truer; and
// the envelope's Timestamp is in the body, which any producer allowed to
// send to the queue writes: a Timestamp in the future must not make an old
// message young.
//
// bodySource names what published is: the SNS Timestamp, an EventBridge
// event's time, an S3 record's eventTime. Each is in the body, which the
// producer (or whoever may send to the queue) writes, and each comes before
// the enqueue when its service wrote it.
func origin(rec *events.SQSMessage, published time.Time, bodySource string) (time.Time, string, bool) {
	sent, hasSent := sentTimestamp(rec)
	switch {
	case !published.IsZero() && (!hasSent || !sent.Before(published)):
		return published, bodySource, true
	case hasSent:
		return sent, "SQS SentTimestamp", true
	}
	return time.Time{}, "", false
}

// sentTimestamp reads the record's SentTimestamp attribute.
func sentTimestamp(rec *events.SQSMessage) (time.Time, bool) {
	s, ok := rec.Attributes["SentTimestamp"]
	if !ok {
		return time.Time{}, false
	}
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

// expiredReason adds the origin's source and the fix to an error of the
// guard that wraps ErrExpired.
func expiredReason(err error, source string) error {
	return fmt.Errorf("%w; its origin time is the %s; %s", err, source, expiredFix)
}
