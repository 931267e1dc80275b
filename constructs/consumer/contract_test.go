package consumer_test

import (
	"slices"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
)

// TestEveryContractVariableIsKnown: the construct knows (sets, and refuses
// in Environment) every variable of the runtime contract, so that a
// variable added to the contract cannot be forgotten here.
func TestEveryContractVariableIsKnown(t *testing.T) {
	names, known := contract.Names(), consumer.ContractVariables()
	slices.Sort(names)
	slices.Sort(known)
	if !slices.Equal(names, known) {
		t.Fatalf("the contract names %v,\nthe construct knows %v", names, known)
	}
}
