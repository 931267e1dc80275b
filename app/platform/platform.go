// Package platform builds the example OrdersPlatform stack: one orders topic
// fanned out to three idempotent consumers, and a consumer of each other
// source: an EventBridge rule on the platform's bus, producers that send to
// a queue, and the uploads bucket's notifications; and an outbox: the
// orders table ChargeOrder writes, whose stream feeds NotifyCharge; and two
// HTTP endpoints: Stripe's webhook and the orders API (Idempotency-Key);
// and the order saga on Step Functions, started from the bus, whose steps
// are idempotent steps.
package platform

import (
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/endpoint"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/stream"
	"github.com/idempotent-consumer/idempotent-consumer/contract"
)

// Props configures an OrdersPlatform stack.
type Props struct {
	// StackProps are passed to the stack. Default: an environment-agnostic
	// stack.
	awscdk.StackProps
}

// OrdersPlatform is the example stack and the resources a test or a larger
// app may want to reach.
type OrdersPlatform struct {
	awscdk.Stack

	// Orders is the topic order events are published to.
	Orders awssns.Topic
	// Wallets holds wallet balances and, under the namespace "wallet", the
	// idempotency records of CreditWallet.
	Wallets awsdynamodb.Table
	// Charge charges the order.
	Charge consumer.IdempotentConsumer
	// Receipt sends the receipt.
	Receipt consumer.IdempotentConsumer
	// Wallet credits the customer's wallet.
	Wallet consumer.IdempotentConsumer

	// Bus is the platform's event bus, where the orders service puts an
	// OrderPlaced event for each order.
	Bus awsevents.EventBus
	// Ship books the order's shipment, from the rule on Bus.
	Ship consumer.IdempotentConsumer
	// Settle settles the order, from the checkout service, which sends to
	// its queue (a direct producer).
	Settle consumer.IdempotentConsumer
	// Uploads is the versioned bucket suppliers upload invoices to, with
	// presigned URLs; UploadLogs holds its server access logs.
	Uploads, UploadLogs awss3.Bucket
	// Invoice imports each invoice uploaded under invoices/.
	Invoice consumer.IdempotentConsumer

	// OrdersTable is the outbox (outbox.go): ChargeOrder writes each order
	// it charges there, and its stream feeds Notify.
	OrdersTable awsdynamodb.Table
	// Notify tells the customer of each charge, from OrdersTable's stream.
	Notify stream.IdempotentStreamConsumer

	// StripeSecret holds the Stripe webhook's signing secret.
	StripeSecret awssecretsmanager.Secret
	// StripeHooks is Stripe's webhook (endpoints.go), on a function URL.
	StripeHooks endpoint.IdempotentEndpoint
	// OrdersAPI is POST /orders with an Idempotency-Key, on an HTTP API
	// route with IAM authorization.
	OrdersAPI endpoint.IdempotentEndpoint

	// Saga is the order saga (saga.go): reserve stock → charge → ship on
	// Step Functions, started for each order placed on Bus.
	Saga *Saga
}

