package family

import (
	"fmt"
	"path/filepath"

	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/bundle"
)

// The tables a transactional effect writes beside its record (DESIGN.md,
// "Effects") are declared on the construct (TransactionalTables, or the
// queue consumer's GrantTransactionalWrites), granted to the function and
// named to the handler. Whether the handler makes transactional writes is
// read from its bootstrap (bundle.LinksTransactions) once it is built, the
// same way for every member of the family: a handler that makes them with
// no table declared, or on an MRSC table (which has no transactions), is
// refused at synth.

// linksTx is how a refusal names what the bootstrap links.
const linksTx = "the handler makes transactional writes (its bootstrap links the library's transactional effect, which the StartTx, FromEnvTx and NewTx of sqsbatch, eventbridge, kinesis and dynamodbstream call)"

// TxLinked reports whether the bootstrap in the asset directory dir links
// a transactional effect; it panics, as a builder does, when the bootstrap
// cannot be read.
func (s *Settings) TxLinked(dir string) bool {
	linked, err := bundle.LinksTransactions(filepath.Join(dir, "bootstrap"))
	if err != nil {
		panic(fmt.Errorf("%s %q: %w", s.Kind.Name, s.ID, err))
	}
	return linked
}

// TxValidation refuses, at synth (after every declaration of the app), a
// handler that makes transactional writes with no table declared for them,
// and any transactional effect on an MRSC table. Add it to the construct's
// node.
type TxValidation struct {
	Kind Kind
	// ID is the construct id; Strong: the table is MRSC; Linked: the
	// bootstrap links a transactional effect.
	ID             string
	Strong, Linked bool
	// Declared counts the tables declared for the effect when the app is
	// synthesized; Grant is Kind.TxGrant.
	Declared func() int
	Grant    string
}

// Validate implements constructs.IValidation.
func (v *TxValidation) Validate() *[]*string {
	return jsii.Strings(v.problems()...)
}

// problems are the refusals of Validate, each with the construct's name.
func (v *TxValidation) problems() []string {
	declared := v.Declared()
	name := fmt.Sprintf("%s %q: ", v.Kind.Name, v.ID)
	switch {
	case v.Strong && v.Linked:
		return []string{name + TransactionsProblem(linksTx)}
	case v.Strong && declared > 0 && v.Grant != "":
		return []string{name + TransactionsProblem(v.Grant+" declares a table for a transactional effect")}
	case v.Linked && declared == 0:
		return []string{name + undeclaredTx(v.Grant)}
	}
	return nil
}

// undeclaredTx is the refusal of a transactional handler with no table
// declared; grant is the construct's way to declare one later, if any.
func undeclaredTx(grant string) string {
	fix := "set TransactionalTables to the tables the effect writes (the construct's shared Table too, if the effect writes its business items: that grant excludes the records of the table's other consumers)"
	if grant != "" {
		fix += ", or call " + grant + "(table, theConsumer) for each"
	}
	return linksTx + ", but the construct declares no table for them, so the function may write none: in AWS every write would be denied (AccessDenied) and every record fail; rule: a transactional effect's tables are declared on the construct, which grants them and names them to the handler; fix: " + fix
}
