package dynamostore_test

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// designs are the tables the store is run on: the construct's, and shared
// tables of an app's own design (its own key names, a sort key, its own TTL
// attribute).
var designs = []struct {
	name            string
	partition, sort string
	opts            []dynamostore.Option
}{
	{"construct's table", schema.Key, "", nil},
	{"single table, fixed sort key", "PK", "SK", []dynamostore.Option{
		dynamostore.WithPartitionKey("PK"), dynamostore.WithSortKey("SK", func(string) string { return "IDEMPOTENCY" }), dynamostore.WithTTLAttribute("expiresAt"),
	}},
	{"single table, sort key from the namespace", "id", "type", []dynamostore.Option{
		dynamostore.WithPartitionKey("id"), dynamostore.WithSortKey("type", func(ns string) string { return "idempotency#" + ns }),
	}},
	{"key in the sort key, one partition", "PK", "SK", []dynamostore.Option{
		dynamostore.WithPartitionKey("PK"), dynamostore.WithKeyInSortKey("SK", func(string) string { return "idempotency" }), dynamostore.WithTTLAttribute("expiresAt"),
	}},
}

// TestConformanceDynalite runs the store suite against a real
// DynamoDB-compatible server (dynalite) started on a loopback port, on each
// table design. dynalite ignores ReturnValuesOnConditionCheckFailure, so
// this exercises the GetItem fallback, and, through allOld, the path of
// DynamoDB, which returns the old item; it has no transactions (those run
// on kumo, in ./test).
func TestConformanceDynalite(t *testing.T) {
	srv := dynalite.Start(t)
	client := srv.Client()
	for _, d := range designs {
		t.Run(d.name, func(t *testing.T) {
			t.Run("GetFallback", func(t *testing.T) {
				storetest.Run(t, storetest.Harness{NewStore: func(t *testing.T) idempotency.Store {
					return dynamostore.New(client, srv.NewTableKeyed(t, d.partition, d.sort), d.opts...)
				}})
			})
			t.Run("OldItemReturned", func(t *testing.T) {
				storetest.Run(t, storetest.Harness{NewStore: func(t *testing.T) idempotency.Store {
					return dynamostore.New(allOld{client, []string{d.partition, d.sort}}, srv.NewTableKeyed(t, d.partition, d.sort), d.opts...)
				}})
			})
		})
	}
}

// allOld makes a server that ignores ReturnValuesOnConditionCheckFailure
// behave like DynamoDB, which returns the item that failed the condition:
// after a failed conditional PutItem it attaches the current item to the
// error, as DynamoDB does in the same response.
type allOld struct {
	*dynamodb.Client
	keys []string // the table's key attributes
}

func (a allOld) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	out, err := a.Client.PutItem(ctx, in, opts...)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) && in.ReturnValuesOnConditionCheckFailure == types.ReturnValuesOnConditionCheckFailureAllOld {
		key := map[string]types.AttributeValue{}
		for _, k := range a.keys {
			if k != "" {
				key[k] = in.Item[k]
			}
		}
		got, gerr := a.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: in.TableName, Key: key, ConsistentRead: aws.Bool(true)})
		if gerr != nil {
			return nil, gerr
		}
		ccf.Item = got.Item
	}
	return out, err
}

