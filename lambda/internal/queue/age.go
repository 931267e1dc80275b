package queue

import (
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

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
	return epochMillis(rec, "SentTimestamp")
}

// epochMillis reads a time attribute of the record (SentTimestamp,
// ApproximateFirstReceiveTimestamp): epoch milliseconds.
func epochMillis(rec *events.SQSMessage, name string) (time.Time, bool) {
	s, ok := rec.Attributes[name]
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
// guard that wraps idempotency.ErrExpired.
func expiredReason(err error, source string) error {
	return fmt.Errorf("%w; its origin time is the %s; %s", err, source, expiredFix)
}
