package chaos

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
)

func pk(v string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{schema.Key: &types.AttributeValueMemberS{Value: v}}
}

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// items are the wallet's transactional writes, in the idempotency table
// itself (shared-table mode), under the wallet's name: the balance increment,
// the order's ledger entry (a counter of credits, so that a double credit
// shows) and one item per line item.
func (w *wallet) items(o order, n int64) []types.TransactWriteItem {
	table := w.sim.table
	items := []types.TransactWriteItem{
		{Update: &types.Update{
			TableName:                 aws.String(table),
			Key:                       pk(w.name + "/balance#" + o.CustomerID),
			UpdateExpression:          aws.String("ADD #b :n"),
			ExpressionAttributeNames:  map[string]string{"#b": "balance"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": num(n)},
		}},
		{Update: &types.Update{
			TableName:                 aws.String(table),
			Key:                       pk(w.name + "/ledger#" + o.OrderID),
			UpdateExpression:          aws.String("SET #a = :a ADD #c :one"),
			ExpressionAttributeNames:  map[string]string{"#a": "amount", "#c": "credits"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": num(o.Amount), ":one": num(1)},
		}},
	}
	for i, amount := range o.Lines {
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(table),
			Item: map[string]types.AttributeValue{
				schema.Key: &types.AttributeValueMemberS{Value: fmt.Sprintf("%s/line#%s#%d", w.name, o.OrderID, i)},
				"amount":   num(amount),
			},
		}})
	}
	return items
}

func applyItems(ctx context.Context, ddb *dynamodb.Client, items []types.TransactWriteItem) error {
	_, err := ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	return err
}

// readNumbers reads the number attributes of the item pk (zeros when absent).
func readNumbers(ctx context.Context, ddb *dynamodb.Client, table, key string, names ...string) ([]int64, error) {
	out, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: pk(key), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	vals := make([]int64, len(names))
	for i, name := range names {
		if n, ok := out.Item[name].(*types.AttributeValueMemberN); ok {
			vals[i], err = strconv.ParseInt(n.Value, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", key, name, err)
			}
		}
	}
	return vals, nil
}
