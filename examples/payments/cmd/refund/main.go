// Command refund asks the card processor for a refund, once per refund: the
// idempotency key it hands the processor is the reservation's key, the same
// for every delivery of the refund.
package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Refund is the message on the refunds topic.
type Refund struct {
	RefundID  string `json:"refundId"`
	PaymentID string `json:"paymentId"`
	Cents     int64  `json:"cents"`
}

func main() {
	sqsbatch.Start(key, refund)
}

func key(r Refund) (string, error) {
	if r.RefundID == "" || r.PaymentID == "" || r.Cents <= 0 {
		return "", fmt.Errorf("%w: refundId, paymentId and positive cents are required", outcome.ErrBadInput)
	}
	return r.RefundID, nil
}

// refund stands for the processor's call (sandbox: it logs what it would
// send).
func refund(ctx context.Context, r Refund, res idempotency.Reservation) (string, error) {
	slog.InfoContext(ctx, "refund", slog.String("payment", r.PaymentID), slog.Int64("cents", r.Cents), slog.String("idempotency_key", res.Key))
	return "refunded", nil
}
