package stream_test

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/stream"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// An outbox: the orders table's stream feeds a consumer that confirms each
// order's status change once. The handler's main package (cmd/confirm)
// calls dynamodbstream.Start; a deleted order confirms nothing, and
// says so (RemoveSkip).
func ExampleNewIdempotentStreamConsumer() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Shop"), nil)
	orders := awsdynamodb.NewTable(stack, jsii.String("Orders"), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("orderId"), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		Stream:       awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
	})
	confirm := stream.NewIdempotentStreamConsumer(stack, jsii.String("Confirm"), &stream.IdempotentStreamConsumerProps{
		Props:       core.Props{Entry: jsii.String("cmd/confirm")},
		SourceTable: orders,
		OldImage:    jsii.Bool(true),
		Removes:     contract.RemoveSkip,
	})
	// Failed batches, with their records, to replay through the handler
	// (ops.FailureEvent) once the cause is fixed.
	_ = confirm.FailureBucket()
	app.Synth(nil)
}
