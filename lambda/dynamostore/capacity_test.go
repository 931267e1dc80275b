package dynamostore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/dynalite"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// TestCapacityComputedAsReported: for every request the server reports
// capacity for (dynalite computes it as DynamoDB documents), the store's
// own computation, which it uses where DynamoDB reports none, gives the
// same units, for small items and for items of several KB (a key of 2,000
// bytes and a result of 4 KiB); and a failed condition, which no server
// reports, is counted.
func TestCapacityComputedAsReported(t *testing.T) {
	srv := dynalite.Start(t)
	// allOld returns the old item of a failed condition, as DynamoDB does.
	s := dynamostore.New(allOld{srv.Client(), []string{schema.Key}}, srv.NewTable(t))
	type seen struct {
		reported *idempotency.Capacity
		computed idempotency.Capacity
	}
	var all []seen
	dynamostore.ObserveCapacity(func(r *idempotency.Capacity, c idempotency.Capacity) { all = append(all, seen{r, c}) })
	t.Cleanup(func() { dynamostore.ObserveCapacity(nil) })

	now := time.Now()
	for _, tc := range []struct {
		name, key, result string
		want              idempotency.Capacity // the whole sequence
	}{
		// reserve 1 + complete 1 + failed reserve 1 + release (after a new
		// reserve 1) 1 + get 1 read.
		{"small", "n#small", "r", idempotency.Capacity{Read: 1, Write: 5}},
		// reserve 3 (2,2xx bytes) + complete 7 (6,3xx) + failed reserve 7
		// (the larger: the completed item) + reserve 3 + release 3 + get 2.
		{"large", "n#" + strings.Repeat("k", 2000), strings.Repeat("r", limits.DefaultMaxResultBytes), idempotency.Capacity{Read: 2, Write: 23}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all = nil
			var used idempotency.Capacity
			ctx := idempotency.WithCapacity(context.Background(), &used)
			rec := idempotency.Record{Key: tc.key, Status: idempotency.StatusInProgress, Owner: "o1", PayloadHash: "v2:" + strings.Repeat("h", 43),
				LeaseUntil: now.Add(time.Minute), ExpiresAt: now.Add(time.Hour), TTL: now.Add(48 * time.Hour)}
			if err := s.Reserve(ctx, rec, now); err != nil {
				t.Fatal(err)
			}
			done := rec
			done.Status, done.Result = idempotency.StatusCompleted, tc.result
			if err := s.Complete(ctx, done); err != nil {
				t.Fatal(err)
			}
			again := rec
			again.Owner = "o2"
			if err := s.Reserve(ctx, again, now); err == nil {
				t.Fatal("a second reservation of a completed fact succeeded")
			}
			other := rec
			other.Key += "-released"
			if err := s.Reserve(ctx, other, now); err != nil {
				t.Fatal(err)
			}
			if err := s.Release(ctx, other.Key, other.Owner); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, tc.key); err != nil {
				t.Fatal(err)
			}
			unreported := 0
			for i, o := range all {
				if o.reported == nil {
					unreported++
					continue
				}
				if *o.reported != o.computed {
					t.Errorf("request %d: reported %+v, computed %+v", i, *o.reported, o.computed)
				}
			}
			if unreported != 1 { // the failed condition
				t.Errorf("%d requests without reported capacity, want 1 (the failed condition)", unreported)
			}
			if used != tc.want {
				t.Errorf("consumed %+v, want %+v", used, tc.want)
			}
		})
	}
}

// cancelling answers every transaction as cancelled by the record's
// condition, as DynamoDB answers a duplicate: with no capacity.
type cancelling struct{ dynamostore.API }

func (cancelling) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return nil, &types.TransactionCanceledException{CancellationReasons: []types.CancellationReason{{Code: aws.String("ConditionalCheckFailed")}, {Code: aws.String("None")}}}
}

// TestCapacityOfACancelledTransaction: a cancelled transaction is counted
// as two writes of each of its items (the record and an effect's put).
func TestCapacityOfACancelledTransaction(t *testing.T) {
	s := dynamostore.New(cancelling{}, "t")
	var used idempotency.Capacity
	ctx := idempotency.WithCapacity(context.Background(), &used)
	now := time.Now()
	rec := idempotency.Record{Key: "n#k", Status: idempotency.StatusCompleted, Owner: "o", PayloadHash: "v2:h", ExpiresAt: now.Add(time.Hour), TTL: now.Add(48 * time.Hour)}
	writes := []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String("wallets"), Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "credit#n#k"}, "amount": &types.AttributeValueMemberN{Value: "5000"},
	}}}}
	if err := s.Commit(ctx, rec, now, writes); err == nil {
		t.Fatal("a cancelled transaction committed")
	}
	if used != (idempotency.Capacity{Write: 4}) {
		t.Fatalf("consumed %+v, want 4 write units (2 × (record 1 + put 1))", used)
	}
}
