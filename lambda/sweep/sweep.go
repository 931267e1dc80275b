// Package sweep deletes the expired idempotency records of a table whose
// records DynamoDB's TTL does not delete: a multi-Region strongly consistent
// (MRSC) global table supports no TTL. Its Sweeper scans the local replica
// (eventually consistent reads), in parallel-scan segments, a page at a
// time, and deletes each idempotency record whose TTL attribute (epoch
// seconds) is past with a conditional DeleteItem whose condition says so
// again, so that a record reserved anew after the scan is never deleted.
// Items of the table that are not idempotency records (a shared table's
// business items) are never deleted: a record is an item of this release's
// layout, with an owner and an IN_PROGRESS or COMPLETED status.
//
// The guard never relies on the deletion: a record past its window, and so
// past its TTL, no longer holds its key (DESIGN.md, "Records leave the
// table without TTL: the sweeper"). A late or missed sweep costs storage,
// never a duplicate effect.
//
// Start is the sweeper function's entry point (lambda/sweep/cmd/sweeper).
package sweep

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// API is the part of the DynamoDB client the sweeper calls;
// *dynamodb.Client implements it.
type API interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Config is the table a Sweeper sweeps. FromEnv reads it from the
// contract's variables.
type Config struct {
	// Table is the table's name (contract.TableVar). Required.
	Table string
	// PartitionKey and SortKey name the table's key attributes, both
	// strings (contract.PartitionKeyVar, SortKeyVar); SortKey is empty for
	// a table without one. PartitionKey is required.
	PartitionKey, SortKey string
	// TTLAttribute is the record's TTL attribute, epoch seconds
	// (contract.TTLAttributeVar). Required.
	TTLAttribute string
	// PageSize is how many items a Scan page reads. Default: 250.
	PageSize int
	// MaxPages bounds the pages one run reads. Default: 0, bounded only by
	// the run's deadline, less 10 seconds.
	MaxPages int
	// Now is the clock the TTL is compared with. Default: time.Now.
	Now func() time.Time
}

// FromEnv reads the sweeper's Config through getenv (os.Getenv): the table
// (contract.TableVar), its partition key (PartitionKeyVar), its sort key if
// it has one (SortKeyVar) and the TTL attribute (TTLAttributeVar), each set
// explicitly, since a sweeper that guessed a name would scan and delete by
// the wrong attribute. A variable missing, or a key or TTL attribute named like an attribute of the
// record, is an error that names every problem.
func FromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		Table: getenv(contract.TableVar), PartitionKey: getenv(contract.PartitionKeyVar), SortKey: getenv(contract.SortKeyVar),
		TTLAttribute: getenv(contract.TTLAttributeVar),
	}
	return cfg, cfg.check()
}

// check returns every problem of cfg, or nil.
func (cfg Config) check() error {
	var problems []string
	for _, v := range []struct{ name, value string }{{contract.TableVar, cfg.Table}, {contract.PartitionKeyVar, cfg.PartitionKey}, {contract.TTLAttributeVar, cfg.TTLAttribute}} {
		if v.value == "" {
			problems = append(problems, v.name+" is not set: the sweeper reads the table's name, key and TTL attribute from the environment, and guesses none")
		}
	}
	for _, v := range []struct{ name, value string }{{contract.PartitionKeyVar, cfg.PartitionKey}, {contract.SortKeyVar, cfg.SortKey}, {contract.TTLAttributeVar, cfg.TTLAttribute}} {
		if schema.Taken(v.value) {
			problems = append(problems, fmt.Sprintf("%s %q is an attribute of the idempotency record: give the table's own name", v.name, v.value))
		}
	}
	if cfg.PageSize < 0 || cfg.MaxPages < 0 {
		problems = append(problems, fmt.Sprintf("PageSize %d and MaxPages %d must not be negative", cfg.PageSize, cfg.MaxPages))
	}
	if len(problems) > 0 {
		return errors.New("sweep: " + strings.Join(problems, "; "))
	}
	return nil
}

