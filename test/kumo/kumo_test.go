// Package kumo_test runs the library against kumo, an in-process AWS
// emulator started on a loopback port: DynamoDB with transactions (which
// dynalite lacks), and SNS → SQS delivery. It lives in its own module so that
// the emulator stays out of the library's module graph.
package kumo_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/test/internal/kumotest"
)

// emulator is a kumo server and a DynamoDB client for it.
type emulator struct {
	ddb *dynamodb.Client
}

func start(t *testing.T) *emulator {
	ddb, stop := kumotest.StartDynamoDB(true)
	t.Cleanup(stop)
	return &emulator{ddb: ddb}
}

func (e *emulator) newTable(t *testing.T) string {
	name, err := kumotest.NewTable(context.Background(), e.ddb, "idempotency")
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// walletHarness keeps wallet balances in the idempotency table itself
// (shared-table mode): item "balance#<wallet>", attribute "balance".
func walletHarness(e *emulator, api func() dynamostore.API) storetest.Harness {
	var mu sync.Mutex
	var table string // the table of the latest store; the wallet test makes one
	return storetest.Harness{
		NewStore: func(t *testing.T) idempotency.Store {
			mu.Lock()
			defer mu.Unlock()
			table = e.newTable(t)
			return dynamostore.New(api(), table)
		},
		Credit: func(wallet string, amount int) any {
			mu.Lock()
			defer mu.Unlock()
			return []types.TransactWriteItem{credit(table, wallet, amount)}
		},
		Balance: func(t *testing.T, wallet string) int {
			mu.Lock()
			defer mu.Unlock()
			return balance(t, e.ddb, table, wallet)
		},
	}
}

func credit(table, wallet string, amount int) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(table),
		Key:                       map[string]types.AttributeValue{schema.Key: &types.AttributeValueMemberS{Value: "balance#" + wallet}},
		UpdateExpression:          aws.String("ADD #b :n"),
		ExpressionAttributeNames:  map[string]string{"#b": "balance"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: strconv.Itoa(amount)}},
	}}
}

func balance(t *testing.T, ddb *dynamodb.Client, table, wallet string) int {
	out, err := ddb.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{schema.Key: &types.AttributeValueMemberS{Value: "balance#" + wallet}}})
	if err != nil {
		t.Fatal(err)
	}
	n, ok := out.Item["balance"].(*types.AttributeValueMemberN)
	if !ok {
		return 0
	}
	v, _ := strconv.Atoi(n.Value)
	return v
}

// TestConformanceKumo runs the store suite, transactions included, on kumo's
// DynamoDB.
func TestConformanceKumo(t *testing.T) {
	e := start(t)
	storetest.Run(t, walletHarness(e, func() dynamostore.API { return e.ddb }))
}

// countingAPI counts the DynamoDB requests and keeps the last transaction.
type countingAPI struct {
	*dynamodb.Client
	mu     sync.Mutex
	calls  map[string]int
	lastTx *dynamodb.TransactWriteItemsInput
}

func (c *countingAPI) count(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[op]++
}

func (c *countingAPI) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.count("PutItem")
	return c.Client.PutItem(ctx, in, o...)
}
func (c *countingAPI) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.count("GetItem")
	return c.Client.GetItem(ctx, in, o...)
}
func (c *countingAPI) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.count("UpdateItem")
	return c.Client.UpdateItem(ctx, in, o...)
}
func (c *countingAPI) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.count("DeleteItem")
	return c.Client.DeleteItem(ctx, in, o...)
}
func (c *countingAPI) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.count("TransactWriteItems")
	c.mu.Lock()
	c.lastTx = in
	c.mu.Unlock()
	return c.Client.TransactWriteItems(ctx, in, o...)
}

func (c *countingAPI) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.calls
	c.calls = map[string]int{}
	return m
}

