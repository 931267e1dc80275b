package consumer

import (
	"bytes"
	"debug/elf"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
)

// The tables a transactional effect writes beside its record (DESIGN.md,
// "Effects"): declared on the consumer, with TransactionalTables or
// GrantTransactionalWrites(table, consumer), granted to the function and
// named to the handler (contract.Settings.TxTables), which refuses a write
// to any other table before it sends a request. A handler that makes
// transactional writes with no table declared is refused at synth: in AWS
// every one of its writes would be denied.

// txTables is what a consumer knows of its transactional effect.
type txTables struct {
	// declared are the tables declared, in order, once each.
	declared []awsdynamodb.ITable
	// linked: the handler's bootstrap links a transactional effect.
	linked bool
}

// txMarker is the name, in a Go binary's function table, of the function
// every transactional handler of the library goes through: sqsbatch.NewTx,
// which handler.NewTx and handler.StartTx call. It is generic, so a binary
// holds it (as an instantiation, "NewTx[go.shape…]") only when some code
// reachable from main instantiates it; the function table keeps the names
// of inlined functions too, for tracebacks.
const txMarker = libraryPath + "/lambda/sqsbatch.NewTx["

// linksTransactions reports whether the Linux bootstrap at path holds a
// transactional effect: whether its function table (the .gopclntab
// section, which a Go binary keeps when stripped with -s -w, because the
// runtime needs it) names txMarker. Its limits: a handler that drives
// idempotency.Guard.RunTx itself, without sqsbatch, is not seen; a binary
// that links the transactional path without ever taking it (a main that
// chooses at run time) is seen as transactional.
func linksTransactions(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return false, fmt.Errorf("read the bootstrap %s: %w", path, err)
	}
	defer f.Close()
	s := f.Section(".gopclntab")
	if s == nil {
		return false, fmt.Errorf("the bootstrap %s has no Go function table (.gopclntab)", path)
	}
	data, err := s.Data()
	if err != nil {
		return false, fmt.Errorf("read the function table of the bootstrap %s: %w", path, err)
	}
	return bytes.Contains(data, []byte(txMarker)), nil
}

// txTableProblems checks TransactionalTables: no nil entries.
func txTableProblems(tables *[]awsdynamodb.ITable) []string {
	if tables == nil {
		return nil
	}
	var problems []string
	for i, t := range *tables {
		if t == nil {
			problems = append(problems, fmt.Sprintf("TransactionalTables[%d] is nil; remove it, or give the table the transactional effect writes", i))
		}
	}
	return problems
}

// undeclaredTxProblem is the rule that a handler which makes transactional
// writes declares the tables they write (linked: its bootstrap links a
// transactional effect; declared: how many tables are declared).
func undeclaredTxProblem(id string, linked bool, declared int) []string {
	if !linked || declared > 0 {
		return nil
	}
	return []string{fmt.Sprintf("IdempotentConsumer %q: the handler makes transactional writes (its bootstrap links sqsbatch.NewTx, which handler.StartTx and handler.NewTx call), but the consumer declares no table for them, so the function may write none: in AWS every write would be denied (AccessDenied) and every record end in the dead-letter queue; rule: a transactional effect's tables are declared on the consumer, which grants them and names them to the handler; fix: set TransactionalTables to the tables the effect writes (the shared Table too, if it writes there), or call consumer.GrantTransactionalWrites(table, theConsumer) for each",
		id)}
}

// addTxTables declares the tables of TransactionalTables, reads whether the
// bootstrap links a transactional effect, and checks at synth (after every
// GrantTransactionalWrites of the app) that one without tables declares
// some.
func (c *idempotentConsumer) addTxTables(tables *[]awsdynamodb.ITable, bootstrap string) {
	linked, err := linksTransactions(bootstrap)
	if err != nil {
		panic(fmt.Errorf("IdempotentConsumer %q: %w", *c.Node().Id(), err))
	}
	c.tx.linked = linked
	if tables != nil {
		for _, t := range *tables {
			if t != nil {
				c.declareTxTable(t, true)
			}
		}
	}
	c.Node().AddValidation(&txValidation{c})
}

// declareTxTable declares table once: it is granted (when grant is set, and
// the table is not the consumer's own record table, which has its grants)
// and its name joins the function's TxTablesVar.
func (c *idempotentConsumer) declareTxTable(table awsdynamodb.ITable, grant bool) {
	for _, t := range c.tx.declared {
		if *t.Node().Path() == *table.Node().Path() {
			return
		}
	}
	c.tx.declared = append(c.tx.declared, table)
	if grant && *table.Node().Path() != *c.table.Node().Path() {
		grantTransactionalWrites(table, c)
	}
	names := make([]*string, len(c.tx.declared))
	for i, t := range c.tx.declared {
		names[i] = t.TableName()
	}
	c.function.AddEnvironment(jsii.String(contract.TxTablesVar), awscdk.Fn_Join(jsii.String(","), &names), nil)
}

// txValidation refuses, at synth, a transactional handler without a
// declared table.
type txValidation struct{ c *idempotentConsumer }

// Validate implements constructs.IValidation.
func (v *txValidation) Validate() *[]*string {
	return jsii.Strings(undeclaredTxProblem(*v.c.Node().Id(), v.c.tx.linked, len(v.c.tx.declared))...)
}
