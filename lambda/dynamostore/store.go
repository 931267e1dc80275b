// Package dynamostore is the DynamoDB implementation of idempotency.Store and
// idempotency.TxStore.
//
// One item per business fact, partition key "pk" (a string). Reserve is one
// conditional PutItem that asks for the old item on a failed condition
// (ReturnValuesOnConditionCheckFailure=ALL_OLD) and for the item it replaced
// on success (ReturnValues=ALL_OLD); complete and release are conditioned on
// the reservation's owner token; transactional effects commit their writes
// and the COMPLETED record in one TransactWriteItems.
//
// The table the construct creates has a string partition key named "pk" and
// no sort key, with TTL enabled on the attribute "ttl" so that DynamoDB
// deletes old records (the library never relies on that deletion). A shared
// table of the app's own design (its own key names, a sort key, its own TTL
// attribute) is described with Options.
package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// Attribute names of a record, from package schema (the light package that a
// CDK app imports for them). The partition key of the construct's table is
// "pk"; the TTL attribute to enable on it is "ttl".
const (
	attrStatus  = schema.Status
	attrOwner   = schema.Owner
	attrLease   = schema.Lease
	attrExpires = schema.Expires
	attrHash    = schema.Hash
	attrResult  = schema.Result
	attrLayout  = schema.Layout
	attrReplay  = schema.Replay
)

// layout is the version of the record's layout (its attributes and what
// they mean) that this release writes, in the attribute "layout". Every
// record carries it. A record of another layout is not read as if it were
// this one: reading it fails with an error wrapping
// idempotency.ErrUnreadableRecord (a store error, retried) until a release
// that reads it is deployed. A later release that changes the layout must
// still read layout 1. The optional "replay" attribute (an operator's
// replay, idempotency.Record.Replay) is of layout 1: a release before it
// reads the record without it, and decides the same. The payload hash carries its own version ("v2:…";
// see idempotency.Guard.Fact).
const layout = schema.LayoutVersion

// MaxTxWrites is how many writes a transactional effect may add: DynamoDB
// allows 100 actions per transaction and the record takes one. Their items
// and the record's may weigh 4 MB in all; a larger transaction is refused
// before it is sent (idempotency.ErrTxInvalid).
const MaxTxWrites = 99

// API is the part of the DynamoDB client the store calls; *dynamodb.Client
// implements it.
type API interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Store keeps idempotency records in one DynamoDB table. It is safe for
// concurrent use.
type Store struct {
	api   API
	table string

	partition, sort, ttl string                        // attribute names; sort is "" without a sort key
	sortValue            func(namespace string) string // WithSortKey
	partitionValue       func(namespace string) string // WithKeyInSortKey
	err                  error                         // a design the store cannot use

	// The expression attribute names of the reserve and of the complete,
	// built once: every request reads them, none changes them.
	reserveNames, completeNames map[string]string
}

// New returns a Store over the table named table, of the construct's design
// unless opts say otherwise. Options the store cannot use (a key or TTL
// attribute named like an attribute of the record, two roles on one
// attribute) make a Store whose every request fails with the reason (see
// Err): the misconfiguration is loud, a store error, and never writes.
func New(api API, table string, opts ...Option) *Store {
	s := &Store{api: api, table: table, partition: schema.Key, ttl: schema.TTL}
	for _, o := range opts {
		o(s)
	}
	s.err = s.check()
	s.reserveNames = map[string]string{"#pk": s.partition, "#exp": attrExpires, "#st": attrStatus, "#lease": attrLease, "#hash": attrHash}
	s.completeNames = map[string]string{"#st": attrStatus, "#lease": attrLease, "#res": attrResult, "#own": attrOwner, "#exp": attrExpires, "#ttl": s.ttl}
	return s
}

// Err returns why the store cannot use the table's design its options
// describe, or nil. Check it at init, before the first record.
func (s *Store) Err() error { return s.err }