// TestTableDesigns: on a table of the app's own design the record is one
// item under the table's own key and TTL attribute, where the design puts
// the record's key; a design the store cannot use is refused on every
// request, before any is sent.
func TestTableDesigns(t *testing.T) {
	srv := dynalite.Start(t)
	client := srv.Client()
	ctx := context.Background()
	for _, d := range designs[1:] {
		t.Run(d.name, func(t *testing.T) {
			table := srv.NewTableKeyed(t, d.partition, d.sort)
			s := dynamostore.New(client, table, d.opts...)
			if s.Err() != nil || fmt.Sprint(s.KeyAttributes()) != fmt.Sprint([]string{d.partition, d.sort}) {
				t.Fatalf("Err %v, KeyAttributes %v", s.Err(), s.KeyAttributes())
			}
			g, _ := idempotency.NewGuard(s, idempotency.Config{Namespace: "shop"})
			if _, err := g.Do(ctx, "order-1", []byte(`{}`), func(context.Context, idempotency.Reservation) (string, error) { return "r", nil }); err != nil {
				t.Fatal(err)
			}
			out, err := client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table)})
			if err != nil || len(out.Items) != 1 {
				t.Fatalf("scan: %d items, %v; want the one record", len(out.Items), err)
			}
			item := out.Items[0]
			if fmt.Sprint(item[d.partition]) != fmt.Sprint(s.ItemKey("shop#order-1")[d.partition]) || fmt.Sprint(item[d.sort]) != fmt.Sprint(s.ItemKey("shop#order-1")[d.sort]) {
				t.Fatalf("item %v: want the key %v", item, s.ItemKey("shop#order-1"))
			}
			holds := func(name string, v string) bool {
				sv, ok := item[name].(*types.AttributeValueMemberS)
				return ok && sv.Value == v
			}
			if !holds(d.partition, "shop#order-1") && !holds(d.sort, "shop#order-1") {
				t.Fatalf("item %v: the record's key is in neither key attribute", item)
			}
			ttl := "ttl"
			if d.name != "single table, sort key from the namespace" {
				ttl = "expiresAt"
			}
			if _, ok := item[ttl].(*types.AttributeValueMemberN); !ok || (ttl != "ttl" && item["ttl"] != nil) || item["pk"] != nil {
				t.Fatalf("item %v: want the TTL in %s and no attribute pk", item, ttl)
			}
		})
	}
	for _, bad := range []struct {
		opts []dynamostore.Option
		want string
	}{
		{[]dynamostore.Option{dynamostore.WithPartitionKey("status")}, `the partition key "status" is an attribute of the record`},
		{[]dynamostore.Option{dynamostore.WithSortKey("owner", func(string) string { return "x" })}, `the sort key "owner" is an attribute of the record`},
		{[]dynamostore.Option{dynamostore.WithTTLAttribute("expires_at")}, `the TTL attribute "expires_at" is an attribute of the record`},
		{[]dynamostore.Option{dynamostore.WithPartitionKey("PK"), dynamostore.WithKeyInSortKey("PK", func(string) string { return "x" })}, `the partition key and the sort key are both "PK"`},
		{[]dynamostore.Option{dynamostore.WithTTLAttribute("pk")}, `the partition key and the TTL attribute are both "pk"`},
	} {
		api := &transactions{}
		s := dynamostore.New(api, "shop", bad.opts...)
		if err := s.Err(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Err() = %v, want it to say %q", err, bad.want)
		}
		g, _ := idempotency.NewGuard(s, idempotency.Config{Namespace: "n"})
		_, err := g.Do(ctx, "k", []byte(`{}`), func(context.Context, idempotency.Reservation) (string, error) { return "", nil })
		if !errors.Is(err, idempotency.ErrStore) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Do over a store that cannot use its design: %v; want an ErrStore saying %q", err, bad.want)
		}
		if err := s.Commit(ctx, idempotency.Record{Key: "n#k"}, time.Now(), nil); err == nil || len(api.sent) != 0 {
			t.Errorf("Commit: %v, %d sent; want it refused before sending", err, len(api.sent))
		}
	}
}

