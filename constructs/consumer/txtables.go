package consumer

import (
	"fmt"

	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/family"
)

// The tables a transactional effect writes beside its record (DESIGN.md,
// "Effects"): declared on the consumer, with TransactionalTables or
// GrantTransactionalWrites(table, consumer), granted to the function and
// named to the handler (contract.Settings.TxTables; the function building
// block, function.TxTables, does both), which refuses a write to any other
// table before it sends a request. A handler that makes transactional
// writes with no table declared is refused at synth: in AWS every one of
// its writes would be denied. Whether it makes them is read from its
// bootstrap (bundle.LinksTransactions), after bundling.

// undeclaredTxProblem is the rule that a handler which makes transactional
// writes declares the tables they write (linked: its bootstrap links a
// transactional effect; declared: how many tables are declared).
func undeclaredTxProblem(id string, linked bool, declared int) []string {
	if !linked || declared > 0 {
		return nil
	}
	return []string{fmt.Sprintf("IdempotentConsumer %q: the handler makes transactional writes (its bootstrap links sqsbatch.NewTx, which sqsbatch.StartTx and sqsbatch.FromEnvTx call), but the consumer declares no table for them, so the function may write none: in AWS every write would be denied (AccessDenied) and every record end in the dead-letter queue; rule: a transactional effect's tables are declared on the consumer, which grants them and names them to the handler; fix: set TransactionalTables to the tables the effect writes (the consumer's shared Table too, if the effect writes its business items: that grant excludes the records of the table's other consumers), or call consumer.GrantTransactionalWrites(table, theConsumer) for each",
		id)}
}

// strongTxProblem is the rule that a consumer on an MRSC table, which
// supports no transactions, neither links a transactional effect nor
// declares tables for one (GrantTransactionalWrites; TransactionalTables
// is refused with the props).
func strongTxProblem(id string, strong, linked bool, declared int) []string {
	switch {
	case !strong:
		return nil
	case linked:
		return []string{fmt.Sprintf("IdempotentConsumer %q: %s", id, family.TransactionsProblem("the handler makes transactional writes (its bootstrap links sqsbatch.NewTx, which sqsbatch.StartTx and sqsbatch.FromEnvTx call)"))}
	case declared > 0:
		return []string{fmt.Sprintf("IdempotentConsumer %q: %s", id, family.TransactionsProblem("GrantTransactionalWrites declares a table for a transactional effect"))}
	}
	return nil
}

// txValidation refuses, at synth (after every GrantTransactionalWrites of
// the app), a transactional handler without a declared table, and any
// transactional effect on an MRSC table.
type txValidation struct{ c *idempotentConsumer }

// Validate implements constructs.IValidation.
func (v *txValidation) Validate() *[]*string {
	id := *v.c.Node().Id()
	if p := strongTxProblem(id, v.c.strong, v.c.txLinked, v.c.tx.Len()); p != nil {
		return jsii.Strings(p...)
	}
	return jsii.Strings(undeclaredTxProblem(id, v.c.txLinked, v.c.tx.Len())...)
}
