package main

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orders"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orderstest"
	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

func TestCreditIsOneIncrement(t *testing.T) {
	w := wallets{table: "Wallets"}
	writes, result, err := w.credit(context.Background(), orders.Order{OrderID: "1", CustomerID: "c7", Amount: 12345, Currency: "EUR"}, idempotency.Reservation{})
	if err != nil {
		t.Fatal(err)
	}
	items := writes
	if len(items) != 1 || items[0].Update == nil {
		t.Fatalf("writes %#v: want one Update", writes)
	}
	u := items[0].Update
	key := u.Key[schema.Key].(*types.AttributeValueMemberS).Value
	n := u.ExpressionAttributeValues[":n"].(*types.AttributeValueMemberN).Value
	if aws.ToString(u.TableName) != "Wallets" || key != "balance#c7" || n != "123" || aws.ToString(u.UpdateExpression) != "ADD #balance :n" || result != "credited 123" {
		t.Fatalf("update %s %s +%s (%q), result %q", aws.ToString(u.TableName), key, n, aws.ToString(u.UpdateExpression), result)
	}
	if _, err := orders.Key(orders.Order{OrderID: "2", CustomerID: "c7", Amount: 0, Currency: "EUR"}); !errors.Is(err, outcome.ErrBadInput) {
		t.Fatalf("zero amount: %v, want bad input from the key function", err)
	}
	if got := cashback(orders.Order{Amount: 50}); got != 1 {
		t.Fatalf("cashback of a small order: %d, want at least 1", got)
	}
}

// TestInvalidOrdersCostNoStoreRequest: an order no retry can fix is bad
// input before the store, on every delivery.
func TestInvalidOrdersCostNoStoreRequest(t *testing.T) {
	orderstest.RefusedBeforeTheStore(t, func(opts ...handler.Option) (*sqsbatch.Handler[orders.Order], error) {
		return sqsbatch.FromEnvTx(orders.Key, wallets{table: "Wallets"}.credit, opts...)
	}, func() idempotency.TxStore { return dropWrites{storetest.NewMemoryStore()} }, nil)
}

// dropWrites commits the record of a transactional effect without its
// DynamoDB writes, which a memory store cannot apply.
type dropWrites struct{ *storetest.MemoryStore }

// AcceptsWrites takes the wallet's DynamoDB writes, which Commit drops.
func (s dropWrites) AcceptsWrites(writes any) error {
	if _, ok := writes.([]types.TransactWriteItem); !ok {
		return fmt.Errorf("%w: writes are %T", idempotency.ErrTxInvalid, writes)
	}
	return nil
}

func (s dropWrites) Commit(ctx context.Context, rec idempotency.Record, now time.Time, _ any) error {
	return s.MemoryStore.Commit(ctx, rec, now, nil)
}