// TestValidatesAgainstDynalite checks the requests the store sends are valid
// DynamoDB requests in every branch, including a result-less completion.
func TestValidatesAgainstDynalite(t *testing.T) {
	srv := dynalite.Start(t)
	s := dynamostore.New(srv.Client(), srv.NewTable(t))
	g, err := idempotency.NewGuard(s, idempotency.Config{Namespace: "n"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Do(context.Background(), "k", []byte(`{}`), func(context.Context, idempotency.Reservation) (string, error) { return "", nil })
	if err != nil || res.Outcome != outcome.Processed {
		t.Fatalf("%+v, %v", res, err)
	}
	rec, err := s.Get(context.Background(), "n#k")
	if err != nil || rec.Status != idempotency.StatusCompleted || rec.Result != "" || !rec.LeaseUntil.IsZero() {
		t.Fatalf("record %+v, %v: want COMPLETED without result or lease", rec, err)
	}
	if err := s.Commit(context.Background(), *rec, rec.ExpiresAt, "not writes"); err == nil {
		t.Fatal("Commit accepted writes of the wrong type")
	}
	if err := s.AcceptsWrites([]types.TransactWriteItem(nil)); err != nil {
		t.Fatalf("AcceptsWrites refused the store's own writes type: %v", err)
	}
	if err := s.AcceptsWrites("not writes"); !errors.Is(err, idempotency.ErrTxInvalid) {
		t.Fatalf("AcceptsWrites(string) = %v, want ErrTxInvalid", err)
	}
}

// items is an API that answers GetItem with item and keeps what PutItem
// writes; with allOld, a PutItem fails its condition and returns item with
// the failure, as DynamoDB does with ReturnValuesOnConditionCheckFailure.
type items struct {
	dynamostore.API
	item, put map[string]types.AttributeValue
	allOld    bool
}

func (i *items) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return &dynamodb.GetItemOutput{Item: i.item}, nil
}

func (i *items) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if i.allOld {
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed"), Item: i.item}
	}
	i.put = in.Item
	return &dynamodb.PutItemOutput{}, nil
}

// record is an item of layout 1 as the store writes it, a COMPLETED record
// of n#k.
func record() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "n#k"}, "status": &types.AttributeValueMemberS{Value: "COMPLETED"},
		"owner": &types.AttributeValueMemberS{Value: "o"}, "expires_at": &types.AttributeValueMemberN{Value: "4000000000"},
		"ttl": &types.AttributeValueMemberN{Value: "4000086400"}, "payload_hash": &types.AttributeValueMemberS{Value: "v2:h"},
		"result": &types.AttributeValueMemberS{Value: "r"}, "layout": &types.AttributeValueMemberN{Value: "1"},
	}
}

// unreadable are records this release cannot read, each a change to a
// record of layout 1: the peer's invalid-status and corrupted-record cases,
// a newer layout, and a record of no layout.
var unreadable = []struct {
	name, reason string
	change       func(map[string]types.AttributeValue)
}{
	{"invalid status", `unknown status "EXPIRED"`, func(m map[string]types.AttributeValue) { m["status"] = &types.AttributeValueMemberS{Value: "EXPIRED"} }},
	{"empty status", `unknown status ""`, func(m map[string]types.AttributeValue) { m["status"] = &types.AttributeValueMemberS{Value: ""} }},
	{"no status", "no status", func(m map[string]types.AttributeValue) { delete(m, "status") }},
	{"status not a string", "status is a N", func(m map[string]types.AttributeValue) { m["status"] = &types.AttributeValueMemberN{Value: "1"} }},
	{"corrupted expiry", `expires_at is "soon"`, func(m map[string]types.AttributeValue) { m["expires_at"] = &types.AttributeValueMemberN{Value: "soon"} }},
	{"expiry a string", "expires_at is a S", func(m map[string]types.AttributeValue) {
		m["expires_at"] = &types.AttributeValueMemberS{Value: "4000000000"}
	}},
	{"no payload hash", "no payload_hash", func(m map[string]types.AttributeValue) { delete(m, "payload_hash") }},
	{"no owner", "no owner", func(m map[string]types.AttributeValue) { delete(m, "owner") }},
	{"result not a string", "result is a BOOL", func(m map[string]types.AttributeValue) { m["result"] = &types.AttributeValueMemberBOOL{Value: true} }},
	{"in progress without a lease", "no lease_until", func(m map[string]types.AttributeValue) {
		m["status"] = &types.AttributeValueMemberS{Value: "IN_PROGRESS"}
	}},
	{"newer layout", "layout 2, newer than this release reads (1)", func(m map[string]types.AttributeValue) { m["layout"] = &types.AttributeValueMemberN{Value: "2"} }},
	{"layout 0", "layout 0, which no release wrote", func(m map[string]types.AttributeValue) { m["layout"] = &types.AttributeValueMemberN{Value: "0"} }},
	{"no layout", "no layout attribute", func(m map[string]types.AttributeValue) { delete(m, "layout") }},
	{"no key", "no pk", func(m map[string]types.AttributeValue) { delete(m, "pk") }},
}

