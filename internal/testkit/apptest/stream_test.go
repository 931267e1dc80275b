package apptest_test

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskinesis"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest/nagtest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/stream"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// TestStreamConsumersAreNagClean: the stream consumer, on a Kinesis stream
// and on a table's stream, leaves cdk-nag's AwsSolutions and Serverless
// packs nothing that is not suppressed with its reason.
func TestStreamConsumersAreNagClean(t *testing.T) {
	for name, build := range map[string]func(s awscdk.Stack){
		"Kinesis": func(s awscdk.Stack) {
			events := awskinesis.NewStream(s, jsii.String("Events"), &awskinesis.StreamProps{Encryption: awskinesis.StreamEncryption_MANAGED})
			stream.NewIdempotentStreamConsumer(s, jsii.String("Ship"), &stream.IdempotentStreamConsumerProps{Props: core.Props{Entry: jsii.String(fixtures.Entry)}, Stream: events})
		},
		"DynamoDB": func(s awscdk.Stack) {
			orders := awsdynamodb.NewTable(s, jsii.String("Orders"), &awsdynamodb.TableProps{
				PartitionKey:                     &awsdynamodb.Attribute{Name: jsii.String("orderId"), Type: awsdynamodb.AttributeType_STRING},
				BillingMode:                      awsdynamodb.BillingMode_PAY_PER_REQUEST,
				Stream:                           awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
				PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: jsii.Bool(true)},
			})
			stream.NewIdempotentStreamConsumer(s, jsii.String("Confirm"), &stream.IdempotentStreamConsumerProps{
				Props:       core.Props{Entry: jsii.String(fixtures.Entry), Dashboard: jsii.Bool(true)},
				SourceTable: orders,
				OldImage:    jsii.Bool(true),
				Removes:     contract.RemoveSkip,
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			var stack awscdk.Stack
			cdktest.Must(t, func() {
				app, err := cdktest.NewApp(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				nagtest.AddPacks(app)
				stack = awscdk.NewStack(app, jsii.String("Stream"+name), nil)
				build(stack)
			})
			nagtest.NoFindings(t, stack)
		})
	}
}
