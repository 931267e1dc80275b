package build

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// ErrUndeclaredTable means a transactional effect wrote to a table that the
// contract does not declare (contract.Settings.TxTables, set from the
// construct's TransactionalTables prop): a misconfiguration, refused before
// any request, as a store error (an idempotency.ErrStore wrapping it).
// It wraps outcome.ErrMisconfigured, so that the batch fails as a whole:
// the errors alarm sees it, never a record's quiet failure.
var ErrUndeclaredTable = fmt.Errorf("%w: transactional write to a table that is not declared", outcome.ErrMisconfigured)

// declaredTables is a TxStore that commits only writes to the declared
// tables.
type declaredTables struct {
	idempotency.TxStore
	own      string // the idempotency table, named in the refusal
	declared map[string]bool
	list     string
}

// declareTables returns store, refusing transactional writes to any table
// but tables. The idempotency table, own, counts only when it is listed:
// the role may write its other items (a shared table's business items)
// only when the construct grants them, which it does when the consumer
// declares the table; the record itself is the store's to write, and an
// effect's write on the record's own item is the store's refusal.
func declareTables(store idempotency.TxStore, own string, tables []string) idempotency.TxStore {
	d := declaredTables{TxStore: store, own: own, declared: map[string]bool{}, list: strings.Join(tables, ", ")}
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
				what := "the table"
				if table == d.own {
					what = "the consumer's idempotency table, whose items other than its records the role may write only when it is declared:"
				}
				return fmt.Errorf("%w: write %d of the transactional effect is to %s %q, and the consumer declares only %s (%s=%s); add %q to the construct's %s prop, which also grants the function's role its writes",
					ErrUndeclaredTable, i, what, table, d.list, f.Var, strings.ReplaceAll(d.list, ", ", ","), table, f.Prop)
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
