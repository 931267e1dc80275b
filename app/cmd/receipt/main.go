// Command receipt is the "send the receipt" consumer, the second subscriber
// of the orders topic: it sends one receipt per order through an e-mail API
// that honours idempotency keys. The message id of the e-mail is the stored
// result.
//
// RECEIPT_API_URL is the e-mail API (POST /receipts with an Idempotency-Key
// header, answering {"id": "..."}). When it is empty the handler runs in
// sandbox mode: it logs the receipt it would send.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orders"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/provider"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

func main() {
	m := &mailer{logger: slog.Default()}
	if url := os.Getenv("RECEIPT_API_URL"); url != "" {
		m.api = provider.New(url)
	}
	sqsbatch.Start(key, m.send)
}

// key is orders.Key for a receipt, which also needs an address: an order
// without one is refused before the idempotency store.
func key(o orders.Order) (string, error) {
	if o.Email == "" {
		return "", fmt.Errorf("%w: order %s: no email for the receipt", outcome.ErrBadInput, o.OrderID)
	}
	return orders.Key(o)
}

type mailer struct {
	api    *provider.Client // nil: sandbox mode
	logger *slog.Logger
}

type receiptRequest struct {
	OrderID string `json:"orderId"`
	To      string `json:"to"`
	Text    string `json:"text"`
}

type sent struct {
	ID string `json:"id"`
}

// send e-mails the receipt of an order that key has validated; r.Key is the
// e-mail's idempotency key.
func (m *mailer) send(ctx context.Context, o orders.Order, r idempotency.Reservation) (string, error) {
	req := receiptRequest{OrderID: o.OrderID, To: o.Email, Text: fmt.Sprintf("Order %s: charged %d.%02d %s", o.OrderID, o.Amount/100, o.Amount%100, o.Currency)}
	if m.api == nil {
		sum := sha256.Sum256([]byte(r.Key))
		id := "msg_sandbox_" + hex.EncodeToString(sum[:8])
		m.logger.InfoContext(ctx, "sandbox receipt", slog.String("order", o.OrderID), slog.String("to", o.Email), slog.String("message", id))
		return id, nil
	}
	var s sent
	if err := m.api.Post(ctx, "/receipts", r.Key, req, &s); err != nil {
		return "", err
	}
	return s.ID, nil
}
