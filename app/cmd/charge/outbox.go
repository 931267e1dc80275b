package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orders"
)

// StatusCharged is the status of an order the charge wrote to the outbox.
const StatusCharged = "CHARGED"

// putter is the one call the outbox needs of DynamoDB.
type putter interface {
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

// outbox is the orders table (ORDERS_TABLE): the charge writes each order it
// charged there, with the payment's id, and the table's stream publishes
// the change to NotifyCharge. The item is the same on every run of the
// effect for an order (the payment API answers a retried charge with the
// same id), so a rewrite after a retry is the same change: the stream's
// consumer absorbs it as a duplicate.
type outbox struct {
	api   putter
	table string
}

// put writes the charged order. An error fails the effect, which is then
// retried: the charge is the same charge (its idempotency key), the row
// the same row.
func (ob *outbox) put(ctx context.Context, o orders.Order, chargeID string) error {
	_, err := ob.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(ob.table),
		Item: map[string]types.AttributeValue{
			"orderId":    &types.AttributeValueMemberS{Value: o.OrderID},
			"customerId": &types.AttributeValueMemberS{Value: o.CustomerID},
			"amount":     &types.AttributeValueMemberN{Value: strconv.FormatInt(o.Amount, 10)},
			"currency":   &types.AttributeValueMemberS{Value: o.Currency},
			"status":     &types.AttributeValueMemberS{Value: StatusCharged},
			"chargeId":   &types.AttributeValueMemberS{Value: chargeID},
		},
	})
	if err != nil {
		return fmt.Errorf("order %s charged (%s), not yet in the outbox %s: %w", o.OrderID, chargeID, ob.table, err)
	}
	return nil
}