// TestUnreadableRecordsAreErrStore: a record this release cannot read is
// never misread nor taken for a condition failure: Get fails with
// ErrUnreadableRecord, and the guard answers an ErrStore (a function
// error, loud) whether the record came back with the failed condition
// (ALL_OLD, DynamoDB's path) or from the GetItem fallback. The effect never
// runs and nothing is written. Records are written with layout 1.
func TestUnreadableRecordsAreErrStore(t *testing.T) {
	api := &items{item: record()}
	s := dynamostore.New(api, "t")
	if rec, err := s.Get(context.Background(), "n#k"); err != nil || rec.Status != idempotency.StatusCompleted || rec.Result != "r" || rec.PayloadHash != "v2:h" {
		t.Fatalf("a record of layout 1: %+v, %v", rec, err)
	}
	if err := s.Reserve(context.Background(), idempotency.Record{Key: "n#k", Status: idempotency.StatusInProgress, Owner: "o", PayloadHash: "v2:h"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if n, ok := api.put["layout"].(*types.AttributeValueMemberN); !ok || n.Value != "1" {
		t.Fatalf("written layout %#v, want 1", api.put["layout"])
	}
	for _, c := range unreadable {
		for _, allOld := range []bool{true, false} {
			path := map[bool]string{true: "ALL_OLD", false: "GetItem fallback"}[allOld]
			t.Run(c.name+"/"+path, func(t *testing.T) {
				item := record()
				c.change(item)
				api := &items{item: item, allOld: allOld}
				s := dynamostore.New(fallback{api}, "t")
				if !allOld {
					s = dynamostore.New(&conditionFails{api}, "t")
				}
				if rec, err := dynamostore.New(api, "t").Get(context.Background(), "n#k"); !errors.Is(err, idempotency.ErrUnreadableRecord) || !strings.Contains(err.Error(), c.reason) {
					t.Fatalf("Get: %+v, %v; want ErrUnreadableRecord saying %q", rec, err, c.reason)
				}
				g, _ := idempotency.NewGuard(s, idempotency.Config{Namespace: "n"})
				_, err := g.Do(context.Background(), "k", []byte(`{}`), func(context.Context, idempotency.Reservation) (string, error) {
					t.Error("the effect ran over an unreadable record")
					return "", nil
				})
				if !errors.Is(err, idempotency.ErrStore) || !errors.Is(err, idempotency.ErrUnreadableRecord) || errors.Is(err, idempotency.ErrConditionFailed) || !strings.Contains(err.Error(), c.reason) {
					t.Fatalf("Do: %v; want an ErrStore wrapping ErrUnreadableRecord, saying %q", err, c.reason)
				}
			})
		}
	}
}

// fallback is the API of a server that returns the old item with a failed
// condition (allOld set): the guard reads nothing more.
type fallback struct{ *items }

func (f fallback) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return nil, errors.New("GetItem called: the record came back with the failed condition")
}

// conditionFails fails every PutItem's condition without returning the old
// item, as a server that ignores ReturnValuesOnConditionCheckFailure does:
// the guard reads the record with GetItem.
type conditionFails struct{ *items }

func (c *conditionFails) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
}

// transactions is an API that records the transactions it is sent and
// answers them with err.
type transactions struct {
	dynamostore.API
	sent []*dynamodb.TransactWriteItemsInput
	err  error
}

func (x *transactions) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	x.sent = append(x.sent, in)
	if x.err != nil {
		return nil, x.err
	}
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

// apiError is a request-level error as the SDK returns it (smithy's
// GenericAPIError has these methods).
type apiError struct{ code, message string }

func (e *apiError) Error() string        { return e.code + ": " + e.message }
func (e *apiError) ErrorCode() string    { return e.code }
func (e *apiError) ErrorMessage() string { return e.message }

