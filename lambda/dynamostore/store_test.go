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
// writes.
type items struct {
	dynamostore.API
	item, put map[string]types.AttributeValue
}

func (i *items) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return &dynamodb.GetItemOutput{Item: i.item}, nil
}

func (i *items) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	i.put = in.Item
	return &dynamodb.PutItemOutput{}, nil
}

// TestRecordLayoutVersions: records carry their layout version; records
// written before it existed (no attribute) read as layout 1, and a record of
// a newer layout is refused rather than misread.
func TestRecordLayoutVersions(t *testing.T) {
	api := &items{}
	s := dynamostore.New(api, "t")
	if err := s.Reserve(context.Background(), idempotency.Record{Key: "n#k", Status: idempotency.StatusInProgress, Owner: "o", PayloadHash: "v2:h"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if n, ok := api.put["layout"].(*types.AttributeValueMemberN); !ok || n.Value != "1" {
		t.Fatalf("written layout %#v, want 1", api.put["layout"])
	}
	previous := map[string]types.AttributeValue{ // as the release before layouts wrote it
		"pk": &types.AttributeValueMemberS{Value: "n#k"}, "status": &types.AttributeValueMemberS{Value: "COMPLETED"},
		"owner": &types.AttributeValueMemberS{Value: "o"}, "expires_at": &types.AttributeValueMemberN{Value: "2000000000"},
		"ttl": &types.AttributeValueMemberN{Value: "2000086400"}, "payload_hash": &types.AttributeValueMemberS{Value: "dUPEFpLwNSk8yoOJ3ZdyEXhzX5jQyID04GlYqlf6twA"},
		"result": &types.AttributeValueMemberS{Value: "r"},
	}
	api.item = previous
	if rec, err := s.Get(context.Background(), "n#k"); err != nil || rec.Status != idempotency.StatusCompleted || rec.Result != "r" || rec.PayloadHash != "dUPEFpLwNSk8yoOJ3ZdyEXhzX5jQyID04GlYqlf6twA" {
		t.Fatalf("a record without layout: %+v, %v", rec, err)
	}
	previous["layout"] = &types.AttributeValueMemberN{Value: "2"}
	if rec, err := s.Get(context.Background(), "n#k"); err == nil || !strings.Contains(err.Error(), "layout 2") {
		t.Fatalf("a record of a newer layout: %+v, %v; want an error", rec, err)
	}
}
