// Package consumertest builds the stacks the construct's tests read: one
// fixture per way of using IdempotentConsumer (defaults, every prop set,
// bring your own, FIFO, …), and the handler modules they bundle. The
// construct's own tests (constructs/consumer) and the tests that need what
// a CDK app must not link (cdk-nag's packs, the handler: internal/testkit/apptest)
// build the same stacks from here, so that each checks the same consumers.
package consumertest

import (
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/internal/modroot"
)

// Fixture is one stack of consumers and the resources of the app around
// them that the tests read.
type Fixture struct {
	Stack    awscdk.Stack
	Consumer consumer.IdempotentConsumer
	// Consumers are the consumers of a fixture with several, by id.
	Consumers map[string]consumer.IdempotentConsumer
	// The app's own resources, in the fixtures that have them.
	Topic, AlarmTopic awssns.Topic
	Shared, Ledger    awsdynamodb.Table
	Key               awskms.Key
}

// Build adds a fixture's resources to f.Stack, its consumers bundling the
// handler's main package in the directory entry.
type Build func(f *Fixture, entry string)

// Builds are the fixtures, by name (the name of their stack).
var Builds = map[string]Build{
	// Defaults: is a consumer with nothing but Entry set.
	"Defaults": func(f *Fixture, entry string) {
		f.Consumer = consumer.NewIdempotentConsumer(f.Stack, jsii.String("ChargeOrder"), &consumer.IdempotentConsumerProps{
			Props: core.Props{Entry: jsii.String(entry)},
		})
	},
	// Custom: sets every prop away from its default, with an existing topic, a
	// shared table and a customer-managed key.
	"Custom": func(f *Fixture, entry string) {
		s := f.Stack
		f.Key = awskms.NewKey(s, jsii.String("Key"), &awskms.KeyProps{EnableKeyRotation: jsii.Bool(true)})
		// Not f.Key: the subscription names the topic in the key's policy.
		f.Topic = awssns.NewTopic(s, jsii.String("Orders"), &awssns.TopicProps{
			MasterKey:  awskms.Alias_FromAliasName(s, jsii.String("SNSKey"), jsii.String("alias/aws/sns")),
			EnforceSSL: jsii.Bool(true),
		})
		// Raw delivery carries the largest SNS messages.
		f.Topic.Node().DefaultChild().(awssns.CfnTopic).SetMaximumMessageSize(jsii.Number(1048576))
		f.AlarmTopic = awssns.NewTopic(s, jsii.String("Alarms"), &awssns.TopicProps{MasterKey: f.Key, EnforceSSL: jsii.Bool(true)})
		table := func(id string, key awskms.IKey) awsdynamodb.Table {
			props := &awsdynamodb.TableProps{
				PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
				BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
				PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
					PointInTimeRecoveryEnabled: jsii.Bool(true),
				},
			}
			if key != nil {
				props.Encryption = awsdynamodb.TableEncryption_CUSTOMER_MANAGED
				props.EncryptionKey = key
			}
			return awsdynamodb.NewTable(s, jsii.String(id), props)
		}
		f.Shared = table("Shared", nil)
		f.Ledger = table("Ledger", f.Key)
		f.Consumer = consumer.NewIdempotentConsumer(s, jsii.String("CreditWallet"), &consumer.IdempotentConsumerProps{
			Props:              core.Props{Entry: jsii.String(entry), Table: f.Shared, Namespace: jsii.String("wallet"), MemorySize: jsii.Number(512), Timeout: awscdk.Duration_Seconds(jsii.Number(45)), ReservedConcurrentExecutions: jsii.Number(5), LogRetention: awslogs.RetentionDays_ONE_WEEK, Tracing: awslambda.Tracing_DISABLED, Environment: &map[string]*string{"WALLET_TABLE": f.Shared.TableName()}, Window: awscdk.Duration_Hours(jsii.Number(1)), TTLAfterWindow: awscdk.Duration_Hours(jsii.Number(2)), HashKeys: jsii.Bool(true), MetricsNamespace: jsii.String("Wallets"), AlarmAction: awscloudwatchactions.NewSnsAction(f.AlarmTopic)},
			Topic:              f.Topic,
			RawMessageDelivery: jsii.Bool(true),
			FilterPolicy: &map[string]awssns.SubscriptionFilter{
				"type": awssns.SubscriptionFilter_StringFilter(&awssns.StringConditions{Allowlist: jsii.Strings("order.placed")}),
			},
			EncryptionKey:               f.Key,
			MaxReceiveCount:             jsii.Number(5),
			VisibilityTimeout:           awscdk.Duration_Seconds(jsii.Number(300)),
			BackoffBase:                 awscdk.Duration_Minutes(jsii.Number(2)),
			BackoffCap:                  awscdk.Duration_Minutes(jsii.Number(10)),
			BackoffFIFOCap:              awscdk.Duration_Minutes(jsii.Number(5)),
			LeaseMax:                    awscdk.Duration_Seconds(jsii.Number(40)),
			CacheSize:                   jsii.Number(100),
			PayloadIgnore:               jsii.Strings("meta.sentAt", "traceId"),
			BatchConcurrency:            jsii.Number(4),
			FinishBudget:                awscdk.Duration_Millis(jsii.Number(1500)),
			MinRemaining:                awscdk.Duration_Millis(jsii.Number(2500)),
			MaxMessageBytes:             jsii.Number(1048576),
			BatchSize:                   jsii.Number(100),
			MaxBatchingWindow:           awscdk.Duration_Seconds(jsii.Number(5)),
			MaxConcurrency:              jsii.Number(5),
			OldestMessageAlarmThreshold: awscdk.Duration_Minutes(jsii.Number(5)),
		})
		consumer.GrantTransactionalWrites(f.Ledger, f.Consumer)
	},
	// Keyed: has a customer-managed key and the topic the construct creates: the
	// key must not encrypt that topic (the subscription names the topic in the
	// key's policy, which would make the two depend on each other).
	"Keyed": func(f *Fixture, entry string) {
		f.Key = awskms.NewKey(f.Stack, jsii.String("Key"), &awskms.KeyProps{EnableKeyRotation: jsii.Bool(true)})
		f.Consumer = consumer.NewIdempotentConsumer(f.Stack, jsii.String("SendReceipt"), &consumer.IdempotentConsumerProps{
			Props:         core.Props{Entry: jsii.String(entry), RemovalPolicy: awscdk.RemovalPolicy_DESTROY},
			EncryptionKey: f.Key,
		})
		f.AlarmTopic = awssns.NewTopic(f.Stack, jsii.String("Publishers"), &awssns.TopicProps{
			MasterKey:  f.Key,
			EnforceSSL: jsii.Bool(true),
		})
		publisher := awsiam.NewRole(f.Stack, jsii.String("Publisher"), &awsiam.RoleProps{
			AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		})
		f.Consumer.GrantPublish(publisher)
	},
	// Dashboard: is a consumer with its dashboard, in a namespace of its own.
	"Dashboard": func(f *Fixture, entry string) {
		f.Consumer = consumer.NewIdempotentConsumer(f.Stack, jsii.String("Watched"), &consumer.IdempotentConsumerProps{
			Props: core.Props{Entry: jsii.String(entry), Dashboard: jsii.Bool(true), MetricsNamespace: jsii.String("Payments")},
		})
	},
	// OwnQueue: brings a queue of the app with its dead-letter queue.
	"OwnQueue": func(f *Fixture, entry string) {
		dlq := awssqs.NewQueue(f.Stack, jsii.String("PaymentsDLQ"), &awssqs.QueueProps{
			EnforceSSL: jsii.Bool(true), Encryption: awssqs.QueueEncryption_SQS_MANAGED, RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		})
		queue := awssqs.NewQueue(f.Stack, jsii.String("Payments"), &awssqs.QueueProps{
			EnforceSSL: jsii.Bool(true), Encryption: awssqs.QueueEncryption_SQS_MANAGED,
			VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(5)),
			DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(3)},
		})
		f.Consumer = consumer.NewIdempotentConsumer(f.Stack, jsii.String("Pay"), &consumer.IdempotentConsumerProps{
			Props: core.Props{Entry: jsii.String(entry)},
			Queue: queue,
		})
		// The consumer is an IGrantable: aws-cdk-lib's grants take it.
		f.Ledger = awsdynamodb.NewTable(f.Stack, jsii.String("Ledger"), &awsdynamodb.TableProps{
			PartitionKey:                     &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
			BillingMode:                      awsdynamodb.BillingMode_PAY_PER_REQUEST,
			PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: jsii.Bool(true)},
		})
		f.Ledger.GrantReadData(f.Consumer)
	},
	// Imported: brings an imported queue, with the declarations it needs.
	"Imported": func(f *Fixture, entry string) {
		f.Consumer = consumer.NewIdempotentConsumer(f.Stack, jsii.String("Pay"), &consumer.IdempotentConsumerProps{
			Props:             core.Props{Entry: jsii.String(entry)},
			Queue:             awssqs.Queue_FromQueueArn(f.Stack, jsii.String("Payments"), jsii.String("arn:aws:sqs:eu-west-1:123456789012:payments")),
			DeadLetterQueue:   awssqs.Queue_FromQueueArn(f.Stack, jsii.String("PaymentsDLQ"), jsii.String("arn:aws:sqs:eu-west-1:123456789012:payments-dlq")),
			VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(3)),
		})
	},
	// Overrides: overrides the defaults of the queues the construct creates.
	"Overrides": func(f *Fixture, entry string) {
		f.Key = awskms.NewKey(f.Stack, jsii.String("Key"), &awskms.KeyProps{EnableKeyRotation: jsii.Bool(true)})
		f.Consumer = consumer.NewIdempotentConsumer(f.Stack, jsii.String("Pay"), &consumer.IdempotentConsumerProps{
			Props: core.Props{Entry: jsii.String(entry)},
			QueueProps: &awssqs.QueueProps{
				RetentionPeriod:     awscdk.Duration_Days(jsii.Number(7)),
				EncryptionMasterKey: f.Key,
				Encryption:          awssqs.QueueEncryption_KMS,
			},
			DeadLetterQueueProps: &awssqs.QueueProps{RetentionPeriod: awscdk.Duration_Days(jsii.Number(10))},
		})
	},
	// Networked: runs the function in a VPC on x86_64, with its security group,
	// a layer and a role of the app.
	"Networked": func(f *Fixture, entry string) {
		vpc := awsec2.NewVpc(f.Stack, jsii.String("Vpc"), &awsec2.VpcProps{
			MaxAzs: jsii.Number(2), NatGateways: jsii.Number(0),
			SubnetConfiguration: &[]*awsec2.SubnetConfiguration{{Name: jsii.String("app"), SubnetType: awsec2.SubnetType_PRIVATE_ISOLATED}},
			FlowLogs:            &map[string]*awsec2.FlowLogOptions{"all": {}},
		})
		sg := awsec2.NewSecurityGroup(f.Stack, jsii.String("SG"), &awsec2.SecurityGroupProps{Vpc: vpc, Description: jsii.String("payments")})
		role := awsiam.NewRole(f.Stack, jsii.String("PayRole"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
		f.Consumer = consumer.NewIdempotentConsumer(f.Stack, jsii.String("Pay"), &consumer.IdempotentConsumerProps{
			Props: core.Props{Entry: jsii.String(entry), Vpc: vpc, VpcSubnets: &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_ISOLATED}, SecurityGroups: &[]awsec2.ISecurityGroup{sg}, Layers: &[]awslambda.ILayerVersion{awslambda.LayerVersion_FromLayerVersionArn(f.Stack, jsii.String("Otel"),
				jsii.String("arn:aws:lambda:eu-west-1:123456789012:layer:otel-collector-amd64:1"))}, Role: role, Architecture: awslambda.Architecture_X86_64()},
		})
	},
	// Fifo: is one stack of consumers of FIFO topics:
	//   - ApplyPayment creates its own FIFO topic, with content-based
	//     deduplication;
	//   - ShipOrder subscribes to a FIFO topic of the app, with nothing said;
	//   - AuditOrder subscribes to that topic with StandardQueue, and batches;
	//   - RefundOrder subscribes to a topic imported from a token ARN and says
	//     it is FIFO;
	//   - NotifyOrder subscribes to a topic imported from a token ARN and says
	//     nothing (a standard queue, and a warning).
	"Fifo": func(f *Fixture, entry string) {
		f.Consumers = map[string]consumer.IdempotentConsumer{}
		s := f.Stack
		f.Topic = awssns.NewTopic(s, jsii.String("Orders"), &awssns.TopicProps{
			Fifo:       jsii.Bool(true),
			MasterKey:  awskms.Alias_FromAliasName(s, jsii.String("SNSKey"), jsii.String("alias/aws/sns")),
			EnforceSSL: jsii.Bool(true),
		})
		imported := func(id string) awssns.ITopic {
			return awssns.Topic_FromTopicArn(s, jsii.String(id), awscdk.Fn_ImportValue(jsii.String(id+"Arn")))
		}
		for id, p := range map[string]*consumer.IdempotentConsumerProps{
			"ApplyPayment": {FifoTopic: jsii.Bool(true), ContentBasedDeduplication: jsii.Bool(true)},
			"ShipOrder":    {Topic: f.Topic},
			"AuditOrder": {Topic: f.Topic, StandardQueue: jsii.Bool(true),
				BatchSize: jsii.Number(100), MaxBatchingWindow: awscdk.Duration_Seconds(jsii.Number(5))},
			"RefundOrder": {Topic: imported("Refunds"), FifoTopic: jsii.Bool(true)},
			"NotifyOrder": {Topic: imported("Notices")},
		} {
			p.Entry = jsii.String(entry)
			f.Consumers[id] = consumer.NewIdempotentConsumer(s, jsii.String(id), p)
		}
	},
	// EventBridge, Bucket, Direct: the sources other than a topic
	// (sources.go).
	"EventBridge": eventBridgeFixture,
	"Bucket":      bucketFixture,
	"Direct":      directFixture,
}

