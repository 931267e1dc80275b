package ops_test

import (
	"errors"
	"os"

	"github.com/idempotent-consumer/idempotent-consumer/ops"
)

// A consumer's own operator command: idemctl with the consumer's key
// function, so that show and forget take a message (--body, --file) and the
// redrive's dry run judges each message of the dead-letter queue, in a main
// package of the consumer's module (cmd/charge-ops/main.go).
func ExampleWithKey() {
	type order struct {
		OrderID string `json:"orderId"`
	}
	key := func(o order) (string, error) {
		if o.OrderID == "" {
			return "", errors.New("no orderId")
		}
		return o.OrderID, nil
	}
	// charge-ops show --function orders-charge --body '{"orderId":"o-17"}'
	os.Exit(ops.Main(os.Args[1:], ops.WithKey(key)))
}