// keyFits returns why the table's design cannot hold the record key key,
// or nil: with the record key in the sort key, a key longer than
// limits.MaxSortKeyBytes. The error wraps idempotency.ErrInvalidKey: bad input,
// not worth a retry, and not a store outage.
func (s *Store) keyFits(key string) error {
	if s.partitionValue != nil && len(key) > limits.MaxSortKeyBytes {
		return fmt.Errorf("%w: %d bytes with the namespace, more than the %d of a DynamoDB sort key, which holds the record key in the table's design (WithKeyInSortKey %q)", idempotency.ErrInvalidKey, len(key), limits.MaxSortKeyBytes, s.sort)
	}
	return nil
}

// check returns why the store cannot use its design, or nil.
func (s *Store) check() error {
	var problems []string
	roles := []struct{ role, name string }{{"partition key", s.partition}, {"sort key", s.sort}, {"TTL attribute", s.ttl}}
	for i, r := range roles {
		if r.name == "" {
			continue
		}
		if schema.Taken(r.name) {
			problems = append(problems, fmt.Sprintf("the %s %q is an attribute of the record (package schema): give the table's own name", r.role, r.name))
		}
		for _, o := range roles[i+1:] {
			if o.name == r.name {
				problems = append(problems, fmt.Sprintf("the %s and the %s are both %q: give each its own attribute", r.role, o.role, r.name))
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("dynamostore: table %s: %s", s.table, strings.Join(problems, "; "))
	}
	return nil
}

// The reserve condition, exactly "no record holds the key" (see
// idempotency.Record.Holds): no record; or a COMPLETED one past its business
// window; or an IN_PROGRESS one past its lease, for the same payload or past
// its window. A live lease always blocks, whatever the window.
const reserveCondition = "attribute_not_exists(#pk)" +
	" OR (#st = :completed AND #exp < :now_s)" +
	" OR (#st = :in_progress AND #lease < :now_ms AND (#hash = :hash OR #exp < :now_s))"

func reserveValues(rec idempotency.Record, now time.Time) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		":now_s":       number(now.Unix()),
		":now_ms":      number(now.UnixMilli()),
		":in_progress": &types.AttributeValueMemberS{Value: string(idempotency.StatusInProgress)},
		":completed":   &types.AttributeValueMemberS{Value: string(idempotency.StatusCompleted)},
		":hash":        &types.AttributeValueMemberS{Value: rec.PayloadHash},
	}
}

// reservePut is the conditional put that takes a fact's key with rec, as
// the reserve's PutItem and as the first action of a commit's transaction:
// rec's item under the reserve condition, returning the record that holds
// the key when the condition fails.
func (s *Store) reservePut(rec idempotency.Record, now time.Time) *types.Put {
	return &types.Put{
		TableName:                           aws.String(s.table),
		Item:                                s.marshal(rec),
		ConditionExpression:                 aws.String(reserveCondition),
		ExpressionAttributeNames:            s.reserveNames,
		ExpressionAttributeValues:           reserveValues(rec, now),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// Reserve implements idempotency.Store with one conditional PutItem.
func (s *Store) Reserve(ctx context.Context, rec idempotency.Record, now time.Time) error {
	if s.err != nil {
		return s.err
	}
	if err := s.keyFits(rec.Key); err != nil {
		return err
	}
	put := s.reservePut(rec, now)
	item := put.Item
	var out *dynamodb.PutItemOutput
	err := retryConflicts(ctx, "reserve (PutItem)", func() (err error) {
		out, err = s.api.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:                           put.TableName,
			Item:                                put.Item,
			ConditionExpression:                 put.ConditionExpression,
			ExpressionAttributeNames:            put.ExpressionAttributeNames,
			ExpressionAttributeValues:           put.ExpressionAttributeValues,
			ReturnValuesOnConditionCheckFailure: put.ReturnValuesOnConditionCheckFailure,
			// The record replaced, if any (no read capacity is consumed): a
			// lapsed reservation taken over is reported to the guard.
			ReturnValues:           types.ReturnValueAllOld,
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
		})
		return err
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		reported(ctx, false, nil, idempotency.Capacity{Write: writeUnits(itemSize(item), itemSize(ccf.Item))})
		return s.conditionFailed(ccf.Item)
	case err == nil:
		reported(ctx, false, one(out.ConsumedCapacity), idempotency.Capacity{Write: writeUnits(itemSize(item), itemSize(out.Attributes))})
		if len(out.Attributes) > 0 {
			if old, uerr := s.unmarshal(out.Attributes); uerr == nil {
				idempotency.ReportReplaced(ctx, old)
			}
		}
	}
	return err
}

// Get implements idempotency.Store with a strongly consistent GetItem.
func (s *Store) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	if s.err != nil {
		return nil, s.err
	}
	if err := s.keyFits(key); err != nil {
		return nil, err
	}
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:              aws.String(s.table),
		Key:                    s.ItemKey(key),
		ConsistentRead:         aws.Bool(true),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	})
	if err != nil {
		return nil, err
	}
	reported(ctx, true, one(out.ConsumedCapacity), idempotency.Capacity{Read: readUnits(itemSize(out.Item))})
	if len(out.Item) == 0 {
		return nil, nil
	}
	return s.unmarshal(out.Item)
}

