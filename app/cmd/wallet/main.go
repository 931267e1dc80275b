// Command wallet is the "credit the wallet" consumer: each order credits 1%
// cashback to the customer's wallet. A balance increment is the dangerous
// effect (balance = balance + n is not idempotent), so it is a transactional
// effect: the increment and the COMPLETED record commit in one
// TransactWriteItems, exactly once, in one round trip.
//
// The balances live in the idempotency table itself, beside the records of
// the wallet namespace (shared-table mode): item "balance#<customer>",
// number attribute "balance".
package main

import (
	"context"
	"os"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orders"
	"github.com/idempotent-consumer/idempotent-consumer/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

func main() {
	// The balances live in the idempotency table, beside the records
	// (shared-table mode), so that a credit and its record commit together.
	w := wallets{table: os.Getenv(contract.TableVar)}
	sqsbatch.StartTx(orders.Key, w.credit)
}

type wallets struct{ table string }

// cashback is the credit for an order: 1% of its amount, at least 1.
func cashback(o orders.Order) int64 { return max(o.Amount/100, 1) }

// credit returns the increment of the customer's balance as a transactional
// write for an order that orders.Key has validated; it changes nothing
// itself.
func (w wallets) credit(_ context.Context, o orders.Order, _ idempotency.Reservation) ([]types.TransactWriteItem, string, error) {
	n := cashback(o)
	update := types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(w.table),
		Key:                       map[string]types.AttributeValue{contract.PartitionKey: &types.AttributeValueMemberS{Value: "balance#" + o.CustomerID}},
		UpdateExpression:          aws.String("ADD #balance :n"),
		ExpressionAttributeNames:  map[string]string{"#balance": "balance"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}},
	}}
	return []types.TransactWriteItem{update}, "credited " + strconv.FormatInt(n, 10), nil
}