// TestTxOneActionPerItem: two writes on one item (same table, same key), or
// a write on the record's own item, are refused before anything is sent,
// as ErrTxInvalid (the record's failure): DynamoDB refuses them with a
// request-level ValidationException that was a store outage before. Writes
// on distinct items, on other namespaces' items of the idempotency table,
// or two puts on a table whose key the store cannot know are sent; for the
// last, DynamoDB's refusal is mapped to ErrTxInvalid.
func TestTxOneActionPerItem(t *testing.T) {
	s := func(k string) types.AttributeValue { return &types.AttributeValueMemberS{Value: k} }
	update := func(table string, key map[string]types.AttributeValue) types.TransactWriteItem {
		return types.TransactWriteItem{Update: &types.Update{TableName: aws.String(table), Key: key, UpdateExpression: aws.String("ADD #b :n")}}
	}
	put := func(table string, item map[string]types.AttributeValue) types.TransactWriteItem {
		return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: item}}
	}
	check := func(table string, key map[string]types.AttributeValue) types.TransactWriteItem {
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: aws.String(table), Key: key, ConditionExpression: aws.String("attribute_exists(id)")}}
	}
	del := func(table string, key map[string]types.AttributeValue) types.TransactWriteItem {
		return types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(table), Key: key}}
	}
	stock := func(sku string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"sku": s(sku)}
	}
	order := func(pk, sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": s(pk), "sk": s(sk)}
	}
	const arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/Stock"
	rec := idempotency.Record{Key: "wallet#o1", Status: idempotency.StatusCompleted, Owner: "o", PayloadHash: "v2:h"}
	for _, c := range []struct {
		name   string
		writes []types.TransactWriteItem
		want   string // "" when the transaction is sent
	}{
		{"distinct items", []types.TransactWriteItem{update("Stock", stock("a")), update("Stock", stock("b")), put("Orders", order("c1", "o1"))}, ""},
		{"same key, other tables", []types.TransactWriteItem{update("Stock", stock("a")), update("Reserved", stock("a"))}, ""},
		{"another namespace's item of the idempotency table", []types.TransactWriteItem{update("idem", map[string]types.AttributeValue{"pk": s("balance#w1")})}, ""},
		{"two updates of one item", []types.TransactWriteItem{update("Stock", stock("a")), update("Stock", stock("a"))}, `writes 0 and 1 act on one item (table Stock, key sku "a")`},
		{"a condition check and a delete of one item", []types.TransactWriteItem{check("Stock", stock("b")), update("Stock", stock("a")), del("Stock", stock("b"))}, "writes 0 and 2 act on one item"},
		{"a table by name and by ARN", []types.TransactWriteItem{update("Stock", stock("a")), update(arn, stock("a"))}, "writes 0 and 1 act on one item"},
		{"a put and an update of one item, keyed by the update", []types.TransactWriteItem{put("Orders", map[string]types.AttributeValue{"pk": s("c1"), "sk": s("o1"), "total": &types.AttributeValueMemberN{Value: "5"}}), update("Orders", order("c1", "o1"))}, "writes 0 and 1 act on one item"},
		{"a put and an update of two items of one partition", []types.TransactWriteItem{put("Orders", order("c1", "o2")), update("Orders", order("c1", "o1"))}, ""},
		{"an update of the record", []types.TransactWriteItem{update("idem", map[string]types.AttributeValue{"pk": s("wallet#o1")})}, "write 0 acts on the idempotency record's own item"},
		{"a put of the record", []types.TransactWriteItem{update("Stock", stock("a")), put("idem", map[string]types.AttributeValue{"pk": s("wallet#o1"), "x": s("y")})}, "write 1 acts on the idempotency record's own item"},
	} {
		t.Run(c.name, func(t *testing.T) { checkCommit(t, rec, c.writes, c.want) })
	}
	t.Run("two puts on a table no action keys", func(t *testing.T) {
		api := &transactions{err: &apiError{"ValidationException", "Transaction request cannot include multiple operations on one item"}}
		writes := []types.TransactWriteItem{put("Log", map[string]types.AttributeValue{"id": s("1")}), put("Log", map[string]types.AttributeValue{"id": s("1")})}
		err := dynamostore.New(api, "idem").Commit(context.Background(), rec, time.Now(), writes)
		if !errors.Is(err, idempotency.ErrTxInvalid) || len(api.sent) != 1 {
			t.Fatalf("Commit: %v; want DynamoDB's refusal as ErrTxInvalid", err)
		}
		api.err = &apiError{"ValidationException", "One or more parameter values were invalid: Missing the key pk in the item"}
		if err := dynamostore.New(api, "idem").Commit(context.Background(), rec, time.Now(), writes); errors.Is(err, idempotency.ErrTxInvalid) {
			t.Fatalf("Commit: %v; another request-level refusal stays the store's error", err)
		}
	})
	t.Run("through the guard", func(t *testing.T) {
		api := &transactions{}
		g, _ := idempotency.NewGuard(dynamostore.New(api, "idem"), idempotency.Config{Namespace: "wallet"})
		fact, _ := g.Fact("o1", []byte(`{}`))
		_, err := g.RunTx(context.Background(), fact, func(context.Context, idempotency.Reservation) (any, string, error) {
			return []types.TransactWriteItem{update("Stock", stock("a")), update("Stock", stock("a"))}, "", nil
		})
		if !errors.Is(err, idempotency.ErrEffect) || !errors.Is(err, idempotency.ErrTxInvalid) || errors.Is(err, idempotency.ErrStore) || len(api.sent) != 0 {
			t.Fatalf("RunTx: %v; want an ErrEffect wrapping ErrTxInvalid, nothing sent", err)
		}
	})
}

