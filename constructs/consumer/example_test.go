package consumer_test

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
)

// A platform stack subscribes a consumer to its orders topic. Entry is the
// directory of the handler's main package, for example
// "app/cmd/charge"; this example builds a stub handler.
func ExampleNewIdempotentConsumer() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Orders"), nil)

	orders := awssns.NewTopic(stack, jsii.String("Orders"), &awssns.TopicProps{
		MasterKey:  awskms.Alias_FromAliasName(stack, jsii.String("SNSKey"), jsii.String("alias/aws/sns")),
		EnforceSSL: jsii.Bool(true),
	})
	charge := consumer.NewIdempotentConsumer(stack, jsii.String("ChargeOrder"), &consumer.IdempotentConsumerProps{
		Props: core.Props{Entry: jsii.String(handlerDir), Timeout: awscdk.Duration_Seconds(jsii.Number(20)), Window: awscdk.Duration_Hours(jsii.Number(48))},
		Topic: orders,
	})

	fmt.Println("namespace:", *charge.Namespace())
	fmt.Println("alarms:", len(charge.Alarms().All()))
	// Output:
	// namespace: chargeorder
	// alarms: 10
}

// A payments team brings the queue it already has (with its dead-letter
// queue), runs the handler on x86_64, lets it write its ledger in the same
// transaction as its idempotency records, and gets a dashboard.
func ExampleGrantTransactionalWrites() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Payments"), nil)

	// The dead-letter queue keeps messages longer than the queue (SQS keeps
	// a standard queue's enqueue time when it moves a message); the queue
	// takes SQS's largest body, what the topic's envelope may need.
	dlq := awssqs.NewQueue(stack, jsii.String("PaymentsDLQ"), &awssqs.QueueProps{
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})
	queue := awssqs.NewQueue(stack, jsii.String("Payments"), &awssqs.QueueProps{
		EnforceSSL:          jsii.Bool(true),
		MaxMessageSizeBytes: jsii.Number(1048576),
		VisibilityTimeout:   awscdk.Duration_Minutes(jsii.Number(3)),
		DeadLetterQueue:     &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(5)},
	})
	ledger := awsdynamodb.NewTable(stack, jsii.String("Ledger"), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
	})
	pay := consumer.NewIdempotentConsumer(stack, jsii.String("Pay"), &consumer.IdempotentConsumerProps{
		Props: core.Props{Entry: jsii.String(handlerDir), Architecture: awslambda.Architecture_X86_64(), Dashboard: jsii.Bool(true)},
		Queue: queue,
	})
	consumer.GrantTransactionalWrites(ledger, pay) // the consumer is an awsiam.IGrantable

	fmt.Println("queue is the team's:", *pay.Queue().Node().Path() == *queue.Node().Path())
	fmt.Println("dashboard rows:", len(pay.Widgets()))
	// Output:
	// queue is the team's: true
	// dashboard rows: 5
}
