package kumo_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

// TestConformanceKumoDesigns runs the store suite, transactions included,
// on shared tables of an app's own design: its own key names and TTL
// attribute, with a sort key, the wallets being items of the same table
// (a single-table design).
func TestConformanceKumoDesigns(t *testing.T) {
	e := start(t)
	for _, d := range []struct {
		name string
		opts []dynamostore.Option
	}{
		{"fixed sort key", []dynamostore.Option{dynamostore.WithPartitionKey("PK"), dynamostore.WithSortKey("SK", func(string) string { return "IDEMPOTENCY" }), dynamostore.WithTTLAttribute("expiresAt")}},
		{"key in the sort key", []dynamostore.Option{dynamostore.WithPartitionKey("PK"), dynamostore.WithKeyInSortKey("SK", func(ns string) string { return "idempotency#" + ns })}},
	} {
		t.Run(d.name, func(t *testing.T) {
			var mu sync.Mutex
			var table string
			walletKey := func(wallet string) map[string]types.AttributeValue {
				return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "wallet#" + wallet}, "SK": &types.AttributeValueMemberS{Value: "BALANCE"}}
			}
			storetest.Run(t, storetest.Harness{
				NewStore: func(t *testing.T) idempotency.Store {
					name, err := kumotest.NewTableKeyed(context.Background(), e.ddb, "single", "PK", "SK")
					if err != nil {
						t.Fatal(err)
					}
					mu.Lock()
					table = name
					mu.Unlock()
					return dynamostore.New(e.ddb, name, d.opts...)
				},
				Credit: func(wallet string, amount int) any {
					mu.Lock()
					defer mu.Unlock()
					return []types.TransactWriteItem{{Update: &types.Update{
						TableName: aws.String(table), Key: walletKey(wallet), UpdateExpression: aws.String("ADD #b :n"),
						ExpressionAttributeNames:  map[string]string{"#b": "balance"},
						ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: strconv.Itoa(amount)}},
					}}}
				},
				Balance: func(t *testing.T, wallet string) int {
					mu.Lock()
					name := table
					mu.Unlock()
					out, err := e.ddb.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(name), Key: walletKey(wallet), ConsistentRead: aws.Bool(true)})
					if err != nil {
						t.Fatal(err)
					}
					n, _ := out.Item["balance"].(*types.AttributeValueMemberN)
					if n == nil {
						return 0
					}
					v, _ := strconv.Atoi(n.Value)
					return v
				},
			})
		})
	}
}