// TestTxBoundsAreDynamoDBs: a transaction DynamoDB would refuse for its
// size (more than limits.MaxTxActions actions, the record's included, or
// items of more than limits.MaxTxBytes in all) is ErrTxInvalid, which says
// the bound, before anything is sent; its neighbour at the bound is sent.
// Before, items of more than 4 MB were sent, and DynamoDB's refusal came
// back as the store's error: retried on every receive.
func TestTxBoundsAreDynamoDBs(t *testing.T) {
	if dynamostore.MaxTxWrites != limits.MaxTxActions-1 {
		t.Fatalf("MaxTxWrites %d, want DynamoDB's %d actions less the record's", dynamostore.MaxTxWrites, limits.MaxTxActions)
	}
	rec := idempotency.Record{Key: "wallet#o1", Status: idempotency.StatusCompleted, Owner: "o", PayloadHash: "v2:h"}
	update := func(i int) types.TransactWriteItem {
		return types.TransactWriteItem{Update: &types.Update{TableName: aws.String("Stock"), Key: map[string]types.AttributeValue{"sku": &types.AttributeValueMemberS{Value: fmt.Sprint(i)}}, UpdateExpression: aws.String("ADD #b :n")}}
	}
	// A put of an item of 400,000 bytes: 10 of them and the record fit 4 MB, 11 do not.
	put := func(i int) types.TransactWriteItem {
		return types.TransactWriteItem{Put: &types.Put{TableName: aws.String("Blobs"), Item: map[string]types.AttributeValue{
			"id": &types.AttributeValueMemberS{Value: fmt.Sprintf("%02d", i)}, "d": &types.AttributeValueMemberS{Value: strings.Repeat("x", 400_000-len("id")-2-len("d"))}}}}
	}
	writes := func(n int, w func(int) types.TransactWriteItem) []types.TransactWriteItem {
		out := make([]types.TransactWriteItem, n)
		for i := range out {
			out[i] = w(i)
		}
		return out
	}
	for _, c := range []struct {
		name   string
		writes []types.TransactWriteItem
		want   string // "" when the transaction is sent
	}{
		{"99 writes and the record", writes(dynamostore.MaxTxWrites, update), ""},
		{"100 writes and the record", writes(limits.MaxTxActions, update), "100 transactional writes, at most 99 (DynamoDB allows 100 actions"},
		{"items of 4 MB with the record", writes(10, put), ""},
		{"items of more than 4 MB", writes(11, put), "more than the 4194304 bytes DynamoDB allows a transaction's items"},
	} {
		t.Run(c.name, func(t *testing.T) { checkCommit(t, rec, c.writes, c.want) })
	}
}

