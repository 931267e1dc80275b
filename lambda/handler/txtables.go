package handler

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// ErrUndeclaredTable means a transactional effect wrote to a table that the
// contract does not declare (contract.Settings.TxTables, set from the
// construct's TransactionalTables prop): a misconfiguration, refused before
// any request, as a store error (an *idempotency.StoreError wrapping it).
// It wraps sqsbatch.ErrMisconfigured, so that the batch fails as a whole:
// the errors alarm sees it, never a record's quiet failure.
var ErrUndeclaredTable = fmt.Errorf("%w: transactional write to a table that is not declared", sqsbatch.ErrMisconfigured)

// declaredTables is a TxStore that commits only writes to the idempotency
// table and the declared tables.
type declaredTables struct {
	idempotency.TxStore
	declared map[string]bool
	list     string
}

// declareTables returns store, refusing transactional writes to any table
// but own and tables.
func declareTables(store idempotency.TxStore, own string, tables []string) idempotency.TxStore {
	d := declaredTables{TxStore: store, declared: map[string]bool{own: true}, list: strings.Join(tables, ", ")}
	for _, t := range tables {
		d.declared[t] = true
	}
	return d
}

// Commit implements idempotency.TxStore: DynamoDB writes
// ([]types.TransactWriteItem) to a table not declared are refused without
// a request; writes of another type are the store's to check.
func (d declaredTables) Commit(ctx context.Context, rec idempotency.Record, now time.Time, writes any) error {
	if items, ok := writes.([]types.TransactWriteItem); ok {
		for i, it := range items {
			if table := tableOf(it); table != "" && !d.declared[table] {
				f, _ := contract.FieldOf(contract.TxTablesVar)
				return fmt.Errorf("%w: write %d of the transactional effect is to the table %q, and the consumer declares only %s (%s=%s); add %q to the construct's %s prop, which also grants the function's role its writes",
					ErrUndeclaredTable, i, table, d.list, f.Var, strings.ReplaceAll(d.list, ", ", ","), table, f.Prop)
			}
		}
	}
	return d.TxStore.Commit(ctx, rec, now, writes)
}

// tableOf returns the table name of a write, or "" for a malformed one (the
// store refuses it). A table given by its ARN is named by the ARN's last
// part ("arn:aws:dynamodb:…:table/Stock" is "Stock").
func tableOf(it types.TransactWriteItem) string {
	var name *string
	switch {
	case it.Put != nil:
		name = it.Put.TableName
	case it.Update != nil:
		name = it.Update.TableName
	case it.Delete != nil:
		name = it.Delete.TableName
	case it.ConditionCheck != nil:
		name = it.ConditionCheck.TableName
	}
	if name == nil {
		return ""
	}
	if strings.HasPrefix(*name, "arn:") {
		if _, table, ok := strings.Cut(*name, ":table/"); ok {
			return table
		}
	}
	return *name
}
