package chaos

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/sivchari/kumo"
)

type creds struct{}

func (creds) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test", Source: "chaos"}, nil
}

// StartKumo starts the kumo AWS emulator in this process, on a loopback
// port, and returns a DynamoDB client for it and the function that stops it.
// The client does not retry: the simulation injects its own faults, and a
// retry with jitter would make runs differ.
func StartKumo() (*dynamodb.Client, func()) {
	srv := kumo.NewServer()
	client := dynamodb.New(dynamodb.Options{
		BaseEndpoint: aws.String(srv.URL),
		Region:       "eu-west-1",
		Credentials:  creds{},
		Retryer:      aws.NopRetryer{},
	})
	return client, srv.Close
}

// tables numbers the tables of the process: kumo servers of one process
// share their state, so every run needs a table name of its own.
var tables atomic.Int64

func createTable(ctx context.Context, ddb *dynamodb.Client, seed int64) (string, error) {
	name := fmt.Sprintf("chaos-%d-%d", uint64(seed), tables.Add(1))
	_, err := ddb.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		return "", fmt.Errorf("chaos: create table %s: %w", name, err)
	}
	return name, nil
}

func pk(v string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: v}}
}

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// creditItems are the wallet's transactional writes, in the idempotency
// table itself (shared-table mode): the balance increment and the order's
// ledger entry (a counter of credits, so that a double credit shows).
func creditItems(table string, o order, n int64) []types.TransactWriteItem {
	return []types.TransactWriteItem{
		{Update: &types.Update{
			TableName:                 aws.String(table),
			Key:                       pk("balance#" + o.CustomerID),
			UpdateExpression:          aws.String("ADD #b :n"),
			ExpressionAttributeNames:  map[string]string{"#b": "balance"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": num(n)},
		}},
		{Update: &types.Update{
			TableName:                 aws.String(table),
			Key:                       pk("ledger#" + o.OrderID),
			UpdateExpression:          aws.String("SET #a = :a ADD #c :one"),
			ExpressionAttributeNames:  map[string]string{"#a": "amount", "#c": "credits"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": num(o.Amount), ":one": num(1)},
		}},
	}
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
