// Command ship is the "book the shipment" consumer of the example platform,
// whose source is an EventBridge rule: the orders service puts an
// OrderPlaced event on the platform's bus for each order, and the rule
// delivers it to this consumer's queue. It books one shipment per order
// through a carrier API (POST /shipments); the carrier's shipment id is the
// stored result.
//
// The key is the event's source and the order id in its detail, never the
// event's id: EventBridge gives every PutEvents entry a new id, so a
// producer's retry is a new event with the same detail.
//
// SHIPPING_API_URL is the carrier API; empty, the handler runs in sandbox
// mode and logs the shipment it would book.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orders"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/provider"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/eventbridge"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

func main() {
	s := &shipper{provider.NewEffect(os.Getenv("SHIPPING_API_URL"), "/shipments", slog.Default())}
	eventbridge.Start(key, s.book)
}

// key is the order's fact as the bus carries it: "<source>/<orderId>".
func key(e eventbridge.Event[orders.Order]) (string, error) {
	id, err := orders.Key(e.Detail)
	if err != nil {
		return "", err
	}
	return e.Source + "/" + id, nil
}

type shipper struct{ effect *provider.Effect }

// book books the order's shipment; r.Key is the carrier's idempotency key.
func (s *shipper) book(ctx context.Context, e eventbridge.Event[orders.Order], r idempotency.Reservation) (string, error) {
	return s.effect.Do(ctx, r.Key, map[string]any{"orderId": e.Detail.OrderID, "customerId": e.Detail.CustomerID})
}
