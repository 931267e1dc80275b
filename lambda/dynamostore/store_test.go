package dynamostore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/dynalite"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// TestConformanceDynalite runs the store suite against a real
// DynamoDB-compatible server (dynalite) started on a loopback port. dynalite
// ignores ReturnValuesOnConditionCheckFailure, so this exercises the GetItem
// fallback; it has no transactions (those run on kumo, in ./test).
func TestConformanceDynalite(t *testing.T) {
	srv := dynalite.Start(t)
	client := srv.Client()
	t.Run("GetFallback", func(t *testing.T) {
		storetest.Run(t, storetest.Harness{NewStore: func(t *testing.T) idempotency.Store {
			return dynamostore.New(client, srv.NewTable(t))
		}})
	})
	t.Run("OldItemReturned", func(t *testing.T) {
		storetest.Run(t, storetest.Harness{NewStore: func(t *testing.T) idempotency.Store {
			return dynamostore.New(allOld{client}, srv.NewTable(t))
		}})
	})
}

// allOld makes a server that ignores ReturnValuesOnConditionCheckFailure
// behave like DynamoDB, which returns the item that failed the condition:
// after a failed conditional PutItem it attaches the current item to the
// error, as DynamoDB does in the same response.
type allOld struct{ *dynamodb.Client }

func (a allOld) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	out, err := a.Client.PutItem(ctx, in, opts...)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) && in.ReturnValuesOnConditionCheckFailure == types.ReturnValuesOnConditionCheckFailureAllOld {
		got, gerr := a.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: in.TableName, Key: map[string]types.AttributeValue{"pk": in.Item["pk"]}, ConsistentRead: aws.Bool(true)})
		if gerr != nil {
			return nil, gerr
		}
		ccf.Item = got.Item
	}
	return out, err
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
	if err != nil || res.Outcome != idempotency.Processed {
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

// TestUnreadableRecordsAreStoreErrors: a record this release cannot read is
// never misread nor taken for a condition failure: Get fails with
// ErrUnreadableRecord, and the guard answers a *StoreError (a function
// error, loud) whether the record came back with the failed condition
// (ALL_OLD, DynamoDB's path) or from the GetItem fallback. The effect never
// runs and nothing is written. Records are written with layout 1.
func TestUnreadableRecordsAreStoreErrors(t *testing.T) {
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
				var se *idempotency.StoreError
				if !errors.As(err, &se) || !errors.Is(err, idempotency.ErrUnreadableRecord) || errors.Is(err, idempotency.ErrConditionFailed) || !strings.Contains(err.Error(), c.reason) {
					t.Fatalf("Do: %v; want a *StoreError wrapping ErrUnreadableRecord, saying %q", err, c.reason)
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