// counted is an API that counts the requests it is sent, none of which it
// answers.
type counted struct {
	dynamostore.API
	n int
}

func (c *counted) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.n++
	return &dynamodb.PutItemOutput{}, nil
}

func (c *counted) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.n++
	return &dynamodb.GetItemOutput{}, nil
}

func (c *counted) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.n++
	return &dynamodb.UpdateItemOutput{}, nil
}

func (c *counted) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.n++
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

// TestARecordKeyLongerThanASortKeyIsBadInput: with the record key in the
// sort key, a key over DynamoDB's 1,024 bytes for a sort key value is bad
// input (ErrInvalidKey, not an ErrStore, which would fail the whole
// batch), refused before any request; the longest that fits is sent, and
// the partition key's design keeps the guard's 2,048.
func TestARecordKeyLongerThanASortKeyIsBadInput(t *testing.T) {
	ctx := context.Background()
	effect := func(context.Context, idempotency.Reservation) (string, error) { return "", nil }
	partition := func(string) string { return "idempotency#shop" }
	for _, tc := range []struct {
		name    string
		opts    []dynamostore.Option
		keyLen  int
		invalid bool
	}{
		{"in the sort key, one byte too long", []dynamostore.Option{dynamostore.WithKeyInSortKey("SK", partition)}, limits.MaxSortKeyBytes - len("shop#") + 1, true},
		{"in the sort key, the longest", []dynamostore.Option{dynamostore.WithKeyInSortKey("SK", partition)}, limits.MaxSortKeyBytes - len("shop#"), false},
		{"in the partition key", []dynamostore.Option{dynamostore.WithSortKey("SK", partition)}, limits.MaxSortKeyBytes, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &counted{}
			g, err := idempotency.NewGuard(dynamostore.New(api, "t", tc.opts...), idempotency.Config{Namespace: "shop"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = g.Do(ctx, strings.Repeat("k", tc.keyLen), []byte(`{}`), effect)
			if tc.invalid {
				if !errors.Is(err, idempotency.ErrInvalidKey) || errors.Is(err, idempotency.ErrStore) || api.n != 0 {
					t.Fatalf("err %v after %d requests; want ErrInvalidKey, no ErrStore, none sent", err, api.n)
				}
				rec := idempotency.Record{Key: "shop#" + strings.Repeat("k", tc.keyLen)}
				s := dynamostore.New(api, "t", tc.opts...)
				if _, err := s.Get(ctx, rec.Key); !errors.Is(err, idempotency.ErrInvalidKey) {
					t.Errorf("Get: %v", err)
				}
				if err := s.Commit(ctx, rec, time.Now(), nil); !errors.Is(err, idempotency.ErrInvalidKey) || api.n != 0 {
					t.Errorf("Commit: %v, %d sent", err, api.n)
				}
				return
			}
			if err != nil || api.n == 0 {
				t.Fatalf("err %v after %d requests; want it sent", err, api.n)
			}
		})
	}
}

// checkCommit commits writes with rec: sent when want is "", else refused
// before sending with ErrTxInvalid saying want.
func checkCommit(t *testing.T, rec idempotency.Record, writes []types.TransactWriteItem, want string) {
	t.Helper()
	api := &transactions{}
	err := dynamostore.New(api, "idem").Commit(context.Background(), rec, time.Now(), writes)
	if want == "" {
		if err != nil || len(api.sent) != 1 {
			t.Fatalf("Commit: %v, %d sent; want the transaction sent", err, len(api.sent))
		}
		return
	}
	if !errors.Is(err, idempotency.ErrTxInvalid) || !strings.Contains(err.Error(), want) || len(api.sent) != 0 {
		t.Fatalf("Commit: %v, %d sent; want ErrTxInvalid saying %q, before sending", err, len(api.sent), want)
	}
}
