package build_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// dynamoWrites is a TxStore that takes DynamoDB's writes, as the DynamoDB
// store does, and counts the commits that reach it (each would be a
// request).
type dynamoWrites struct {
	*storetest.MemoryStore
	commits atomic.Int64 // a batch's records commit concurrently
}

func (d *dynamoWrites) AcceptsWrites(writes any) error {
	if _, ok := writes.([]types.TransactWriteItem); !ok {
		return fmt.Errorf("%w: %T", idempotency.ErrTxInvalid, writes)
	}
	return nil
}

func (d *dynamoWrites) Commit(ctx context.Context, rec idempotency.Record, now time.Time, writes any) error {
	d.commits.Add(1)
	return d.MemoryStore.Commit(ctx, rec, now, nil)
}

// TestUndeclaredTableIsLoud: with declared tables (TxTables), a
// transactional write to another table is refused before any request, as
// a store error that fails the invocation (although the batch's other
// record committed) and names the table, the variable and the prop; so is
// a write to the idempotency table when it is not declared (its role may
// write only its records then; before, the handler let it through, to be
// denied in AWS); writes to a declared table, to one given by its ARN and
// to the idempotency table when declared commit, and with nothing declared
// nothing is checked.
func TestUndeclaredTableIsLoud(t *testing.T) {
	run := func(t *testing.T, declared []string, tables func(order) []string) (*dynamoWrites, events.SQSEventResponse, error) {
		s := settings()
		s.TxTables = declared
		store := &dynamoWrites{MemoryStore: storetest.NewMemoryStore()}
		var logs strings.Builder
		h, err := sqsbatch.FromEnvTx(orderKey, func(_ context.Context, o order, _ idempotency.Reservation) ([]types.TransactWriteItem, string, error) {
			var w []types.TransactWriteItem
			for _, table := range tables(o) {
				w = append(w, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table)}})
			}
			return w, "ok", nil
		}, getenv(s.Encode()), handler.WithStore(store), handler.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))), handler.WithMetrics(io.Discard))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{
			{MessageId: "m1", Body: `{"orderId":"o-1","amount":5}`},
			{MessageId: "m2", Body: `{"orderId":"o-2","amount":5}`},
		}})
		return store, resp, err
	}
	t.Run("the idempotency table, undeclared", func(t *testing.T) {
		store, _, err := run(t, []string{"Stock"}, func(o order) []string {
			if o.OrderID == "o-2" {
				return []string{"Stock", "idempotency"}
			}
			return []string{"Stock"}
		})
		if !errors.Is(err, build.ErrUndeclaredTable) {
			t.Fatalf("Handle: %v; want ErrUndeclaredTable", err)
		}
		for _, want := range []string{`the consumer's idempotency table`, `"idempotency"`, `add "idempotency" to the construct's TransactionalTables prop`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Handle: %v; want it to say %q", err, want)
			}
		}
		if store.commits.Load() != 1 {
			t.Errorf("%d commits reached the store; want only the declared record's", store.commits.Load())
		}
	})
	t.Run("undeclared", func(t *testing.T) {
		store, _, err := run(t, []string{"Stock"}, func(o order) []string {
			if o.OrderID == "o-2" {
				return []string{"Stock", "Orders"}
			}
			return []string{"Stock"}
		})
		if !errors.Is(err, idempotency.ErrStore) || !errors.Is(err, build.ErrUndeclaredTable) {
			t.Fatalf("Handle: %v; want a function error, a store error wrapping ErrUndeclaredTable", err)
		}
		for _, want := range []string{`the table "Orders"`, "IDEMPOTENCY_TX_TABLES=Stock", `add "Orders" to the construct's TransactionalTables prop`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Handle: %v; want it to say %q", err, want)
			}
		}
		if store.commits.Load() != 1 {
			t.Errorf("%d commits reached the store; want only the declared record's", store.commits.Load())
		}
	})
	for name, tc := range map[string]struct{ declared, tables []string }{
		"declared":                        {[]string{"Stock", "Orders"}, []string{"Stock", "Orders"}},
		"declared, by its ARN":            {[]string{"Stock"}, []string{"arn:aws:dynamodb:eu-west-1:123456789012:table/Stock"}},
		"the idempotency table, declared": {[]string{"Stock", "idempotency"}, []string{"idempotency", "Stock"}},
		"nothing declared":                {nil, []string{"Anything"}},
	} {
		t.Run(name, func(t *testing.T) {
			store, resp, err := run(t, tc.declared, func(order) []string { return tc.tables })
			if err != nil || len(resp.BatchItemFailures) != 0 || store.commits.Load() != 2 {
				t.Fatalf("Handle: %v, %v, %d commits; want both records committed", resp, err, store.commits.Load())
			}
		})
	}
}

// TestNoDeclaredTablesWarns: a transactional handler on the DynamoDB table
// without declared tables (a handler deployed by other means) checks no
// table and says so at init, once, naming the variable and the prop; on a
// store of the caller's it says nothing.
func TestNoDeclaredTablesWarns(t *testing.T) {
	effect := func(context.Context, order, idempotency.Reservation) ([]types.TransactWriteItem, string, error) {
		return nil, "", nil
	}
	for name, opt := range map[string]handler.Option{
		"the DynamoDB store":  handler.WithAWSConfig(aws.Config{Region: "eu-west-1"}),
		"a store of the test": handler.WithStore(&dynamoWrites{MemoryStore: storetest.NewMemoryStore()}),
	} {
		t.Run(name, func(t *testing.T) {
			var logs strings.Builder
			if _, err := sqsbatch.FromEnvTx(orderKey, effect, getenv(settings().Encode()), opt,
				handler.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil)))); err != nil {
				t.Fatal(err)
			}
			warned := strings.Count(logs.String(), `"level":"WARN"`) == 1 &&
				strings.Contains(logs.String(), contract.TxTablesVar+" is not set") && strings.Contains(logs.String(), "TransactionalTables")
			if want := name == "the DynamoDB store"; warned != want {
				t.Errorf("warned %v, want %v:\n%s", warned, want, logs.String())
			}
		})
	}
}
