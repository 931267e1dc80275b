// Command notify is the consumer of the example platform's outbox: the
// orders table's stream, where ChargeOrder writes each order it charges. It
// tells the customer of each charge once (POST /notices on the notices
// API), however often the stream delivers the change: Lambda replays every
// record after a failed one from its checkpoint, and a retried charge
// rewrites the same order.
//
// The key is the order and its status ("o-1/CHARGED"): the business fact,
// never the stream record's sequence number, which is new on a rewrite. A
// deleted order notifies nothing (the construct's RemoveSkip).
//
// NOTICE_API_URL is the notices API; empty, the handler runs in sandbox
// mode and logs the notice it would send.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/provider"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamodbstream"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

func main() {
	n := &notifier{provider.NewEffect(os.Getenv("NOTICE_API_URL"), "/notices", slog.Default())}
	dynamodbstream.Start(key, n.notify)
}

// order is an item of the orders table, as ChargeOrder writes it.
type order struct {
	OrderID    string `json:"orderId"`
	CustomerID string `json:"customerId"`
	Amount     int64  `json:"amount"`
	Currency   string `json:"currency"`
	Status     string `json:"status"`
	ChargeID   string `json:"chargeId"`
}

// key is the order's id and status. A change without its new image, or
// an item without an id or a status, is bad input: no retry fixes it.
func key(c dynamodbstream.Change[order]) (string, error) {
	switch {
	case c.New == nil:
		return "", fmt.Errorf("%w: %s of %q without its new image", outcome.ErrBadInput, c.Event, c.Keys.OrderID)
	case c.New.OrderID == "" || c.New.Status == "":
		return "", fmt.Errorf("%w: order item %q with no orderId or status", outcome.ErrBadInput, c.New.OrderID)
	}
	return c.New.OrderID + "/" + c.New.Status, nil
}

type notifier struct{ effect *provider.Effect }

// notify sends the notice of the order's change; r.Key is the notices
// API's idempotency key.
func (n *notifier) notify(ctx context.Context, c dynamodbstream.Change[order], r idempotency.Reservation) (string, error) {
	o := c.New
	return n.effect.Do(ctx, r.Key, map[string]any{"orderId": o.OrderID, "customerId": o.CustomerID, "status": o.Status, "amount": o.Amount, "currency": o.Currency, "chargeId": o.ChargeID})
}