// Cursor is where a run stopped, for the next to go on from: the segment
// being read, the key to read it on from (the Scan's LastEvaluatedKey;
// every key attribute is a string) and how many segments the pass has
// finished.
type Cursor struct {
	Segment int               `json:"segment"`
	Key     map[string]string `json:"key,omitempty"`
	Visited int               `json:"visited"`
}

// Summary is what one run did.
type Summary struct {
	// Scanned counts the items read; Expired the expired records among
	// them; Deleted those deleted.
	Scanned, Expired, Deleted int
	// Reserved counts the expired records whose delete found them changed
	// since the scan (reserved anew, completed, or gone): kept.
	Reserved int
	// Conflicts counts the deletes refused because another Region was
	// modifying the item (ReplicatedWriteConflictException): kept, and
	// looked at again by a later pass.
	Conflicts int
	// Pages counts the Scan pages read.
	Pages int
	// Complete reports that the pass read every segment to its end.
	Complete bool
	// Next is where the run stopped, when it did not complete: pass it to
	// the next run.
	Next *Cursor `json:",omitempty"`
}

// Sweeper deletes a table's expired idempotency records.
type Sweeper struct {
	api API
	cfg Config
}

// New returns a Sweeper of cfg's table, its defaults filled in; an error
// names every problem of cfg.
func New(api API, cfg Config) (*Sweeper, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.PageSize == 0 {
		cfg.PageSize = limits.SweepPageSize
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Sweeper{api: api, cfg: cfg}, nil
}

// expiredCondition is the Scan's filter and every delete's condition: an
// idempotency record of this release's layout whose TTL is before :cutoff.
const expiredCondition = "#lay = :layout AND #ttl < :cutoff AND attribute_exists(#own) AND (#st = :in_progress OR #st = :completed)"

// Run sweeps from from (nil: a new pass, from a random segment of the
// table's 16) until the pass completes, the run has read Config.MaxPages
// pages, or ctx's deadline is less than 10 seconds away; the Summary's Next
// says where it stopped. The TTL is compared with Now less a second, the
// skew allowed between the sweeper's clock and the functions' that wrote
// it. An error (a Scan or a delete that failed otherwise than by its
// condition or a conflict) ends the run with what it did and where to go on
// from: the page is read again then, and its deletes, conditional, are safe
// to send again.
func (s *Sweeper) Run(ctx context.Context, from *Cursor) (Summary, error) {
	c := Cursor{Segment: rand.N(limits.SweepSegments)}
	if from != nil {
		if from.Segment < 0 || from.Segment >= limits.SweepSegments || from.Visited < 0 || from.Visited >= limits.SweepSegments {
			return Summary{}, fmt.Errorf("sweep: cursor %+v: segment and visited must be within [0, %d)", *from, limits.SweepSegments)
		}
		c = *from
	}
	cutoff := strconv.FormatInt(s.cfg.Now().Add(-limits.ClockSkewMargin).Unix(), 10)
	var sum Summary
	for {
		if s.cfg.MaxPages > 0 && sum.Pages == s.cfg.MaxPages || nearDeadline(ctx) {
			sum.Next = &c
			return sum, nil
		}
		out, err := s.api.Scan(ctx, s.scanInput(c, cutoff))
		if err != nil {
			sum.Next = &c
			return sum, fmt.Errorf("sweep: scan segment %d of table %s: %w", c.Segment, s.cfg.Table, err)
		}
		sum.Pages++
		sum.Scanned += int(out.ScannedCount)
		sum.Expired += len(out.Items)
		if err := s.deleteAll(ctx, out.Items, cutoff, &sum); err != nil {
			sum.Next = &c
			return sum, err
		}
		if len(out.LastEvaluatedKey) > 0 {
			c.Key = stringKey(out.LastEvaluatedKey)
			continue
		}
		c.Segment, c.Key, c.Visited = (c.Segment+1)%limits.SweepSegments, nil, c.Visited+1
		if c.Visited == limits.SweepSegments {
			sum.Complete = true
			return sum, nil
		}
	}
}

// nearDeadline reports whether ctx's deadline is less than
// limits.SweepTimeReserve away.
func nearDeadline(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < limits.SweepTimeReserve
}

// scanInput is the Scan of one page of segment c.Segment from c.Key, which
// returns the keys of the expired records (the filter is applied after the
// read: the page reads PageSize items).
func (s *Sweeper) scanInput(c Cursor, cutoff string) *dynamodb.ScanInput {
	names, values := s.expression(cutoff)
	names["#pk"] = s.cfg.PartitionKey
	projection := "#pk"
	if s.cfg.SortKey != "" {
		projection += ", #sk"
		names["#sk"] = s.cfg.SortKey
	}
	in := &dynamodb.ScanInput{
		TableName:                 aws.String(s.cfg.Table),
		Segment:                   aws.Int32(int32(c.Segment)),
		TotalSegments:             aws.Int32(limits.SweepSegments),
		Limit:                     aws.Int32(int32(s.cfg.PageSize)),
		FilterExpression:          aws.String(expiredCondition),
		ProjectionExpression:      aws.String(projection),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}
	if len(c.Key) > 0 {
		in.ExclusiveStartKey = make(map[string]types.AttributeValue, len(c.Key))
		for k, v := range c.Key {
			in.ExclusiveStartKey[k] = &types.AttributeValueMemberS{Value: v}
		}
	}
	return in
}

// expression is expiredCondition's names and values.
func (s *Sweeper) expression(cutoff string) (map[string]string, map[string]types.AttributeValue) {
	return map[string]string{"#lay": schema.Layout, "#ttl": s.cfg.TTLAttribute, "#own": schema.Owner, "#st": schema.Status},
		map[string]types.AttributeValue{
			":layout":      &types.AttributeValueMemberN{Value: strconv.Itoa(schema.LayoutVersion)},
			":cutoff":      &types.AttributeValueMemberN{Value: cutoff},
			":in_progress": &types.AttributeValueMemberS{Value: string(idempotency.StatusInProgress)},
			":completed":   &types.AttributeValueMemberS{Value: string(idempotency.StatusCompleted)},
		}
}

// deleteAll deletes the records of keys, limits.SweepConcurrency at a
// time, each under expiredCondition, and counts what became of each in
// sum. It returns the first error other than a failed condition or a
// conflict.
func (s *Sweeper) deleteAll(ctx context.Context, keys []map[string]types.AttributeValue, cutoff string, sum *Summary) error {
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		slots = make(chan struct{}, limits.SweepConcurrency)
	)
	for _, key := range keys {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			err := s.delete(ctx, key, cutoff)
			var ccf *types.ConditionalCheckFailedException
			var rc *types.ReplicatedWriteConflictException
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				sum.Deleted++
			case errors.As(err, &ccf):
				sum.Reserved++
			case errors.As(err, &rc):
				sum.Conflicts++
			case first == nil:
				first = fmt.Errorf("sweep: delete from table %s: %w", s.cfg.Table, err)
			}
		})
	}
	wg.Wait()
	return first
}

// delete deletes the record of key if it is still expired.
func (s *Sweeper) delete(ctx context.Context, key map[string]types.AttributeValue, cutoff string) error {
	names, values := s.expression(cutoff)
	_, err := s.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.cfg.Table),
		Key:                       key,
		ConditionExpression:       aws.String(expiredCondition),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	return err
}

// stringKey is a Scan's LastEvaluatedKey as strings: the table's key
// attributes are strings.
func stringKey(key map[string]types.AttributeValue) map[string]string {
	out := make(map[string]string, len(key))
	for k, v := range key {
		if s, ok := v.(*types.AttributeValueMemberS); ok {
			out[k] = s.Value
		}
	}
	return out
}
