package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orders"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

type puts struct {
	items []map[string]types.AttributeValue
	table string
	fail  error
}

func (p *puts) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if p.fail != nil {
		return nil, p.fail
	}
	p.table = aws.ToString(in.TableName)
	p.items = append(p.items, in.Item)
	return &dynamodb.PutItemOutput{}, nil
}

// TestTheChargeWritesTheOrderToTheOutbox: the effect writes the charged
// order, with the payment's id, after the charge; the same item on a rerun
// (the stream's consumer absorbs the rewrite); a failed write fails the
// effect, to be retried, and says the order is charged.
func TestTheChargeWritesTheOrderToTheOutbox(t *testing.T) {
	api := &puts{}
	p := &payments{logger: slog.New(slog.DiscardHandler), outbox: &outbox{api: api, table: "Orders"}}
	o := orders.Order{OrderID: "o-1", CustomerID: "c1", Amount: 5000, Currency: "EUR"}
	r := idempotency.Reservation{Key: "charge#o-1"}
	for range 2 {
		if _, err := p.charge(context.Background(), o, r); err != nil {
			t.Fatal(err)
		}
	}
	if api.table != "Orders" || len(api.items) != 2 {
		t.Fatalf("%d puts in %q, want 2 in Orders", len(api.items), api.table)
	}
	first := api.items[0]
	if first["status"].(*types.AttributeValueMemberS).Value != StatusCharged || first["amount"].(*types.AttributeValueMemberN).Value != "5000" ||
		!strings.HasPrefix(first["chargeId"].(*types.AttributeValueMemberS).Value, "ch_sandbox_") {
		t.Errorf("item %#v", first)
	}
	if second := api.items[1]; second["chargeId"].(*types.AttributeValueMemberS).Value != first["chargeId"].(*types.AttributeValueMemberS).Value {
		t.Errorf("a rerun wrote another charge id: %v then %v", first["chargeId"], second["chargeId"])
	}
	api.fail = errors.New("throttled")
	if _, err := p.charge(context.Background(), o, r); err == nil || !strings.Contains(err.Error(), "charged") || !errors.Is(err, api.fail) {
		t.Errorf("failed put: %v, want the effect's error naming the charge", err)
	}
}
