package contract_test

import (
	"fmt"

	"github.com/idempotent-consumer/idempotent-consumer/contract"
)

// A handler test's environment: a DynamoDB stream consumer's, every other
// setting at its default. A handler reads it through
// handler.WithGetenv(env.Getenv).
func ExampleNewEnv() {
	env := contract.NewEnv("orders-idempotency", "confirm")
	env[contract.SourceVar] = string(contract.SourceDynamoDBStreams)
	env[contract.StreamRemovesVar] = string(contract.RemoveSkip)
	fmt.Println(env.Getenv(contract.TableVar), env.Getenv(contract.StreamRemovesVar), env.Getenv(contract.WindowVar) == "")
	// Output: orders-idempotency skip true
}
