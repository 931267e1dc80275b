package main

import (
	"io"
	"log/slog"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/cmd/internal/orders"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/cmd/internal/orderstest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// TestInvalidOrdersCostNoStoreRequest: an order no retry can fix, or one
// without an address for its receipt, is bad input before the store, on
// every delivery.
func TestInvalidOrdersCostNoStoreRequest(t *testing.T) {
	m := &mailer{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	orderstest.RefusedBeforeTheStore(t, func(g *idempotency.Guard, cfg sqsbatch.Config) *sqsbatch.Handler[orders.Order] {
		return newHandler(g, m, cfg)
	}, nil, map[string]string{
		"no email": `{"orderId":"o-mail","customerId":"c1","amount":5,"currency":"EUR"}`,
	})
}
