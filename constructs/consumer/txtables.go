package consumer

import (
	"fmt"

	"github.com/aws/jsii-runtime-go"
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

// txValidation refuses, at synth (after every GrantTransactionalWrites of
// the app), a transactional handler without a declared table.
type txValidation struct{ c *idempotentConsumer }

// Validate implements constructs.IValidation.
func (v *txValidation) Validate() *[]*string {
	return jsii.Strings(undeclaredTxProblem(*v.c.Node().Id(), v.c.txLinked, v.c.tx.Len())...)
}
