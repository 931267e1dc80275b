package consumer_test

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
)

// A platform's consumers of its other sources: a rule on its bus (a FIFO
// queue, the events of one customer in order), producers that send to a
// queue, and the notifications of its uploads bucket.
func ExampleNewIdempotentConsumer_sources() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Platform"), nil)

	bus := awsevents.NewEventBus(stack, jsii.String("Orders"), nil)
	ship := consumer.NewIdempotentConsumer(stack, jsii.String("ShipOrder"), &consumer.IdempotentConsumerProps{
		Props:               core.Props{Entry: jsii.String(handlerDir)},
		EventBus:            bus,
		EventPattern:        &awsevents.EventPattern{Source: jsii.Strings("orders"), DetailType: jsii.Strings("OrderPlaced")},
		QueueProps:          &awssqs.QueueProps{Fifo: jsii.Bool(true)},
		EventMessageGroupId: jsii.String("$.detail.customerId"),
	})

	settle := consumer.NewIdempotentConsumer(stack, jsii.String("SettleOrder"), &consumer.IdempotentConsumerProps{
		Props:           core.Props{Entry: jsii.String(handlerDir)},
		DirectProducers: jsii.Bool(true),
	})
	checkout := awsiam.NewRole(stack, jsii.String("Checkout"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
	settle.GrantSendMessages(checkout)

	uploads := awss3.NewBucket(stack, jsii.String("Uploads"), &awss3.BucketProps{Versioned: jsii.Bool(true), EnforceSSL: jsii.Bool(true)})
	invoice := consumer.NewIdempotentConsumer(stack, jsii.String("ImportInvoice"), &consumer.IdempotentConsumerProps{
		Props:         core.Props{Entry: jsii.String(handlerDir)},
		Bucket:        uploads,
		BucketFilters: &[]*awss3.NotificationKeyFilter{{Prefix: jsii.String("invoices/"), Suffix: jsii.String(".pdf")}},
	})

	fmt.Println("ship: a rule with its own dead-letter queue:", ship.Rule() != nil && ship.EventDeadLetterQueue() != nil, "alarms:", len(ship.Alarms().All()))
	fmt.Println("settle: no topic:", settle.Topic() == nil, "alarms:", len(settle.Alarms().All()))
	fmt.Println("invoice: the bucket's:", *invoice.Bucket().Node().Path())
	// Output:
	// ship: a rule with its own dead-letter queue: true alarms: 13
	// settle: no topic: true alarms: 9
	// invoice: the bucket's: Platform/Uploads
}
