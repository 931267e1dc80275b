// Command settle settles a payment: it adds the amount to the merchant's
// balance in the same transaction as the payment's idempotency record, so
// that a redelivered payment never settles twice. Payments arrive in order
// per merchant (the FIFO topic's message group).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Payment is the message on the payments topic.
type Payment struct {
	PaymentID  string `json:"paymentId"`
	MerchantID string `json:"merchantId"`
	Cents      int64  `json:"cents"`
}

func main() {
	s := settler{balances: os.Getenv("BALANCES_TABLE")}
	sqsbatch.StartTx(key, s.settle)
}

// key is the payment's id; a payment no retry can fix is bad input.
func key(p Payment) (string, error) {
	switch {
	case p.PaymentID == "" || p.MerchantID == "":
		return "", fmt.Errorf("%w: paymentId and merchantId are required", outcome.ErrBadInput)
	case p.Cents <= 0:
		return "", fmt.Errorf("%w: cents %d must be positive", outcome.ErrBadInput, p.Cents)
	}
	return p.PaymentID, nil
}

type settler struct{ balances string }

// settle returns the balance increment, which commits with the record.
func (s settler) settle(_ context.Context, p Payment, _ idempotency.Reservation) (any, string, error) {
	if s.balances == "" {
		return nil, "", errors.New("BALANCES_TABLE is not set")
	}
	return []types.TransactWriteItem{{Update: &types.Update{
		TableName:                 aws.String(s.balances),
		Key:                       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "merchant#" + p.MerchantID}},
		UpdateExpression:          aws.String("ADD #balance :cents"),
		ExpressionAttributeNames:  map[string]string{"#balance": "balance"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":cents": &types.AttributeValueMemberN{Value: strconv.FormatInt(p.Cents, 10)}},
	}}}, "settled", nil
}
