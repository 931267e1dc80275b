// Command settle is the "settle the order" consumer of the example
// platform, whose producers send to its queue themselves (SendMessage, no
// topic): the checkout service sends each order it settles. It records one
// settlement per order in the ledger API (POST /settlements); the ledger's
// entry id is the stored result.
//
// The key is the order id in the body: a retried SendMessage is a new
// message with a new message id, and a FIFO queue's deduplication would
// last five minutes only.
//
// SETTLEMENT_API_URL is the ledger API; empty, the handler runs in sandbox
// mode and logs the settlement it would record.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orders"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/provider"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

func main() {
	s := &settler{provider.NewEffect(os.Getenv("SETTLEMENT_API_URL"), "/settlements", slog.Default())}
	sqsbatch.Start(orders.Key, s.settle)
}

type settler struct{ effect *provider.Effect }

// settle records the order's settlement; r.Key is the ledger's
// idempotency key.
func (s *settler) settle(ctx context.Context, o orders.Order, r idempotency.Reservation) (string, error) {
	return s.effect.Do(ctx, r.Key, map[string]any{"orderId": o.OrderID, "amount": o.Amount, "currency": o.Currency})
}