// TestTransactionalRequests: a new transactional fact is one
// TransactWriteItems that carries the record's reserve condition and the
// effect's write, with no separate reserve; a duplicate's cancelled
// transaction is told from a rejected write by its reasons.
func TestTransactionalRequests(t *testing.T) {
	e := start(t)
	table := e.newTable(t)
	api := &countingAPI{Client: e.ddb, calls: map[string]int{}}
	g, err := idempotency.NewGuard(dynamostore.New(api, table), idempotency.Config{Namespace: "wallet"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	payload := []byte(`{"orderId":"o1","customerId":"c1","amount":1000}`)
	fact, err := g.Fact("o1", payload)
	if err != nil {
		t.Fatal(err)
	}
	creditC1 := func(context.Context, idempotency.Reservation) (any, string, error) {
		return []types.TransactWriteItem{credit(table, "c1", 10)}, "credited 10", nil
	}
	res, err := g.RunTx(ctx, fact, creditC1)
	if err != nil || res.Outcome != outcome.Processed {
		t.Fatalf("new: %+v, %v", res, err)
	}
	if calls := api.take(); len(calls) != 1 || calls["TransactWriteItems"] != 1 {
		t.Fatalf("new fact: calls %v, want exactly one TransactWriteItems", calls)
	}
	tx := api.lastTx.TransactItems
	if len(tx) != 2 || tx[0].Put == nil || aws.ToString(tx[0].Put.ConditionExpression) == "" || tx[0].Put.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld || tx[1].Update == nil {
		t.Fatalf("transaction %+v: want the conditional record put then the credit", tx)
	}
	// A duplicate: the transaction is cancelled on the record; kumo returns
	// no old item, so the guard reads it once.
	res, err = g.RunTx(ctx, fact, creditC1)
	if err != nil || res.Outcome != outcome.Duplicate || res.Value != "credited 10" {
		t.Fatalf("duplicate: %+v, %v", res, err)
	}
	if calls := api.take(); calls["TransactWriteItems"] != 1 || calls["GetItem"] != 1 || len(calls) != 2 {
		t.Fatalf("duplicate: calls %v, want one TransactWriteItems and one GetItem", calls)
	}
	// A write refused by its own condition (a debit beyond the balance) is
	// the effect's failure, not a duplicate, and writes nothing.
	fact2, _ := g.Fact("o2", []byte(`{"orderId":"o2"}`))
	_, err = g.RunTx(ctx, fact2, func(context.Context, idempotency.Reservation) (any, string, error) {
		debit := credit(table, "c1", -1000)
		debit.Update.ConditionExpression = aws.String("#b >= :min")
		debit.Update.ExpressionAttributeValues[":min"] = &types.AttributeValueMemberN{Value: "1000"}
		return []types.TransactWriteItem{debit}, "", nil
	})
	if !errors.Is(err, idempotency.ErrEffect) || !errors.Is(err, idempotency.ErrTxRejected) {
		t.Fatalf("rejected write: %v, want an ErrEffect wrapping ErrTxRejected", err)
	}
	if got := balance(t, e.ddb, table, "c1"); got != 10 {
		t.Fatalf("balance %d after a rejected debit, want 10", got)
	}
	if rec, _ := dynamostore.New(e.ddb, table).Get(ctx, fact2.Key); rec != nil {
		t.Fatalf("a rejected transaction left a record: %+v", rec)
	}
}

// TestReserveRequests: a new fact is two requests (reserve, complete), an
// effect failure two (reserve, release), a duplicate on kumo two (reserve,
// then one GetItem, since kumo returns no old item).
func TestReserveRequests(t *testing.T) {
	e := start(t)
	api := &countingAPI{Client: e.ddb, calls: map[string]int{}}
	g, _ := idempotency.NewGuard(dynamostore.New(api, e.newTable(t)), idempotency.Config{Namespace: "charge"})
	ctx := context.Background()
	ok := func(context.Context, idempotency.Reservation) (string, error) { return "r", nil }
	fail := func(context.Context, idempotency.Reservation) (string, error) { return "", errors.New("declined") }
	steps := []struct {
		name   string
		effect idempotency.Effect
		want   map[string]int
	}{
		{"effect failure", fail, map[string]int{"PutItem": 1, "DeleteItem": 1}},
		{"new", ok, map[string]int{"PutItem": 1, "UpdateItem": 1}},
		{"duplicate", ok, map[string]int{"PutItem": 1, "GetItem": 1}},
	}
	for _, s := range steps {
		_, _ = g.Do(ctx, "o1", []byte(`{"orderId":"o1"}`), s.effect)
		if got := api.take(); fmt.Sprint(got) != fmt.Sprint(s.want) {
			t.Errorf("%s: calls %v, want %v", s.name, got, s.want)
		}
	}
}

// TestTxRefusals: writes that the store refuses as invalid, whatever the
// number of deliveries, are the record's failure (an ErrEffect wrapping
// ErrTxInvalid: reported per record, not retried as an outage), and nothing
// is written; a refusal of the record's own write (a table whose key schema
// is not the store's) stays the store's error, loud, since it is
// misconfiguration.
func TestTxRefusals(t *testing.T) {
	e := start(t)
	table := e.newTable(t)
	g, _ := idempotency.NewGuard(dynamostore.New(e.ddb, table), idempotency.Config{Namespace: "wallet"})
	ctx := context.Background()
	tooMany := make([]types.TransactWriteItem, dynamostore.MaxTxWrites+1)
	for i := range tooMany {
		tooMany[i] = credit(table, fmt.Sprint("w", i), 1)
	}
	malformed := credit(table, "c1", 1)
	// kumo cancels the transaction with a ValidationError reason for this
	// action, the answer DynamoDB gives for an action whose item exceeds
	// 400 KB (kumo has no size limit to trip).
	malformed.Update.ConditionExpression = aws.String("no_such_function(#b)")
	for name, writes := range map[string][]types.TransactWriteItem{"too many writes": tooMany, "malformed write": {malformed}} {
		fact, _ := g.Fact(name, []byte(`{}`))
		_, err := g.RunTx(ctx, fact, func(context.Context, idempotency.Reservation) (any, string, error) { return writes, "", nil })
		if !errors.Is(err, idempotency.ErrEffect) || !errors.Is(err, idempotency.ErrTxInvalid) || errors.Is(err, idempotency.ErrStore) {
			t.Errorf("%s: %v; want an ErrEffect wrapping ErrTxInvalid", name, err)
		}
		if rec, _ := dynamostore.New(e.ddb, table).Get(ctx, fact.Key); rec != nil {
			t.Errorf("%s: record %+v written", name, rec)
		}
	}
	if got := balance(t, e.ddb, table, "c1"); got != 0 {
		t.Errorf("balance %d, want nothing written", got)
	}

	wrongKey := fmt.Sprint("wrong-key-", table)
	if _, err := e.ddb.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(wrongKey),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	}); err != nil {
		t.Fatal(err)
	}
	g, _ = idempotency.NewGuard(dynamostore.New(e.ddb, wrongKey), idempotency.Config{Namespace: "wallet"})
	fact, _ := g.Fact("o1", []byte(`{}`))
	_, err := g.RunTx(ctx, fact, func(context.Context, idempotency.Reservation) (any, string, error) {
		return []types.TransactWriteItem{credit(table, "c1", 1)}, "", nil
	})
	if !errors.Is(err, idempotency.ErrStore) || errors.Is(err, idempotency.ErrEffect) {
		t.Fatalf("record refused by a table keyed on id: %v; want an ErrStore (misconfiguration), not the record's failure", err)
	}
}

