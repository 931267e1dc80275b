package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// Errors of Forget. Each means nothing was deleted.
var (
	// ErrNoRecord means no record holds the key: there is nothing to forget.
	ErrNoRecord = errors.New("no record holds the key")
	// ErrLiveLease means the record is IN_PROGRESS under a lease that has
	// not ended by the forget's clock less its margin: a worker may be
	// running the effect, and deleting its reservation would let a
	// redelivery run the effect beside it.
	ErrLiveLease = errors.New("the record's lease has not ended: a worker may be running its effect")
)

// forgetCondition is the condition of Forget's delete: a record of this
// release's layout that is COMPLETED, or IN_PROGRESS under a lease that
// ended before :before_ms (the forget's clock less its margin). Forgettable
// is the same rule in Go, for a dry run and to explain a refusal; a change
// to one is a change to the other.
const forgetCondition = "#lay = :layout AND (#st = :completed OR (#st = :in_progress AND #lease < :before_ms))"

// Forgettable returns why rec cannot be forgotten at now with margin, or
// nil: the rule of Forget's condition, for a dry run. A nil rec is
// ErrNoRecord; an IN_PROGRESS record whose lease ends after now less margin
// is ErrLiveLease.
func Forgettable(rec *idempotency.Record, now time.Time, margin time.Duration) error {
	switch {
	case rec == nil:
		return ErrNoRecord
	case rec.Status == idempotency.StatusCompleted:
		return nil
	case rec.Status == idempotency.StatusInProgress && rec.LeaseUntil.UnixMilli() < now.Add(-margin).UnixMilli():
		return nil
	case rec.Status == idempotency.StatusInProgress:
		return fmt.Errorf("%w: it is held until %s, %s from now; forget takes an IN_PROGRESS record only once its lease ended more than the margin (%s) ago",
			ErrLiveLease, rec.LeaseUntil.UTC().Format(time.RFC3339Nano), rec.LeaseUntil.Sub(now).Round(time.Millisecond), margin)
	}
	return fmt.Errorf("%w: status %q", idempotency.ErrUnreadableRecord, rec.Status)
}

// Forget deletes the record of key (a record key, "<namespace>#<key>", as
// idempotency.Guard.Key returns it) so that the fact runs again at its next
// delivery: the operator's escape after a bug fix. It is one conditional
// DeleteItem, so that what is deleted is what the rule allows at the moment
// of the delete, never a record that changed since it was read: a COMPLETED
// record, or an IN_PROGRESS one whose lease ended before now less margin
// (at least 1s, the guard's own allowance for the skew between two
// clocks). DynamoDB's conditions have no clock of their
// own: now is the caller's, sent as a value, and margin covers the skew
// between the caller's clock and the functions' that wrote the lease. A
// live lease is never deleted (ErrLiveLease): its worker may be running the
// effect.
//
// It returns the record it deleted. When the condition fails it reads the
// record once to say why, and deletes nothing: ErrNoRecord, ErrLiveLease,
// or an error wrapping idempotency.ErrUnreadableRecord for an item that is
// not a record of this release's layout.
func (s *Store) Forget(ctx context.Context, key string, now time.Time, margin time.Duration) (*idempotency.Record, error) {
	if s.err != nil {
		return nil, s.err
	}
	if err := s.keyFits(key); err != nil {
		return nil, err
	}
	if margin < limits.ClockSkewMargin {
		return nil, fmt.Errorf("dynamostore: forget margin %s is less than %s, the skew allowed between the caller's clock and the functions'", margin, limits.ClockSkewMargin)
	}
	var out *dynamodb.DeleteItemOutput
	err := retryConflicts(ctx, "forget (DeleteItem)", func() (err error) {
		out, err = s.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName:           aws.String(s.table),
			Key:                 s.ItemKey(key),
			ConditionExpression: aws.String(forgetCondition),
			ExpressionAttributeNames: map[string]string{
				"#lay": attrLayout, "#st": attrStatus, "#lease": attrLease,
			},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":layout":      number(layout),
				":completed":   &types.AttributeValueMemberS{Value: string(idempotency.StatusCompleted)},
				":in_progress": &types.AttributeValueMemberS{Value: string(idempotency.StatusInProgress)},
				":before_ms":   number(now.Add(-margin).UnixMilli()),
			},
			ReturnValues:                        types.ReturnValueAllOld,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		return err
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		if len(out.Attributes) == 0 {
			return nil, ErrNoRecord // not reached: the condition needs an item
		}
		return s.unmarshal(out.Attributes)
	case !errors.As(err, &ccf):
		return nil, err
	}
	var rec *idempotency.Record
	if len(ccf.Item) > 0 {
		rec, err = s.unmarshal(ccf.Item)
	} else {
		rec, err = s.Get(ctx, key) // an emulator that does not return the item
	}
	if err != nil {
		return nil, fmt.Errorf("nothing deleted: %w", err)
	}
	if err := Forgettable(rec, now, margin); err != nil {
		return rec, fmt.Errorf("nothing deleted: %w", err)
	}
	// Changed between the delete and the read (a lease that has just ended,
	// a record completed since): nothing was deleted, ask again.
	return rec, fmt.Errorf("nothing deleted: the record changed while it was being forgotten; run forget again")
}
