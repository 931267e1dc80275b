package sqsbatch

import (
	"errors"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// Outcome is how one record of a batch ended.
type Outcome int

// Outcomes, one per row of the per-record outcome table in DESIGN.md.
const (
	// Processed: the effect ran and the fact is completed. Deleted.
	Processed Outcome = iota
	// Duplicate: the fact was already completed (in the store, the cache, or
	// earlier in the same batch). Deleted without running the effect.
	Duplicate
	// InProgress: another worker holds the fact's reservation. Redelivered
	// after the visibility timeout.
	InProgress
	// Mismatch: the key was completed or reserved with a different payload.
	// Failed until the DLQ takes it.
	Mismatch
	// BadInput: not JSON, bad envelope, no key, too large. Failed until the
	// DLQ takes it.
	BadInput
	// Failed: the effect failed or panicked (the reservation was released),
	// or the store failed. Retried on the backoff (Backoff, RetryAfter),
	// then the DLQ.
	Failed
	// LeaseLost: the effect ran but its lease had ended and another worker
	// took the fact over; the stale worker changed nothing in the store.
	// Redelivered; the redelivery finds the newer worker's record.
	LeaseLost
	// NotStarted: too close to the deadline to start, or an earlier message
	// of its FIFO group failed. Redelivered. On the message's last receive
	// (Config.MaxReceiveCount) it goes to the DLQ without ever running, and
	// is counted in MetricDeadLetteredUnstarted too.
	NotStarted
	// Expired: the message is as old as the business window (its age, from
	// its SNS publish time or its SQS SentTimestamp, is at least the guard's
	// Window less ClockSkewMargin), so its fact's record may have left the
	// window: the effect is not run, since it may have run already. Failed
	// until the DLQ takes it (see ErrExpired).
	Expired

	numOutcomes
)

var outcomeNames = [numOutcomes]string{"processed", "duplicate", "in_progress", "mismatch", "bad_input", "failed", "lease_lost", "not_started", "expired"}

// metricNames are the Embedded Metric Format names of the outcomes.
var metricNames = [numOutcomes]string{"Processed", "Duplicate", "InProgress", "Mismatch", "BadInput", "Failed", "LeaseLost", "NotStarted", "Expired"}

// Names of the handler's CloudWatch metrics, which it writes as one Embedded
// Metric Format line per batch, in Config.MetricsNamespace: a count per
// outcome (Outcome.MetricName) and the batch's duration, with one dimension,
// MetricDimension, whose value is Config.Consumer.
const (
	// MetricDimension is the metrics' dimension: the consumer's name.
	MetricDimension = "Consumer"
	// MetricBatchDuration is the time the handler took over a batch, in
	// milliseconds.
	MetricBatchDuration = "BatchDuration"
	// MetricDeadLetteredUnstarted counts the records not started on their
	// message's last receive (ApproximateReceiveCount at least
	// Config.MaxReceiveCount): SQS moves them to the dead-letter queue
	// without their effect ever having run. On a FIFO queue these are the
	// messages behind a failing message of their group, received and
	// reported failed with it each time until they reach the DLQ together.
	// Only counted when Config.MaxReceiveCount is set.
	MetricDeadLetteredUnstarted = "DeadLetteredUnstarted"
)

// Outcomes returns every outcome, in the order of the outcome table.
func Outcomes() []Outcome {
	out := make([]Outcome, numOutcomes)
	for i := range out {
		out[i] = Outcome(i)
	}
	return out
}

// MetricName is the outcome's count in the handler's metrics ("Processed",
// "Duplicate", …), or "" for a value that is not an outcome.
func (o Outcome) MetricName() string {
	if o < 0 || o >= numOutcomes {
		return ""
	}
	return metricNames[o]
}

func (o Outcome) String() string {
	if o < 0 || o >= numOutcomes {
		return "unknown"
	}
	return outcomeNames[o]
}

// Succeeded reports whether the record is done and its message may be
// deleted.
func (o Outcome) Succeeded() bool { return o == Processed || o == Duplicate }

// classify maps the guard's answer to an outcome.
func classify(res idempotency.Result, err error) Outcome {
	switch {
	case errors.Is(err, ErrExpired):
		return Expired
	case res.Outcome == idempotency.Duplicate:
		return Duplicate
	case res.Outcome == idempotency.Processed:
		return Processed
	case errors.Is(err, idempotency.ErrInvalidKey), errors.Is(err, idempotency.ErrInvalidPayload), errors.Is(err, ErrBadInput):
		return BadInput
	case errors.Is(err, idempotency.ErrPayloadMismatch):
		return Mismatch
	case errors.Is(err, idempotency.ErrInProgress):
		return InProgress
	case errors.Is(err, idempotency.ErrLeaseLost):
		return LeaseLost
	case errors.Is(err, errNotStarted), errors.Is(err, idempotency.ErrNotStarted):
		return NotStarted
	}
	return Failed
}
