package idempotency

import (
	"errors"
	"fmt"
	"time"
)

// Status is the state of an idempotency record.
type Status string

// The two states of a record. A record that does not exist, or whose business
// window has ended, means "never processed".
const (
	// StatusInProgress marks a reservation: one worker holds the key until
	// the record's lease ends, and is running the effect.
	StatusInProgress Status = "IN_PROGRESS"
	// StatusCompleted marks a fact whose effect is done; duplicates within
	// the business window are skipped and get the stored result.
	StatusCompleted Status = "COMPLETED"
)

// Record is one idempotency record: the memory of one business fact.
type Record struct {
	// Key is the namespaced key, "<namespace>#<business key>".
	Key string
	// Status is IN_PROGRESS or COMPLETED.
	Status Status
	// Owner is the random token of the reservation that wrote the record;
	// complete and release are fenced on it.
	Owner string
	// LeaseUntil is when an IN_PROGRESS record may be taken over
	// (millisecond precision). Zero on COMPLETED records.
	LeaseUntil time.Time
	// ExpiresAt is the end of the business window (second precision),
	// compared by the library itself. A reservation sets it to the
	// reservation's time plus the window; completion moves it to the
	// completion's time plus the window, so that a long effect does not
	// shorten its own window.
	ExpiresAt time.Time
	// TTL is when DynamoDB TTL may delete the record (second precision),
	// later than ExpiresAt and moved with it. Never used for correctness.
	TTL time.Time
	// PayloadHash is the hash of the canonical business payload.
	PayloadHash string
	// Result is the small result stored for duplicates.
	Result string
	// Replay is the operator's audit of a deliberate replay (Fact.Replay)
	// when the reservation that wrote the record ran one; "" otherwise.
	Replay string
}

// Holds reports whether the record keeps a reservation for a payload with
// hash from being written at now; the reserve condition is exactly "no
// record holds the key" (DESIGN.md, "Reserve").
//
// An IN_PROGRESS record under a lease that has not ended always holds, whatever
// its business window: another worker may be running the effect. Past its
// lease it is taken over by a redelivery of the same payload; within its
// window it still holds against other content (the same key for other content
// is a mismatch: the crashed effect may have reached a downstream API under
// that key). A COMPLETED record holds until the end of its business window.
// A record of any other status (one this release cannot read) always holds:
// it is never overwritten.
func (r *Record) Holds(hash string, now time.Time) bool {
	windowEnded := r.ExpiresAt.Unix() < now.Unix()
	switch r.Status {
	case StatusCompleted:
		return !windowEnded
	case StatusInProgress:
		if r.LeaseUntil.UnixMilli() >= now.UnixMilli() {
			return true
		}
		return r.PayloadHash != hash && !windowEnded
	}
	return true
}