// Complete implements idempotency.Store with an UpdateItem conditioned on
// the owner token. It moves the business window and the TTL to rec's.
func (s *Store) Complete(ctx context.Context, rec idempotency.Record) error {
	if s.err != nil {
		return s.err
	}
	update := "SET #st = :completed, #exp = :exp, #ttl = :ttl REMOVE #lease, #res"
	values := map[string]types.AttributeValue{
		":completed": &types.AttributeValueMemberS{Value: string(idempotency.StatusCompleted)},
		":owner":     &types.AttributeValueMemberS{Value: rec.Owner},
		":exp":       number(rec.ExpiresAt.Unix()),
		":ttl":       number(rec.TTL.Unix()),
	}
	if rec.Result != "" {
		update = "SET #st = :completed, #exp = :exp, #ttl = :ttl, #res = :result REMOVE #lease"
		values[":result"] = &types.AttributeValueMemberS{Value: rec.Result}
	}
	var out *dynamodb.UpdateItemOutput
	err := retryConflicts(ctx, "complete (UpdateItem)", func() (err error) {
		out, err = s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:        aws.String(s.table),
			Key:              s.ItemKey(rec.Key),
			UpdateExpression: aws.String(update),
			// A complete that the SDK retried after it was applied finds its own
			// COMPLETED record: the owner condition holds again.
			ConditionExpression:       aws.String("#own = :owner"),
			ExpressionAttributeNames:  s.completeNames,
			ExpressionAttributeValues: values,
			ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal,
		})
		return err
	})
	// The item before: the reservation's; after: the completed record.
	before := rec
	before.Status, before.Result, before.LeaseUntil = idempotency.StatusInProgress, "", rec.ExpiresAt
	computed := idempotency.Capacity{Write: writeUnits(s.recordSize(before), s.recordSize(rec))}
	reportedWrite(ctx, err, func() *types.ConsumedCapacity { return out.ConsumedCapacity }, computed)
	return fenced(err)
}

// Release implements idempotency.Store with a DeleteItem conditioned on the
// owner token and the IN_PROGRESS status. When the condition fails, one
// consistent GetItem tells a lost lease (another owner's record) from a
// release that was already applied (no record: a request the SDK retried
// after its answer was lost).
func (s *Store) Release(ctx context.Context, key, owner string) error {
	if s.err != nil {
		return s.err
	}
	var out *dynamodb.DeleteItemOutput
	err := retryConflicts(ctx, "release (DeleteItem)", func() (err error) {
		out, err = s.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName:                aws.String(s.table),
			Key:                      s.ItemKey(key),
			ConditionExpression:      aws.String("#own = :owner AND #st = :in_progress"),
			ExpressionAttributeNames: map[string]string{"#st": attrStatus, "#own": attrOwner},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":owner":       &types.AttributeValueMemberS{Value: owner},
				":in_progress": &types.AttributeValueMemberS{Value: string(idempotency.StatusInProgress)},
			},
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
		})
		return err
	})
	// The item deleted is a reservation of this key and owner; its size is
	// that of one with a payload hash of this release's length.
	computed := idempotency.Capacity{Write: writeUnits(s.recordSize(reservationOf(key, owner)))}
	reportedWrite(ctx, err, func() *types.ConsumedCapacity { return out.ConsumedCapacity }, computed)
	if err = fenced(err); !errors.Is(err, idempotency.ErrLeaseLost) {
		return err
	}
	rec, gerr := s.Get(ctx, key)
	switch {
	case gerr != nil:
		return fmt.Errorf("%w (the record could not be read to tell: %v)", err, gerr)
	case rec == nil:
		return nil
	}
	return err
}

