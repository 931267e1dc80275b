// Command idemctl operates an idempotent consumer: show a fact's record,
// forget one (audited), redrive the dead-letter queue, count the outcomes.
// See package ops; build your own with the consumer's key function
// (ops.WithKey) to name facts by their messages.
//
//	cd ops && go install ./cmd/idemctl   # from a clone of the repository
//	idemctl show --function orders-charge order-17
package main

import (
	"os"

	"github.com/idempotent-consumer/idempotent-consumer/ops"
)

func main() { os.Exit(ops.Main(os.Args[1:])) }