// Sentinel errors. The guard wraps them with the key and context; test with
// errors.Is.
var (
	// ErrConditionFailed is the store's answer when a live record holds the
	// key; it is carried by a *ConditionFailedError.
	ErrConditionFailed = errors.New("idempotency record condition failed")
	// ErrInProgress means another worker holds a valid reservation for the
	// key: retry later (the message is redelivered after its visibility
	// timeout).
	ErrInProgress = errors.New("in progress elsewhere")
	// ErrPayloadMismatch means a record exists for the key with a different
	// payload hash: the same key was used for different content. The effect
	// never runs; such a message belongs in the DLQ.
	ErrPayloadMismatch = errors.New("payload mismatch: same key, different payload")
	// ErrLeaseLost means the reservation's owner token no longer matches the
	// record: the lease ended and another worker took the key over. The
	// stale worker's complete or release changed nothing.
	ErrLeaseLost = errors.New("lease lost: the record belongs to a newer reservation")
	// ErrInvalidKey means the key is empty, too long, not UTF-8, or holds
	// control characters. It is bad input, never "process without
	// idempotency".
	ErrInvalidKey = errors.New("invalid idempotency key")
	// ErrInvalidPayload means the payload is not valid JSON, so it cannot be
	// hashed canonically.
	ErrInvalidPayload = errors.New("invalid payload")
	// ErrNotStarted means the guard did not reserve the key because the
	// invocation had no more time left than the finishing budget: the effect
	// could not run and then be completed or released before the deadline.
	// Nothing was written; retry later.
	ErrNotStarted = errors.New("not started: too close to the deadline")
	// ErrEffectPanicked means the effect panicked; the reservation was
	// released.
	ErrEffectPanicked = errors.New("effect panicked")
	// ErrTxRejected means a transactional effect's own write was refused by
	// its condition (for example, a business rule); nothing was written.
	ErrTxRejected = errors.New("transactional write rejected by its condition")
	// ErrTxInvalid means the store refused a transactional effect's own
	// writes as invalid (too many of them, an item over the size limit, a
	// malformed expression): nothing was written, and the same writes will
	// be refused again. It is the record's failure, not the store's.
	ErrTxInvalid = errors.New("transactional writes refused as invalid")
	// ErrTxConflict means a transaction collided with another one on the
	// same items; nothing was written and a retry may succeed.
	ErrTxConflict = errors.New("transaction conflict")
	// ErrNoTransactions means the store cannot commit transactional effects.
	ErrNoTransactions = errors.New("store does not support transactional effects")
	// ErrUnreadableRecord means the store holds, under the fact's key, a
	// record this release cannot read: an unknown status, a layout it does
	// not know (written by a newer release), a missing or malformed
	// attribute. Nothing is decided and the record is left as it is; the
	// guard returns it as an ErrStore, so that the invocation fails
	// loudly (a function error) rather than one record quietly, until the
	// record is repaired or a release that reads it is deployed.
	ErrUnreadableRecord = errors.New("unreadable idempotency record")
	// ErrEffect marks an error returned by the effect (or its panic), so
	// that callers can tell the effect's failures from the store's; the
	// error wraps the effect's own, which errors.Is and errors.As find.
	//
	// After a failed effect the guard releases the reservation (deletes the
	// IN_PROGRESS record), so that a redelivery can run the effect at once.
	// When that release fails too (the store is throttled, the finishing
	// budget ran out), the error joins the effect's error and the release's
	// ("release: …"), and the record stays IN_PROGRESS until its lease
	// ends: deliveries of the fact until then are ErrInProgress, and the
	// first after it takes the key over and runs the effect. If the release
	// found that another worker had taken the key over, the error also
	// wraps ErrLeaseLost. For a transactional effect (Guard.RunTx) nothing
	// was written and there is nothing to release.
	ErrEffect = errors.New("effect failed")
	// ErrStore marks a failure of the store itself (throttling, a timeout, a
	// server error): nothing was decided about the fact, and a retry may
	// succeed. The error names the request ("store reserve: …") and wraps
	// the store's own. An error of an ambiguous write (it may have taken
	// effect) is an ErrStore too; the record's condition makes the retry
	// safe.
	ErrStore = errors.New("store failed")
)

// ConditionFailedError is returned by Store.Reserve and TxStore.Commit when a
// live record holds the key. Old is that record when the store returned it
// with the failure (DynamoDB's ReturnValuesOnConditionCheckFailure=ALL_OLD);
// nil when it did not, and the guard then reads it once.
type ConditionFailedError struct {
	Old *Record
}

func (e *ConditionFailedError) Error() string {
	if e.Old == nil {
		return ErrConditionFailed.Error()
	}
	return fmt.Sprintf("%v: held by a %s record", ErrConditionFailed, e.Old.Status)
}

// Is makes errors.Is(err, ErrConditionFailed) true.
func (e *ConditionFailedError) Is(target error) bool { return target == ErrConditionFailed }

// effectError wraps an error returned by the effect (or its panic), so that
// callers can tell the effect's failures from the store's (ErrEffect).
type effectError struct {
	err error
}

func (e *effectError) Error() string { return "effect failed: " + e.err.Error() }

// Unwrap returns the effect's error.
func (e *effectError) Unwrap() error { return e.err }

// Is makes errors.Is(err, ErrEffect) true.
func (e *effectError) Is(target error) bool { return target == ErrEffect }

// storeFailure is a failure of the store itself during op (ErrStore).
type storeFailure struct {
	op  string
	err error
}

func (e *storeFailure) Error() string { return "store " + e.op + ": " + e.err.Error() }

// Unwrap returns the store's error.
func (e *storeFailure) Unwrap() error { return e.err }

// Is makes errors.Is(err, ErrStore) true.
func (e *storeFailure) Is(target error) bool { return target == ErrStore }
