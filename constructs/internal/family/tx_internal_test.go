package family

import (
	"strings"
	"testing"
)

// TestTxValidationRefusesWhatCannotRun: a handler that links a
// transactional effect with no table declared, or on an MRSC table, and a
// table declared for one on an MRSC table, are refused, each with the
// construct's name, why and the fix; the construct's later grant is named
// only where the construct has one.
func TestTxValidationRefusesWhatCannotRun(t *testing.T) {
	queue := Kind{Name: "IdempotentConsumer", TxGrant: "consumer.GrantTransactionalWrites"}
	stream := Kind{Name: "IdempotentStreamConsumer"}
	for _, tc := range []struct {
		name           string
		v              TxValidation
		declared       int
		want, dontWant []string
	}{
		{"undeclared", TxValidation{Kind: queue, ID: "ReserveStock", Linked: true}, 0,
			[]string{`IdempotentConsumer "ReserveStock": the handler makes transactional writes`, "declares no table for them", "AccessDenied",
				"fix: set TransactionalTables to the tables the effect writes", "consumer.GrantTransactionalWrites(table, theConsumer)"}, nil},
		{"undeclared stream", TxValidation{Kind: stream, ID: "Ship", Linked: true}, 0,
			[]string{`IdempotentStreamConsumer "Ship": the handler makes transactional writes`, "fix: set TransactionalTables"},
			[]string{"GrantTransactionalWrites"}},
		{"declared", TxValidation{Kind: queue, ID: "ReserveStock", Linked: true}, 1, nil, nil},
		{"plain", TxValidation{Kind: queue, ID: "EmailCustomer"}, 0, nil, nil},
		{"linked on MRSC", TxValidation{Kind: stream, ID: "Ship", Linked: true, Strong: true}, 1,
			[]string{`IdempotentStreamConsumer "Ship": the handler makes transactional writes`, "multi-Region strong consistency (MRSC), which supports no transaction operations"}, nil},
		{"granted on MRSC", TxValidation{Kind: queue, ID: "Charge", Strong: true, Grant: queue.TxGrant}, 1,
			[]string{`IdempotentConsumer "Charge": consumer.GrantTransactionalWrites declares a table for a transactional effect, but the idempotency table is in multi-Region strong consistency`}, nil},
		{"plain on MRSC", TxValidation{Kind: stream, ID: "Ship", Strong: true}, 0, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			declared := tc.declared
			tc.v.Declared = func() int { return declared }
			if tc.v.Grant == "" {
				tc.v.Grant = tc.v.Kind.TxGrant
			}
			got := strings.Join(tc.v.problems(), "\n")
			if tc.want == nil && got != "" {
				t.Fatalf("refused: %s", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("refusal does not say %q:\n%s", w, got)
				}
			}
			for _, w := range tc.dontWant {
				if strings.Contains(got, w) {
					t.Errorf("refusal says %q:\n%s", w, got)
				}
			}
		})
	}
}
