package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// ErrReplicatedConflict is wrapped by the error of a write that a
// multi-Region strongly consistent (MRSC) table refused on every attempt
// the write's budget allowed with ReplicatedWriteConflictException: a
// request in another Region kept modifying the item. Nothing was written;
// the guard reports it as a store error, and the record's source delivers
// it again.
var ErrReplicatedConflict = errors.New("the item was being modified by a request in another Region (ReplicatedWriteConflictException) on every attempt")

// conflictWait waits d, or until ctx ends (its error). A test replaces it to
// see the waits without taking them.
var conflictWait = func(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// conflictNow is the clock that the budget is compared with; a test
// replaces it with the clock of its waits.
var conflictNow = time.Now

// retryConflicts sends a write (send) again while the table answers
// ReplicatedWriteConflictException: at most limits.ConflictAttempts times,
// after a wait with full jitter (conflictBackoff), and never past ctx's
// deadline (a wait that would end after it is not taken). DynamoDB rejected
// the conflicting request, so sending it again is safe, as it is for any
// write of the store: each is conditional, and a record that carries the
// write's own owner token, or no record after a release, is recognised as
// the write's own (the SDK's retry after a lost answer). Any other answer is
// returned at once. When the budget ends first, the error wraps
// ErrReplicatedConflict and the last answer, and says how many attempts
// were made and why they stopped.
func retryConflicts(ctx context.Context, op string, send func() error) error {
	var err error
	for attempt := 1; ; attempt++ {
		if err = send(); !isConflict(err) {
			return err
		}
		if attempt == limits.ConflictAttempts {
			return fmt.Errorf("%s: %w (%d attempts, the most the store makes): %w", op, ErrReplicatedConflict, attempt, err)
		}
		wait := conflictBackoff(attempt)
		if d, ok := ctx.Deadline(); ok && !conflictNow().Add(wait).Before(d) {
			return fmt.Errorf("%s: %w (%d attempts; the next, after %s, would pass the write's budget, which ends in %s): %w",
				op, ErrReplicatedConflict, attempt, wait.Round(time.Millisecond), d.Sub(conflictNow()).Round(time.Millisecond), err)
		}
		if werr := conflictWait(ctx, wait); werr != nil {
			return fmt.Errorf("%s: %w (%d attempts; the write's context ended while waiting: %v): %w", op, ErrReplicatedConflict, attempt, werr, err)
		}
	}
}

// conflictBackoff is the wait before the retry that follows attempt (1 for
// the first): a random duration up to limits.ConflictWaitCap(attempt), so
// that the two Regions' writers, which conflicted at the same moment, do
// not again.
func conflictBackoff(attempt int) time.Duration {
	return rand.N(limits.ConflictWaitCap(attempt) + 1)
}

// isConflict reports whether err is DynamoDB's
// ReplicatedWriteConflictException.
func isConflict(err error) bool {
	var rc *types.ReplicatedWriteConflictException
	return errors.As(err, &rc)
}