// Handlers are the handler main packages the fixtures and tests bundle,
// each in a module of its own.
type Handlers struct {
	// Handler builds, on the library of this working tree.
	Handler string
	// Broken does not compile.
	Broken string
	// Library is not a main package.
	Library string
}

// WriteHandlers writes the handler modules under dir. They use the library
// from this working tree (the construct refuses a handler without it)
// through a package with no dependencies, so that building them is fast and
// needs no network.
func WriteHandlers(dir string) (Handlers, error) {
	h := Handlers{Handler: filepath.Join(dir, "handler"), Broken: filepath.Join(dir, "broken"), Library: filepath.Join(dir, "notmain")}
	root, err := modroot.OfWorkingDirectory()
	if err != nil {
		return h, err
	}
	const lib = "github.com/idempotent-consumer/idempotent-consumer"
	onLibrary := "require " + lib + " v0.0.0-00010101000000-000000000000\n\nreplace " + lib + " => " + root + "\n"
	for dir, src := range map[string]string{
		h.Handler: "package main\n\nimport _ \"" + lib + "/lambda/idempotency\"\n\nfunc main() {}\n",
		h.Broken:  "package main\n\nfunc main() { notDeclaredAnywhere() }\n",
		h.Library: "package orders\n\n// Key is not a main.\nfunc Key() string { return \"k\" }\n",
	} {
		if err := WriteModule(dir, onLibrary, src); err != nil {
			return h, err
		}
	}
	return h, nil
}

// WriteModule writes a module of its own in dir, with the library's go
// version, the go.mod lines in mod, and mainSrc as main.go.
func WriteModule(dir, mod, mainSrc string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/"+filepath.Base(dir)+"\n\ngo 1.26.0\n\n"+mod), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "main.go"), []byte(mainSrc), 0o644)
}