// TestTxOneActionPerItem: two writes on one item, or a write on the
// record's own item, are refused before sending, as the record's failure
// (an ErrEffect wrapping ErrTxInvalid), and nothing is written. DynamoDB
// refuses such a transaction with a request-level ValidationException;
// kumo would apply it.
func TestTxOneActionPerItem(t *testing.T) {
	e := start(t)
	table := e.newTable(t)
	g, _ := idempotency.NewGuard(dynamostore.New(e.ddb, table), idempotency.Config{Namespace: "wallet"})
	ctx := context.Background()
	cases := map[string]func(fact idempotency.Fact) []types.TransactWriteItem{
		"two writes on one item": func(idempotency.Fact) []types.TransactWriteItem {
			return []types.TransactWriteItem{credit(table, "c1", 1), credit(table, "c1", 1)}
		},
		"a write on the record's own item": func(fact idempotency.Fact) []types.TransactWriteItem {
			own := credit(table, "c1", 1)
			own.Update.Key = map[string]types.AttributeValue{schema.Key: &types.AttributeValueMemberS{Value: fact.Key}}
			return []types.TransactWriteItem{own}
		},
	}
	for name, writes := range cases {
		fact, _ := g.Fact(name, []byte(`{}`))
		_, err := g.RunTx(ctx, fact, func(context.Context, idempotency.Reservation) (any, string, error) { return writes(fact), "", nil })
		if !errors.Is(err, idempotency.ErrEffect) || !errors.Is(err, idempotency.ErrTxInvalid) || errors.Is(err, idempotency.ErrStore) {
			t.Errorf("%s: %v; want an ErrEffect wrapping ErrTxInvalid", name, err)
		}
		if rec, err := dynamostore.New(e.ddb, table).Get(ctx, fact.Key); rec != nil || err != nil {
			t.Errorf("%s: record %+v, %v written", name, rec, err)
		}
	}
	if got := balance(t, e.ddb, table, "c1"); got != 0 {
		t.Errorf("balance %d, want nothing written", got)
	}
}
