package main

import (
	"io"
	"log/slog"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orders"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orderstest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// TestInvalidOrdersCostNoStoreRequest: an order no retry can fix, or one
// without an address for its receipt, is bad input before the store, on
// every delivery.
func TestInvalidOrdersCostNoStoreRequest(t *testing.T) {
	m := &mailer{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	orderstest.RefusedBeforeTheStore(t, func(opts ...handler.Option) (*sqsbatch.Handler[orders.Order], error) {
		return sqsbatch.FromEnv(key, m.send, opts...)
	}, nil, map[string]string{
		"no email": `{"orderId":"o-mail","customerId":"c1","amount":5,"currency":"EUR"}`,
	})
}
