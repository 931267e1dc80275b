package platform

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/stream"
	"github.com/idempotent-consumer/idempotent-consumer/contract"
)

// OrdersTableVar is the variable that names the orders table to
// ChargeOrder's function, which writes each order it charges there.
const OrdersTableVar = "ORDERS_TABLE"

// newOrdersTable is the outbox: ChargeOrder writes each order it charges
// (status CHARGED and the payment's id) into it, inside its effect, after
// the charge; the table's stream publishes every change, at least once. Its
// view type is NEW_IMAGE: the consumer reads the order as it is now.
func newOrdersTable(stack awscdk.Stack) awsdynamodb.Table {
	return awsdynamodb.NewTable(stack, jsii.String("OrdersTable"), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("orderId"), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		Stream:       awsdynamodb.StreamViewType_NEW_IMAGE,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:    awsdynamodb.TableEncryption_AWS_MANAGED,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
}

// addOutbox lets ChargeOrder put items in the orders table (PutItem only)
// and adds NotifyCharge, the consumer of the table's stream: it
// tells the customer of each charge once, however often the stream (and
// Lambda's checkpoint replays) deliver the change. A deleted order notifies
// nothing, whoever deleted it, so the handler skips every REMOVE, TTL
// expiries and a caller's deletes alike (RemoveSkip, not
// RemoveSkipExpired, which would run the latter).
func (p *OrdersPlatform) addOutbox(stack awscdk.Stack, entry func(string) *string) {
	p.OrdersTable.Grant(p.Charge.Function(), jsii.String("dynamodb:PutItem"))
	p.Notify = stream.NewIdempotentStreamConsumer(stack, jsii.String("NotifyCharge"), &stream.IdempotentStreamConsumerProps{
		Props:         core.Props{Entry: entry("notify"), Namespace: jsii.String("notify")},
		SourceTable:   p.OrdersTable,
		Removes:       contract.RemoveSkip,
		PayloadIgnore: jsii.Strings("event"),
	})
}

// chargeEnvironment is ChargeOrder's extra environment: the orders table.
func (p *OrdersPlatform) chargeEnvironment() *map[string]*string {
	return &map[string]*string{OrdersTableVar: p.OrdersTable.TableName()}
}
