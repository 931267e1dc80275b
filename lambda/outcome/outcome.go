// Package outcome is the vocabulary every source of the runtime library
// speaks: how a record or a request ended (Outcome), the errors that decide
// it without a store request (ErrBadInput, ErrMisconfigured), the log lines'
// format (NewLogger) and the names of the metrics. It is a leaf: it imports
// nothing of the library, so that the guard, every source, and the
// constructs that name its metrics in alarms and dashboards, read the same
// names from one place.
package outcome

import "errors"

// Outcome is how one record of a batch, or one request, ended.
type Outcome int

// Outcomes, one per row of the per-record outcome table in DESIGN.md. The
// zero value is none of them.
const (
	// Processed: the effect ran and the fact is completed. Deleted.
	Processed Outcome = iota + 1
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
	// or the store failed. Retried on the backoff, then the DLQ.
	Failed
	// LeaseLost: the effect ran but its lease had ended and another worker
	// took the fact over; the stale worker changed nothing in the store.
	// Redelivered; the redelivery finds the newer worker's record.
	LeaseLost
	// NotStarted: too close to the deadline to start, or an earlier record
	// of its group failed. Redelivered. On a message's last receive it goes
	// to the DLQ without ever running, and is counted in
	// MetricDeadLetteredUnstarted too.
	NotStarted
	// Expired: the record is as old as the business window (less the clock
	// skew margin), so its fact's record may have left the window: the
	// effect is not run, since it may have run already. Failed until the DLQ
	// takes it (see idempotency.ErrExpired).
	Expired

	count // one more than the last outcome
)

var names = [count]string{"unknown", "processed", "duplicate", "in_progress", "mismatch", "bad_input", "failed", "lease_lost", "not_started", "expired"}

var metricNames = [count]string{"", "Processed", "Duplicate", "InProgress", "Mismatch", "BadInput", "Failed", "LeaseLost", "NotStarted", "Expired"}

// Outcomes returns every outcome, in the order of the outcome table.
func Outcomes() []Outcome {
	out := make([]Outcome, 0, count-1)
	for o := Processed; o < count; o++ {
		out = append(out, o)
	}
	return out
}

// MetricName is the outcome's count in the metrics ("Processed",
// "Duplicate", …), or "" for a value that is not an outcome.
func (o Outcome) MetricName() string {
	if o < Processed || o >= count {
		return ""
	}
	return metricNames[o]
}

// String is the outcome's name in log lines ("processed", "bad_input", …).
func (o Outcome) String() string {
	if o < Processed || o >= count {
		return "unknown"
	}
	return names[o]
}

// Succeeded reports whether the record is done and its message may be
// deleted.
func (o Outcome) Succeeded() bool { return o == Processed || o == Duplicate }

// ErrBadInput marks input that no retry can fix: not JSON, a bad envelope,
// no key, too large, or what a key function refuses (wrap it with %w). It
// costs no store request and ends as BadInput.
var ErrBadInput = errors.New("bad input")

// ErrMisconfigured marks an error of a record that no retry of the record
// can fix and that is not the message's fault: the deployment is wrong (for
// example a transactional write to a table the consumer does not declare).
// A batch in which any record met one fails as a whole, with a function
// error that the errors alarm sees, instead of a partial failure of that
// record alone.
var ErrMisconfigured = errors.New("misconfigured")
