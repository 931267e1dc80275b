package dynamostore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/dynalite"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// TestForgetDeletesOnlyWhatTheRuleAllows runs Forget's conditional delete
// against dynalite, on each table design: a COMPLETED record and a
// reservation whose lease ended more than the margin ago are deleted and
// returned; a live lease, a lease that ended within the margin, a missing
// record and an item of another layout are refused, and stay as they were.
// Forgettable, the rule in Go, agrees with the condition in every case.
func TestForgetDeletesOnlyWhatTheRuleAllows(t *testing.T) {
	srv := dynalite.Start(t)
	client := srv.Client()
	ctx := context.Background()
	now := time.Now()
	const margin = 10 * time.Second
	for _, d := range designs {
		t.Run(d.name, func(t *testing.T) {
			table := srv.NewTableKeyed(t, d.partition, d.sort)
			store := dynamostore.New(client, table, d.opts...)
			put := func(key string, status idempotency.Status, lease time.Time) {
				t.Helper()
				rec := idempotency.Record{Key: key, Status: idempotency.StatusInProgress, Owner: "o-" + key, LeaseUntil: lease,
					ExpiresAt: now.Add(time.Hour), TTL: now.Add(2 * time.Hour), PayloadHash: "v2:h"}
				if err := store.Reserve(ctx, rec, now.Add(-time.Hour)); err != nil {
					t.Fatal(err)
				}
				if status == idempotency.StatusCompleted {
					rec.Status, rec.Result = status, "receipt-1"
					if err := store.Complete(ctx, rec); err != nil {
						t.Fatal(err)
					}
				}
			}
			put("ns#done", idempotency.StatusCompleted, now)
			put("ns#live", idempotency.StatusInProgress, now.Add(20*time.Second))
			put("ns#just-ended", idempotency.StatusInProgress, now.Add(-margin/2))
			put("ns#lapsed", idempotency.StatusInProgress, now.Add(-2*margin))
			newer := store.ItemKey("ns#newer")
			newer["layout"] = &types.AttributeValueMemberN{Value: "2"}
			newer["status"] = &types.AttributeValueMemberS{Value: "COMPLETED"}
			if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: newer}); err != nil {
				t.Fatal(err)
			}

			for _, c := range []struct {
				key  string
				want error // nil: deleted
			}{
				{"ns#done", nil},
				{"ns#lapsed", nil},
				{"ns#live", dynamostore.ErrLiveLease},
				{"ns#just-ended", dynamostore.ErrLiveLease},
				{"ns#missing", dynamostore.ErrNoRecord},
				{"ns#newer", idempotency.ErrUnreadableRecord},
			} {
				before, _ := store.Get(ctx, c.key)
				if c.key != "ns#newer" && c.key != "ns#missing" {
					if err := dynamostore.Forgettable(before, now, margin); !errors.Is(err, c.want) && (c.want != nil || err != nil) {
						t.Errorf("Forgettable(%s) = %v, want %v", c.key, err, c.want)
					}
				}
				removed, err := store.Forget(ctx, c.key, now, margin)
				after, _ := store.Get(ctx, c.key)
				switch {
				case c.want == nil && err != nil:
					t.Errorf("Forget(%s): %v", c.key, err)
				case c.want == nil && (removed == nil || removed.Key != c.key || removed.Owner != before.Owner):
					t.Errorf("Forget(%s) returned %+v, want the record it deleted %+v", c.key, removed, before)
				case c.want == nil && after != nil:
					t.Errorf("Forget(%s): the record is still there: %+v", c.key, after)
				case c.want != nil && !errors.Is(err, c.want):
					t.Errorf("Forget(%s) = %v, want %v", c.key, err, c.want)
				case c.want != nil && c.key != "ns#newer" && c.key != "ns#missing" && (after == nil || after.Owner != before.Owner):
					t.Errorf("Forget(%s) refused but changed the record: %+v → %+v", c.key, before, after)
				}
			}
			out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: store.ItemKey("ns#newer"), ConsistentRead: aws.Bool(true)})
			if err != nil || len(out.Item) == 0 {
				t.Errorf("the item of another layout was deleted (%v)", err)
			}
			if _, err := store.Forget(ctx, "ns#done", now, time.Millisecond); err == nil {
				t.Error("a margin under the clock skew margin (1s) was accepted")
			}
		})
	}
}
