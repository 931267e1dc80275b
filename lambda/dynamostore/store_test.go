package dynamostore_test

import (
	"context"
	"errors"
	"testing"

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
}
