// Package paymentsapp is the new user's app of issue 33, built from README
// and go doc as a new user would: a payments platform whose Stripe webhook
// and Idempotency-Key API are IdempotentEndpoints, whose Kinesis ledger is
// an IdempotentStreamConsumer, and whose EventBridge and S3 consumers are
// IdempotentConsumers, all on ONE idempotency table of the app's own
// single-table design (PK, SK, TTL on expiresAt), each in its namespace.
// Its tests synthesize it, compare its snapshot, run cdk-nag over it, and
// run each endpoint's and the ledger's handler on the shared table with
// the synthesized environment.
package paymentsapp

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskinesis"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/endpoint"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/stream"
)

// Entries are the handlers' main packages.
type Entries struct {
	// Webhook calls endpoint.Start with the Stripe verifier's config.
	Webhook string
	// API calls endpoint.Start: POST /payments with an Idempotency-Key.
	API string
	// Ledger calls kinesis.Start.
	Ledger string
	// Events calls eventbridge.Start, Receipts s3event.Start.
	Events, Receipts string
}

// Platform is the stack and what its tests reach.
type Platform struct {
	awscdk.Stack
	// Idempotency is the one table of the app's own design.
	Idempotency awsdynamodb.TableV2
	// Stripe and API are the endpoints.
	Stripe, API endpoint.IdempotentEndpoint
	// Ledger consumes the payments stream.
	Ledger stream.IdempotentStreamConsumer
	// Refunds consumes the bus's refund events, Receipts the receipts
	// bucket's uploads.
	Refunds, Receipts consumer.IdempotentConsumer
	// Payments is the Kinesis stream, Bus the event bus, Bucket the
	// receipts bucket.
	Payments awskinesis.Stream
	Bus      awsevents.EventBus
	Bucket   awss3.Bucket
}

// New builds the platform in scope.
func New(scope constructs.Construct, id string, e Entries) *Platform {
	st := awscdk.NewStack(scope, jsii.String(id), nil)
	p := &Platform{Stack: st}
	str := func(n string) *awsdynamodb.Attribute {
		return &awsdynamodb.Attribute{Name: jsii.String(n), Type: awsdynamodb.AttributeType_STRING}
	}
	p.Idempotency = awsdynamodb.NewTableV2(st, jsii.String("Idempotency"), &awsdynamodb.TablePropsV2{
		PartitionKey: str("PK"), SortKey: str("SK"), TimeToLiveAttribute: jsii.String("expiresAt"),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: jsii.Bool(true)},
	})
	shared := func(entry, namespace string) core.Props {
		return core.Props{Entry: jsii.String(entry), Table: p.Idempotency, Namespace: jsii.String(namespace)}
	}

	key := awskms.NewKey(st, jsii.String("SecretKey"), &awskms.KeyProps{EnableKeyRotation: jsii.Bool(true)})
	secret := awssecretsmanager.NewSecret(st, jsii.String("StripeSecret"), &awssecretsmanager.SecretProps{EncryptionKey: key})
	cdknag.NagSuppressions_AddResourceSuppressions(secret, &[]*cdknag.NagPackSuppression{{Id: jsii.String("AwsSolutions-SMG4"),
		Reason: jsii.String("Stripe issues and rotates the webhook's signing secret; during a rotation both secrets are listed here.")}}, jsii.Bool(true))
	p.Stripe = endpoint.NewIdempotentEndpoint(st, jsii.String("StripeHooks"), &endpoint.IdempotentEndpointProps{
		Props: shared(e.Webhook, "stripe"), Webhook: jsii.String("stripe"), WebhookSecret: secret,
	})
	p.API = endpoint.NewIdempotentEndpoint(st, jsii.String("PaymentsApi"), &endpoint.IdempotentEndpointProps{
		Props: shared(e.API, "payments"), Route: jsii.String("/payments"),
	})

	p.Payments = awskinesis.NewStream(st, jsii.String("Payments"), &awskinesis.StreamProps{Encryption: awskinesis.StreamEncryption_MANAGED})
	p.Ledger = stream.NewIdempotentStreamConsumer(st, jsii.String("Ledger"), &stream.IdempotentStreamConsumerProps{
		Props: shared(e.Ledger, "ledger"), Stream: p.Payments,
	})

	p.Bus = awsevents.NewEventBus(st, jsii.String("Bus"), nil)
	p.Refunds = consumer.NewIdempotentConsumer(st, jsii.String("Refunds"), &consumer.IdempotentConsumerProps{
		Props: shared(e.Events, "refunds"), EventBus: p.Bus,
		EventPattern: &awsevents.EventPattern{Source: jsii.Strings("payments"), DetailType: jsii.Strings("RefundRequested")},
	})

	logs := awss3.NewBucket(st, jsii.String("ReceiptLogs"), &awss3.BucketProps{
		Encryption: awss3.BucketEncryption_S3_MANAGED, BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		EnforceSSL: jsii.Bool(true), ObjectOwnership: awss3.ObjectOwnership_BUCKET_OWNER_PREFERRED,
	})
	p.Bucket = awss3.NewBucket(st, jsii.String("Receipts"), &awss3.BucketProps{
		Encryption: awss3.BucketEncryption_S3_MANAGED, BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		EnforceSSL: jsii.Bool(true), Versioned: jsii.Bool(true), ServerAccessLogsBucket: logs,
	})
	p.Receipts = consumer.NewIdempotentConsumer(st, jsii.String("ReceiptsImport"), &consumer.IdempotentConsumerProps{
		Props: shared(e.Receipts, "receipts"), Bucket: p.Bucket,
	})
	return p
}