// AcceptsWrites implements idempotency.TxStore: writes must be
// []types.TransactWriteItem.
func (s *Store) AcceptsWrites(writes any) error {
	if _, ok := writes.([]types.TransactWriteItem); !ok {
		return fmt.Errorf("%w: dynamostore: writes are %T, want []types.TransactWriteItem", idempotency.ErrTxInvalid, writes)
	}
	return nil
}

// Commit implements idempotency.TxStore: the COMPLETED record, under the
// reserve condition, and writes ([]types.TransactWriteItem, at most
// MaxTxWrites) in one TransactWriteItems.
func (s *Store) Commit(ctx context.Context, rec idempotency.Record, now time.Time, writes any) error {
	if s.err != nil {
		return s.err
	}
	if err := s.keyFits(rec.Key); err != nil {
		return err
	}
	items, ok := writes.([]types.TransactWriteItem)
	if !ok && writes != nil {
		return fmt.Errorf("%w: dynamostore: writes are %T, want []types.TransactWriteItem", idempotency.ErrTxInvalid, writes)
	}
	if len(items) > MaxTxWrites {
		return fmt.Errorf("%w: dynamostore: %d transactional writes, at most %d (DynamoDB allows %d actions and the record takes one)", idempotency.ErrTxInvalid, len(items), MaxTxWrites, limits.MaxTxActions)
	}
	all := make([]types.TransactWriteItem, 0, len(items)+1)
	all = append(all, types.TransactWriteItem{Put: s.reservePut(rec, now)})
	all = append(all, items...)
	if n := txBytes(all); n > limits.MaxTxBytes {
		return fmt.Errorf("%w: dynamostore: the transaction's items are at least %d bytes (the record's and the writes': a put's item, an update's or delete's key), more than the %d bytes DynamoDB allows a transaction's items (TransactWriteItems, 4 MB); write fewer or smaller items", idempotency.ErrTxInvalid, n, limits.MaxTxBytes)
	}
	if err := s.oneActionPerItem(all); err != nil {
		return err
	}
	out, err := s.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: all, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	var tce *types.TransactionCanceledException
	switch {
	case err == nil:
		reported(ctx, false, out.ConsumedCapacity, txUnits(all))
		return nil
	case multipleOperationsOnOneItem(err):
		// Two actions on one item that the check above could not see (two
		// puts on a table whose key it does not know, a table named once by
		// name and once by ARN): DynamoDB refuses the whole request.
		return fmt.Errorf("%w: dynamostore: %v", idempotency.ErrTxInvalid, err)
	case !errors.As(err, &tce):
		return err
	}
	reported(ctx, false, nil, txUnits(all))
	return s.cancelled(tce)
}

