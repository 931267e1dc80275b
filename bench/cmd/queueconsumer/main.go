// Command queueconsumer is a queue consumer written as a user writes one,
// for the memory run (bench/cmd/rss): sqsbatch.Start with a key function that
// refuses an invalid order and an effect that records the order's charge in a
// ledger table (LEDGER_TABLE), one PutItem through the AWS SDK's DynamoDB
// client per order, its id derived from the fact's idempotency key. Its
// contract (the idempotency table, the namespace, the consumer) is in the
// environment, as the construct writes it.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

func main() {
	table := os.Getenv("LEDGER_TABLE")
	cfg, err := handler.AWSConfig()
	if err == nil && table == "" {
		err = fmt.Errorf("LEDGER_TABLE is not set")
	}
	if err != nil {
		slog.Error("the ledger's client", slog.Any("error", err))
		os.Exit(1)
	}
	l := &ledger{db: dynamodb.NewFromConfig(cfg), table: table}
	sqsbatch.Start(key, l.charge)
}

// order is a message's payload.
type order struct {
	OrderID    string `json:"orderId"`
	CustomerID string `json:"customerId"`
	Amount     int64  `json:"amount"`
	Currency   string `json:"currency"`
	Email      string `json:"email,omitempty"`
	PlacedAt   string `json:"placedAt,omitempty"`
}

// key is the order's id; an order no retry can fix is refused.
func key(o order) (string, error) {
	switch {
	case o.OrderID == "":
		return "", fmt.Errorf("%w: no orderId", outcome.ErrBadInput)
	case o.Amount <= 0:
		return "", fmt.Errorf("%w: order %s: amount %d must be positive", outcome.ErrBadInput, o.OrderID, o.Amount)
	case len(o.Currency) != 3:
		return "", fmt.Errorf("%w: order %s: currency %q is not an ISO 4217 code", outcome.ErrBadInput, o.OrderID, o.Currency)
	}
	return o.OrderID, nil
}

// ledger is where the effect writes.
type ledger struct {
	db    *dynamodb.Client
	table string
}

// charge writes the order's charge to the ledger; the charge's id is the
// stored result that a duplicate gets back.
func (l *ledger) charge(ctx context.Context, o order, r idempotency.Reservation) (string, error) {
	sum := sha256.Sum256([]byte(r.Key))
	id := "ch_" + hex.EncodeToString(sum[:8])
	_, err := l.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(l.table),
		Item: map[string]types.AttributeValue{
			"pk":       &types.AttributeValueMemberS{Value: o.OrderID},
			"customer": &types.AttributeValueMemberS{Value: o.CustomerID},
			"amount":   &types.AttributeValueMemberN{Value: strconv.FormatInt(o.Amount, 10)},
			"currency": &types.AttributeValueMemberS{Value: o.Currency},
			"charge":   &types.AttributeValueMemberS{Value: id},
		},
	})
	if err != nil {
		return "", fmt.Errorf("ledger %s: %w", o.OrderID, err)
	}
	return id, nil
}
