// Command charge is the "charge the order" consumer: it charges each order
// once through a payment API, passing the fact's idempotency key downstream so
// that even a crash between the charge and its record cannot charge twice.
// The payment's id is the stored result that duplicates get back.
//
// PAYMENT_API_URL is the payment API (POST /charges with an Idempotency-Key
// header, answering {"id": "..."}). When it is empty the handler runs in
// sandbox mode: it logs the charge it would make and returns a sandbox id.
//
// ORDERS_TABLE is the outbox (outbox.go): each order charged is written
// there, status CHARGED with the payment's id, after the charge and inside
// the effect; the table's stream feeds the notify consumer. Empty, nothing
// is written.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orders"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/provider"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

func main() {
	p := &payments{logger: slog.Default()}
	if url := os.Getenv("PAYMENT_API_URL"); url != "" {
		p.api = provider.New(url)
	}
	if table := os.Getenv("ORDERS_TABLE"); table != "" {
		cfg, err := handler.AWSConfig()
		if err != nil {
			p.logger.Error("the outbox's client", slog.String("table", table), slog.Any("error", err))
			os.Exit(1)
		}
		p.outbox = &outbox{api: dynamodb.NewFromConfig(cfg), table: table}
	}
	sqsbatch.Start(orders.Key, p.charge)
}

type payments struct {
	api    *provider.Client // nil: sandbox mode
	logger *slog.Logger
	outbox *outbox // nil: no outbox
}

type chargeRequest struct {
	OrderID    string `json:"orderId"`
	CustomerID string `json:"customerId"`
	Amount     int64  `json:"amount"`
	Currency   string `json:"currency"`
}

type charge struct {
	ID string `json:"id"`
}

// charge charges the order, which orders.Key has validated; r.Key is the
// payment's idempotency key.
func (p *payments) charge(ctx context.Context, o orders.Order, r idempotency.Reservation) (string, error) {
	req := chargeRequest{OrderID: o.OrderID, CustomerID: o.CustomerID, Amount: o.Amount, Currency: o.Currency}
	if p.api == nil {
		sum := sha256.Sum256([]byte(r.Key))
		id := "ch_sandbox_" + hex.EncodeToString(sum[:8])
		p.logger.InfoContext(ctx, "sandbox charge", slog.String("order", o.OrderID), slog.Int64("amount", o.Amount), slog.String("charge", id))
		return id, p.record(ctx, o, id)
	}
	var ch charge
	if err := p.api.Post(ctx, "/charges", r.Key, req, &ch); err != nil {
		return "", err
	}
	return ch.ID, p.record(ctx, o, ch.ID)
}

// record writes the charged order to the outbox, if there is one.
func (p *payments) record(ctx context.Context, o orders.Order, chargeID string) error {
	if p.outbox == nil {
		return nil
	}
	return p.outbox.put(ctx, o, chargeID)
}