// oneActionPerItem returns an error wrapping idempotency.ErrTxInvalid when
// two actions of the transaction all (the record's put first) act on one
// item: DynamoDB refuses such a request as a whole with a ValidationException
// ("Transaction request cannot include multiple operations on one item"),
// which would otherwise come back as a store outage. An effect write on the
// record's own item is such a pair.
//
// An action's item is its table and its key. The key of an update, delete or
// condition check is its Key; a put's is read from its Item by the key
// attributes of its table: this store's own key for the idempotency table,
// and for another table the attribute names of a Key that another action of
// the transaction gives for it. A put on a table that no other action keys
// is not checked here; DynamoDB's refusal is then mapped to ErrTxInvalid
// after sending.
func (s *Store) oneActionPerItem(all []types.TransactWriteItem) error {
	type action struct {
		table string
		key   map[string]types.AttributeValue // nil for a put: its item
		item  map[string]types.AttributeValue
	}
	actions := make([]action, len(all))
	keyNames := map[string][]string{tableName(s.table): s.KeyAttributes()}
	for i, a := range all {
		var act action
		switch {
		case a.Put != nil:
			act = action{table: tableName(aws.ToString(a.Put.TableName)), item: a.Put.Item}
		case a.Update != nil:
			act = action{table: tableName(aws.ToString(a.Update.TableName)), key: a.Update.Key}
		case a.Delete != nil:
			act = action{table: tableName(aws.ToString(a.Delete.TableName)), key: a.Delete.Key}
		case a.ConditionCheck != nil:
			act = action{table: tableName(aws.ToString(a.ConditionCheck.TableName)), key: a.ConditionCheck.Key}
		default:
			continue // no action: DynamoDB refuses it, with its own message
		}
		if _, known := keyNames[act.table]; !known && len(act.key) > 0 {
			for name := range act.key {
				keyNames[act.table] = append(keyNames[act.table], name)
			}
		}
		actions[i] = act
	}
	seen := map[string]int{}
	for i, act := range actions {
		if act.table == "" {
			continue
		}
		names, known := keyNames[act.table]
		if !known {
			continue // a put on a table no action keys: its key is not known here
		}
		from := act.key
		if from == nil {
			from = act.item
		}
		id, ok := itemID(act.table, names, from)
		if !ok {
			continue // a key attribute missing: DynamoDB refuses the action itself
		}
		if j, dup := seen[id]; dup {
			if j == 0 {
				return fmt.Errorf("%w: dynamostore: write %d acts on the idempotency record's own item (table %s, %s): an effect must not write the record; DynamoDB refuses two actions on one item in a transaction", idempotency.ErrTxInvalid, i-1, act.table, describeKey(names, from))
			}
			return fmt.Errorf("%w: dynamostore: writes %d and %d act on one item (table %s, %s): DynamoDB refuses two actions on one item in a transaction; merge them into one", idempotency.ErrTxInvalid, j-1, i-1, act.table, describeKey(names, from))
		}
		seen[id] = i
	}
	return nil
}

// tableName is the name of a table given by name or by ARN
// ("arn:aws:dynamodb:<region>:<account>:table/<name>").
func tableName(t string) string {
	if strings.HasPrefix(t, "arn:") {
		if i := strings.Index(t, ":table/"); i >= 0 {
			return t[i+len(":table/"):]
		}
	}
	return t
}

