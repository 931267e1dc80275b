package consumertest

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
)

// The fixtures of the sources other than a topic (Builds).

// eventBridgeFixture is one stack of consumers of EventBridge rules:
//   - BookOrder: the default bus, a standard queue, every default;
//   - ShipOrder: a bus of the app, a FIFO queue grouped by customer, a
//     customer-managed key, its own retry policy and a dashboard;
//   - AuditOrder: a bus imported by its ARN.
func eventBridgeFixture(f *Fixture, entry string) {
	s := f.Stack
	f.Consumers = map[string]consumer.IdempotentConsumer{}
	f.Key = awskms.NewKey(s, jsii.String("Key"), &awskms.KeyProps{EnableKeyRotation: jsii.Bool(true)})
	bus := awsevents.NewEventBus(s, jsii.String("Orders"), nil)
	orders := &awsevents.EventPattern{Source: jsii.Strings("orders"), DetailType: jsii.Strings("OrderPlaced")}
	for _, c := range []struct {
		id string
		p  *consumer.IdempotentConsumerProps
	}{
		{"BookOrder", &consumer.IdempotentConsumerProps{EventPattern: orders}},
		{"ShipOrder", &consumer.IdempotentConsumerProps{
			Props:               core.Props{Dashboard: jsii.Bool(true)},
			EventPattern:        orders,
			EventBus:            bus,
			EncryptionKey:       f.Key,
			QueueProps:          &awssqs.QueueProps{Fifo: jsii.Bool(true)},
			EventMessageGroupId: jsii.String("$.detail.customerId"),
			EventRetryAttempts:  jsii.Number(10),
			EventMaxAge:         awscdk.Duration_Hours(jsii.Number(2)),
		}},
		{"AuditOrder", &consumer.IdempotentConsumerProps{EventPattern: orders,
			EventBus: awsevents.EventBus_FromEventBusArn(s, jsii.String("Audit"), jsii.String("arn:aws:events:eu-west-1:123456789012:event-bus/audit"))}},
	} {
		c.p.Entry = jsii.String(entry)
		f.Consumers[c.id] = consumer.NewIdempotentConsumer(s, jsii.String(c.id), c.p)
	}
	producer := awsiam.NewRole(s, jsii.String("Producer"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
	f.Consumers["ShipOrder"].GrantPutEvents(producer)
	f.Consumers["BookOrder"].GrantPutEvents(producer)
}

// bucketFixture is one stack of consumers of S3 notifications:
//   - ImportInvoice: a bucket of the app (versioned), its PDFs under
//     invoices/, a customer-managed key;
//   - FileReceipt: the same bucket, under receipts/ (filters that do not
//     overlap ImportInvoice's);
//   - ProcessImage: an imported bucket, every object created under images/.
func bucketFixture(f *Fixture, entry string) {
	s := f.Stack
	f.Consumers = map[string]consumer.IdempotentConsumer{}
	f.Key = awskms.NewKey(s, jsii.String("Key"), &awskms.KeyProps{EnableKeyRotation: jsii.Bool(true)})
	uploads := awss3.NewBucket(s, jsii.String("Uploads"), &awss3.BucketProps{
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		Versioned:         jsii.Bool(true),
	})
	// The app's bucket, not the construct's: its access logs are the app's
	// choice (cdk-nag's metadata, as NagSuppressions writes it).
	uploads.Node().DefaultChild().(awscdk.CfnResource).AddMetadata(jsii.String("cdk_nag"), map[string]any{
		"rules_to_suppress": []any{map[string]any{"id": "AwsSolutions-S1", "reason": "A test fixture's bucket: its server access logs are the app's choice, not the consumer's."}},
	})
	for _, c := range []struct {
		id string
		p  *consumer.IdempotentConsumerProps
	}{
		{"ImportInvoice", &consumer.IdempotentConsumerProps{Bucket: uploads, EncryptionKey: f.Key,
			BucketFilters: &[]*awss3.NotificationKeyFilter{{Prefix: jsii.String("invoices/"), Suffix: jsii.String(".pdf")}}}},
		{"FileReceipt", &consumer.IdempotentConsumerProps{Bucket: uploads, BucketEvents: &[]awss3.EventType{awss3.EventType_OBJECT_CREATED_PUT, awss3.EventType_OBJECT_REMOVED},
			BucketFilters: &[]*awss3.NotificationKeyFilter{{Prefix: jsii.String("receipts/")}}}},
		{"ProcessImage", &consumer.IdempotentConsumerProps{Bucket: awss3.Bucket_FromBucketName(s, jsii.String("Images"), jsii.String("images-123456789012")),
			BucketFilters: &[]*awss3.NotificationKeyFilter{{Prefix: jsii.String("images/")}}}},
	} {
		c.p.Entry = jsii.String(entry)
		f.Consumers[c.id] = consumer.NewIdempotentConsumer(s, jsii.String(c.id), c.p)
	}
}

// directFixture is one stack of consumers whose producers send to the
// queue: TakePayment (standard) and TakeOrderedPayment (FIFO, with
// content-based deduplication of the business message), each granted to
// a producer role.
func directFixture(f *Fixture, entry string) {
	s := f.Stack
	f.Consumers = map[string]consumer.IdempotentConsumer{}
	for _, c := range []struct {
		id string
		p  *consumer.IdempotentConsumerProps
	}{
		{"TakePayment", &consumer.IdempotentConsumerProps{DirectProducers: jsii.Bool(true)}},
		{"TakeOrderedPayment", &consumer.IdempotentConsumerProps{DirectProducers: jsii.Bool(true),
			QueueProps: &awssqs.QueueProps{Fifo: jsii.Bool(true), ContentBasedDeduplication: jsii.Bool(true)}}},
	} {
		c.p.Entry = jsii.String(entry)
		f.Consumers[c.id] = consumer.NewIdempotentConsumer(s, jsii.String(c.id), c.p)
	}
	producer := awsiam.NewRole(s, jsii.String("Producer"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
	for _, id := range []string{"TakePayment", "TakeOrderedPayment"} {
		f.Consumers[id].GrantSendMessages(producer)
	}
}
