package idempotency

import (
	"context"
	"time"
)

// Store keeps idempotency records. Implementations must make Reserve a single
// atomic conditional write: check and record are one step.
type Store interface {
	// Reserve writes rec (IN_PROGRESS) unless a record that Holds
	// (rec.PayloadHash, now) has rec.Key. When one does, it returns a
	// *ConditionFailedError, carrying that record if the store returned it
	// with the failure. When its write replaced a record (one that no
	// longer held the key), it reports that record with ReportReplaced(ctx,
	// old), if it can tell.
	Reserve(ctx context.Context, rec Record, now time.Time) error
	// Get reads the record of key with a strongly consistent read; it
	// returns nil and no error when there is none.
	Get(ctx context.Context, key string) (*Record, error)
	// Complete marks rec.Key COMPLETED with rec.Result, rec.ExpiresAt and
	// rec.TTL (the window starts at completion), only if the record is still
	// owned by rec.Owner; otherwise it returns ErrLeaseLost and changes
	// nothing. Completing a record twice (a retried request) succeeds.
	Complete(ctx context.Context, rec Record) error
	// Release deletes the IN_PROGRESS record of key, only if it is still
	// owned by owner. When the record belongs to another owner it returns
	// ErrLeaseLost and changes nothing; when there is no record (a retried
	// request that had been applied) the key is released and it returns nil.
	Release(ctx context.Context, key, owner string) error
}

// TxStore is a Store that can commit a transactional effect's own writes
// together with the COMPLETED record, all or nothing.
type TxStore interface {
	Store
	// Commit writes rec (COMPLETED) under the same condition as Reserve,
	// together with writes, in one atomic request. writes has the type the
	// store documents. A failed record condition returns a
	// *ConditionFailedError; a failed condition of one of writes returns an
	// error wrapping ErrTxRejected; a collision with another transaction
	// returns one wrapping ErrTxConflict; writes the store refuses as invalid
	// (too many, too large, malformed) return one wrapping ErrTxInvalid,
	// while a refusal of the record's own write stays the store's error
	// (misconfiguration: it must be loud). In every failure nothing is
	// written.
	Commit(ctx context.Context, rec Record, now time.Time, writes any) error
	// AcceptsWrites returns an error wrapping ErrTxInvalid unless writes
	// (usually the zero value of an effect's writes type) has the type
	// Commit takes, so that a handler refuses the wrong type at init
	// rather than on every message.
	AcceptsWrites(writes any) error
}