// itemID identifies the item of table whose key attributes names have the
// values they have in attrs; false when one is missing or not a key type.
func itemID(table string, names []string, attrs map[string]types.AttributeValue) (string, bool) {
	names = slices.Sorted(slices.Values(names))
	var b strings.Builder
	b.WriteString(table)
	for _, name := range names {
		b.WriteByte(0)
		b.WriteString(name)
		switch v := attrs[name].(type) {
		case *types.AttributeValueMemberS:
			b.WriteString("\x00S")
			b.WriteString(v.Value)
		case *types.AttributeValueMemberN:
			b.WriteString("\x00N")
			b.WriteString(v.Value)
		case *types.AttributeValueMemberB:
			b.WriteString("\x00B")
			b.Write(v.Value)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// describeKey writes the key attributes names of attrs for a message.
func describeKey(names []string, attrs map[string]types.AttributeValue) string {
	parts := make([]string, 0, len(names))
	for _, name := range slices.Sorted(slices.Values(names)) {
		switch v := attrs[name].(type) {
		case *types.AttributeValueMemberS:
			parts = append(parts, fmt.Sprintf("%s %q", name, v.Value))
		case *types.AttributeValueMemberN:
			parts = append(parts, fmt.Sprintf("%s %s", name, v.Value))
		default:
			parts = append(parts, name+" (binary)")
		}
	}
	return "key " + strings.Join(parts, ", ")
}

// multipleOperationsOnOneItem reports whether err is DynamoDB's request-level
// refusal of a transaction with two actions on one item.
func multipleOperationsOnOneItem(err error) bool {
	var api interface {
		ErrorCode() string
		ErrorMessage() string
	}
	return errors.As(err, &api) && api.ErrorCode() == "ValidationException" &&
		strings.Contains(strings.ToLower(api.ErrorMessage()), "multiple operations on one item")
}

// txUnits computes what a transaction's writes consume: two writes of each
// item, of its actionSize (at least one unit).
func txUnits(all []types.TransactWriteItem) idempotency.Capacity {
	var w float64
	for _, a := range all {
		if n, ok := actionSize(a); ok {
			w += 2 * writeUnits(n)
		}
	}
	return idempotency.Capacity{Write: w}
}

// txBytes is the least aggregate size of a transaction's items, which
// DynamoDB bounds to limits.MaxTxBytes: the sum of their actionSize.
func txBytes(all []types.TransactWriteItem) int {
	total := 0
	for _, a := range all {
		n, _ := actionSize(a)
		total += n
	}
	return total
}

// actionSize is the size of the item an action writes, as far as it is
// known here: a put's is its item's; an update's, delete's or condition
// check's item is not known, and counts by its key. ok is false for an
// entry with no action.
func actionSize(a types.TransactWriteItem) (n int, ok bool) {
	switch {
	case a.Put != nil:
		return itemSize(a.Put.Item), true
	case a.Update != nil:
		return itemSize(a.Update.Key), true
	case a.Delete != nil:
		return itemSize(a.Delete.Key), true
	case a.ConditionCheck != nil:
		return itemSize(a.ConditionCheck.Key), true
	}
	return 0, false
}

// reservationOf is a reservation of key by owner, as Reserve writes it, for
// its size.
func reservationOf(key, owner string) idempotency.Record {
	now := time.Now()
	return idempotency.Record{
		Key: key, Owner: owner, Status: idempotency.StatusInProgress, PayloadHash: hashSizeExample,
		LeaseUntil: now, ExpiresAt: now, TTL: now,
	}
}

// hashSizeExample is a payload hash of this release's length ("v2:" or
// "k2:" and 43 characters of base64url SHA-256 or HMAC-SHA-256).
const hashSizeExample = "v2:0000000000000000000000000000000000000000000"

// cancelled tells, from a cancelled transaction's reasons (one per action,
// the record first), a duplicate from a rejected or invalid effect write or
// a conflict. A refusal of the record's own write (other than its
// condition) stays the store's error: the table is misconfigured.
func (s *Store) cancelled(tce *types.TransactionCanceledException) error {
	reasons := tce.CancellationReasons
	if len(reasons) > 0 && aws.ToString(reasons[0].Code) == "ConditionalCheckFailed" {
		return s.conditionFailed(reasons[0].Item)
	}
	for i, r := range reasons {
		switch code := aws.ToString(r.Code); {
		case code == "TransactionConflict":
			return fmt.Errorf("%w: %v", idempotency.ErrTxConflict, tce)
		case i == 0:
		case code == "ConditionalCheckFailed":
			return fmt.Errorf("%w: write %d: %s", idempotency.ErrTxRejected, i-1, aws.ToString(r.Message))
		case code == "ValidationError":
			return fmt.Errorf("%w: write %d: %s", idempotency.ErrTxInvalid, i-1, aws.ToString(r.Message))
		}
	}
	return tce
}

// conditionFailed returns the *ConditionFailedError for a failed record
// condition, with the old record if the server returned it.
func (s *Store) conditionFailed(item map[string]types.AttributeValue) error {
	if len(item) == 0 {
		return &idempotency.ConditionFailedError{}
	}
	old, err := s.unmarshal(item)
	if err != nil {
		// Not a condition failure the guard could decide on: the record
		// that failed it cannot be read (a store error, loud).
		return fmt.Errorf("the record that failed the condition: %w", err)
	}
	return &idempotency.ConditionFailedError{Old: old}
}

// fenced maps a failed owner condition to ErrLeaseLost.
func fenced(err error) error {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return idempotency.ErrLeaseLost
	}
	return err
}

func number(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func (s *Store) marshal(rec idempotency.Record) map[string]types.AttributeValue {
	item := make(map[string]types.AttributeValue, 10) // the key's attributes and the record's
	s.putKey(item, rec.Key)
	item[attrStatus] = &types.AttributeValueMemberS{Value: string(rec.Status)}
	item[attrOwner] = &types.AttributeValueMemberS{Value: rec.Owner}
	item[attrExpires] = number(rec.ExpiresAt.Unix())
	item[s.ttl] = number(rec.TTL.Unix())
	item[attrHash] = &types.AttributeValueMemberS{Value: rec.PayloadHash}
	item[attrLayout] = number(layout)
	if rec.Status == idempotency.StatusInProgress {
		item[attrLease] = number(rec.LeaseUntil.UnixMilli())
	}
	if rec.Result != "" {
		item[attrResult] = &types.AttributeValueMemberS{Value: rec.Result}
	}
	if rec.Replay != "" {
		item[attrReplay] = &types.AttributeValueMemberS{Value: rec.Replay}
	}
	return item
}

// recordSize is itemSize(s.marshal(rec)), the size of rec's item, summed
// without building the item (TestRecordSizeIsTheItemsSize).
func (s *Store) recordSize(rec idempotency.Record) int {
	n := s.keySize(rec.Key) +
		len(attrStatus) + len(rec.Status) + len(attrOwner) + len(rec.Owner) +
		len(attrExpires) + intSize(rec.ExpiresAt.Unix()) + len(s.ttl) + intSize(rec.TTL.Unix()) +
		len(attrHash) + len(rec.PayloadHash) + len(attrLayout) + intSize(layout)
	if rec.Status == idempotency.StatusInProgress {
		n += len(attrLease) + intSize(rec.LeaseUntil.UnixMilli())
	}
	if rec.Result != "" {
		n += len(attrResult) + len(rec.Result)
	}
	if rec.Replay != "" {
		n += len(attrReplay) + len(rec.Replay)
	}
	return n
}

// unmarshal reads a record of this release's layout. Anything else (an
// item that is not a record, an unknown status, an attribute missing or of
// the wrong type, a layout other than layout) is an error wrapping
// idempotency.ErrUnreadableRecord: the record is not misread, and the guard
// reports it as a store error.
func (s *Store) unmarshal(item map[string]types.AttributeValue) (*idempotency.Record, error) {
	var problems []string
	str := func(name string, required bool) string {
		switch v := item[name].(type) {
		case *types.AttributeValueMemberS:
			return v.Value
		case nil:
			if required {
				problems = append(problems, "no "+name)
			}
		default:
			problems = append(problems, fmt.Sprintf("%s is a %s, want a string", name, attributeType(v)))
		}
		return ""
	}
	num := func(name string) int64 {
		switch v := item[name].(type) {
		case *types.AttributeValueMemberN:
			n, err := strconv.ParseInt(v.Value, 10, 64)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s is %q, not an integer", name, v.Value))
			}
			return n
		case nil:
			problems = append(problems, "no "+name)
		default:
			problems = append(problems, fmt.Sprintf("%s is a %s, want a number", name, attributeType(v)))
		}
		return 0
	}
	rec := &idempotency.Record{Key: str(s.recordKeyAttribute(), true)}
	known := false // the item has this release's layout
	if _, ok := item[attrLayout]; !ok {
		problems = append(problems, "no "+attrLayout+" attribute: not a record this library wrote")
	} else if before, n := len(problems), num(attrLayout); len(problems) == before {
		switch {
		case n > layout:
			problems = append(problems, fmt.Sprintf("layout %d, newer than this release reads (%d): deploy the release that wrote it", n, layout))
		case n < layout:
			problems = append(problems, fmt.Sprintf("layout %d, which no release wrote", n))
		default:
			known = true
		}
	}
	if known { // read its attributes as this layout defines them
		rec.Status = idempotency.Status(str(attrStatus, true))
		rec.Owner = str(attrOwner, true)
		rec.PayloadHash = str(attrHash, true)
		rec.Result = str(attrResult, false)
		rec.Replay = str(attrReplay, false)
		rec.ExpiresAt = time.Unix(num(attrExpires), 0)
		rec.TTL = time.Unix(num(s.ttl), 0)
		switch rec.Status {
		case idempotency.StatusInProgress:
			rec.LeaseUntil = time.UnixMilli(num(attrLease))
		case idempotency.StatusCompleted:
		default:
			problems = append(problems, fmt.Sprintf("unknown status %q", rec.Status))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: item %s %q: %s", idempotency.ErrUnreadableRecord, s.recordKeyAttribute(), rec.Key, strings.Join(problems, "; "))
	}
	return rec, nil
}

// attributeType names the DynamoDB type of v ("S", "N", "BOOL"...): the
// SDK's member type names it, *types.AttributeValueMember<type>.
func attributeType(v types.AttributeValue) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", v), "*types.AttributeValueMember")
}