// NewOrdersPlatform builds the stack: the orders topic (encrypted, TLS-only)
// fanned out to ChargeOrder, SendReceipt and CreditWallet, each with its own
// queue, dead-letter queues, function and alarms. ChargeOrder and
// SendReceipt each own an idempotency table; CreditWallet keeps its records
// in the Wallets table beside the balances it credits (shared-table mode),
// so that the credit and its idempotency record can commit in one
// transaction.
func NewOrdersPlatform(scope constructs.Construct, id *string, props *Props) *OrdersPlatform {
	if props == nil {
		props = &Props{}
	}
	// Relative to this module's root, wherever the app or a test runs.
	entry := func(name string) *string {
		return jsii.String(filepath.Join("app", "cmd", name))
	}

	stack := awscdk.NewStack(scope, id, &props.StackProps)
	p := &OrdersPlatform{Stack: stack}

	p.Orders = awssns.NewTopic(stack, jsii.String("Orders"), &awssns.TopicProps{
		DisplayName: jsii.String("orders"),
		MasterKey:   awskms.Alias_FromAliasName(stack, jsii.String("OrdersKey"), jsii.String("alias/aws/sns")),
		EnforceSSL:  jsii.Bool(true),
	})

	p.Wallets = awsdynamodb.NewTable(stack, jsii.String("Wallets"), &awsdynamodb.TableProps{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String(contract.PartitionKey), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute: jsii.String(contract.TTLAttribute),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:    awsdynamodb.TableEncryption_AWS_MANAGED,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})

	// A producer that retries Publish stamps a new placedAt: the same
	// fact, so the field stays out of the payload hash.
	ignore := jsii.Strings("placedAt")
	p.OrdersTable = newOrdersTable(stack)
	p.Charge = consumer.NewIdempotentConsumer(stack, jsii.String("ChargeOrder"), &consumer.IdempotentConsumerProps{
		Props:         core.Props{Entry: entry("charge"), Namespace: jsii.String("charge"), Environment: p.chargeEnvironment()},
		Topic:         p.Orders,
		PayloadIgnore: ignore,
	})
	p.Receipt = consumer.NewIdempotentConsumer(stack, jsii.String("SendReceipt"), &consumer.IdempotentConsumerProps{
		Props:         core.Props{Entry: entry("receipt"), Namespace: jsii.String("receipt")},
		Topic:         p.Orders,
		PayloadIgnore: ignore,
	})
	p.Wallet = consumer.NewIdempotentConsumer(stack, jsii.String("CreditWallet"), &consumer.IdempotentConsumerProps{
		Props:         core.Props{Entry: entry("wallet"), Table: p.Wallets, Namespace: jsii.String("wallet"), TransactionalTables: &[]awsdynamodb.ITable{p.Wallets}},
		Topic:         p.Orders,
		PayloadIgnore: ignore,
	})
	p.addSources(stack, entry)
	p.addOutbox(stack, entry)
	p.addEndpoints(stack, entry)
	p.addSaga(stack)
	return p
}

// addSources adds the consumers of the platform's other sources: the bus
// (ShipOrder), direct producers (SettleOrder) and the uploads bucket
// (ImportInvoice).
func (p *OrdersPlatform) addSources(stack awscdk.Stack, entry func(string) *string) {
	p.Bus = awsevents.NewEventBus(stack, jsii.String("OrdersBus"), nil)
	p.Ship = consumer.NewIdempotentConsumer(stack, jsii.String("ShipOrder"), &consumer.IdempotentConsumerProps{
		Props:         core.Props{Entry: entry("ship"), Namespace: jsii.String("ship")},
		EventBus:      p.Bus,
		EventPattern:  &awsevents.EventPattern{Source: jsii.Strings("orders"), DetailType: jsii.Strings("OrderPlaced")},
		PayloadIgnore: jsii.Strings("placedAt"),
	})
	p.Settle = consumer.NewIdempotentConsumer(stack, jsii.String("SettleOrder"), &consumer.IdempotentConsumerProps{
		Props:           core.Props{Entry: entry("settle"), Namespace: jsii.String("settle")},
		DirectProducers: jsii.Bool(true),
		PayloadIgnore:   jsii.Strings("placedAt"),
	})
	p.UploadLogs = awss3.NewBucket(stack, jsii.String("UploadLogs"), &awss3.BucketProps{
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_PREFERRED,
	})
	cdknag.NagSuppressions_AddResourceSuppressions(p.UploadLogs, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-S1"), Reason: jsii.String("This bucket holds the uploads bucket's server access logs; logging its own access would log the logging."),
	}}, jsii.Bool(true))
	// Versioned: a rewrite of an invoice is a version of its own, a fact
	// of its own (the handler's key is bucket/key@versionId).
	p.Uploads = awss3.NewBucket(stack, jsii.String("Uploads"), &awss3.BucketProps{
		Encryption:             awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:             jsii.Bool(true),
		BlockPublicAccess:      awss3.BlockPublicAccess_BLOCK_ALL(),
		Versioned:              jsii.Bool(true),
		ServerAccessLogsBucket: p.UploadLogs,
		ServerAccessLogsPrefix: jsii.String("uploads/"),
	})
	p.Invoice = consumer.NewIdempotentConsumer(stack, jsii.String("ImportInvoice"), &consumer.IdempotentConsumerProps{
		Props:         core.Props{Entry: entry("invoice"), Namespace: jsii.String("invoice")},
		Bucket:        p.Uploads,
		BucketFilters: &[]*awss3.NotificationKeyFilter{{Prefix: jsii.String("invoices/")}},
	})
}
