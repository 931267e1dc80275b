// Package consumer provides IdempotentConsumer, an AWS CDK construct for an
// idempotent SNS → SQS → Lambda consumer written in Go.
//
// One construct provisions the subscription of a queue to a topic (with a
// dead-letter queue for what SNS cannot deliver), the queue and its
// dead-letter queue with redrive, the DynamoDB table of idempotency records
// (or a namespace in an existing table), the function built from the
// handler's Go main package for provided.al2023 on arm64, its own
// least-privilege role and log group, the SQS event source with partial
// batch responses, and alarms. The handler is configured only through the
// runtime contract of package lambda/contract.
//
// The construct is secure by default: the topic, the queues and the table
// are encrypted, the topic and the queues refuse requests without TLS, and
// cdk-nag's AwsSolutions and Serverless packs find nothing that is not
// suppressed with its reason.
package consumer

import (
	"fmt"
	"sync"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Construct ids of the resources an IdempotentConsumer creates, relative to
// the consumer. They are part of the public contract: renaming one replaces
// the resource (and, for the table, its data) in every deployed stack.
const (
	// IDTopic is the topic the consumer creates when none is given.
	IDTopic = "Topic"
	// IDTopicKey is the imported alias/aws/sns key of that topic.
	IDTopicKey = "TopicKey"
	// IDQueue is the queue the function consumes.
	IDQueue = "Queue"
	// IDDeadLetterQueue is the queue's dead-letter queue.
	IDDeadLetterQueue = "DeadLetterQueue"
	// IDSubscriptionDeadLetterQueue is the subscription's dead-letter queue.
	IDSubscriptionDeadLetterQueue = "SubscriptionDeadLetterQueue"
	// IDTable is the table the consumer creates when none is given.
	IDTable = "Table"
	// IDLogGroup is the function's log group.
	IDLogGroup = "LogGroup"
	// IDRole is the function's execution role.
	IDRole = "Role"
	// IDFunction is the function.
	IDFunction = "Function"
	// IDDeadLetterQueueAlarm is the alarm on the dead-letter queue.
	IDDeadLetterQueueAlarm = "DeadLetterQueueAlarm"
	// IDSubscriptionDLQAlarm is the alarm on the subscription dead-letter queue.
	IDSubscriptionDLQAlarm = "SubscriptionDeadLetterQueueAlarm"
	// IDOldestMessageAlarm is the alarm on the age of the oldest message.
	IDOldestMessageAlarm = "OldestMessageAlarm"
	// IDErrorsAlarm is the alarm on function errors.
	IDErrorsAlarm = "ErrorsAlarm"
	// IDThrottlesAlarm is the alarm on function throttles.
	IDThrottlesAlarm = "ThrottlesAlarm"
	// IDKeySecret is the secret under which keys are hashed (HashKeys).
	IDKeySecret = "KeySecret"
)

// Table schema of the idempotency records, which a table passed as
// IdempotentConsumerProps.Table must follow.
const (
	// PartitionKey is the name of the table's string partition key.
	PartitionKey = dynamostore.KeyAttribute
	// TTLAttribute is the attribute DynamoDB TTL is enabled on.
	TTLAttribute = dynamostore.TTLAttribute
)

// itemActions are the item-level DynamoDB actions the guard uses. They are
// also what TransactWriteItems checks, item by item.
var itemActions = []*string{
	jsii.String("dynamodb:GetItem"),
	jsii.String("dynamodb:PutItem"),
	jsii.String("dynamodb:UpdateItem"),
	jsii.String("dynamodb:DeleteItem"),
	jsii.String("dynamodb:ConditionCheckItem"),
}

// transactionalActions are what a transactional effect needs on an item of
// another table it writes in the same TransactWriteItems.
var transactionalActions = []*string{
	jsii.String("dynamodb:PutItem"),
	jsii.String("dynamodb:UpdateItem"),
	jsii.String("dynamodb:DeleteItem"),
	jsii.String("dynamodb:ConditionCheckItem"),
}

// tableKeyActions are what reading and writing items of a table encrypted
// with a customer-managed key needs on the key: the actions of CDK's
// grantReadWriteData, spelled out without wildcards.
var tableKeyActions = []*string{
	jsii.String("kms:Decrypt"),
	jsii.String("kms:DescribeKey"),
	jsii.String("kms:Encrypt"),
	jsii.String("kms:GenerateDataKey"),
	jsii.String("kms:GenerateDataKeyWithoutPlaintext"),
	jsii.String("kms:ReEncryptFrom"),
	jsii.String("kms:ReEncryptTo"),
}

// IdempotentConsumer is an idempotent SNS → SQS → Lambda consumer: a queue
// subscribed to a topic, a Go handler consuming it in batches, and a
// DynamoDB table of idempotency records. Create one with
// NewIdempotentConsumer.
type IdempotentConsumer interface {
	constructs.Construct

	// Topic is the topic the queue is subscribed to (given or created).
	Topic() awssns.ITopic
	// Queue is the queue the function consumes.
	Queue() awssqs.Queue
	// DeadLetterQueue receives the messages the function failed to process
	// MaxReceiveCount times.
	DeadLetterQueue() awssqs.Queue
	// SubscriptionDeadLetterQueue receives the messages SNS could not
	// deliver into Queue.
	SubscriptionDeadLetterQueue() awssqs.Queue
	// Table holds the idempotency records (given or created).
	Table() awsdynamodb.ITable
	// Namespace is the key prefix of this consumer's records in Table.
	Namespace() *string
	// Function is the handler.
	Function() awslambda.Function
	// Role is the function's execution role.
	Role() awsiam.Role
	// LogGroup is the function's log group.
	LogGroup() awslogs.LogGroup
	// Alarms are the construct's alarms.
	Alarms() Alarms
	// KeySecret is the secret under which the handler hashes keys, when
	// HashKeys is on; nil otherwise.
	KeySecret() awssecretsmanager.ISecret

	// GrantPublish lets grantee publish to Topic (and, for a given topic
	// encrypted with a customer-managed key, use that key).
	GrantPublish(grantee awsiam.IGrantable) awsiam.Grant
	// GrantTransactionalWrites lets the function write items of table in
	// the same TransactWriteItems as its idempotency record (an effect that
	// is itself a DynamoDB write): PutItem, UpdateItem, DeleteItem and
	// ConditionCheckItem on that table, and encryption with its key if it
	// has a customer-managed one.
	GrantTransactionalWrites(table awsdynamodb.ITable) awsiam.Grant
	// MetricDeadLetterMessages is the number of messages visible in the
	// dead-letter queue (maximum).
	MetricDeadLetterMessages(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricSubscriptionDeadLetterMessages is the number of messages visible
	// in the subscription dead-letter queue (maximum).
	MetricSubscriptionDeadLetterMessages(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricOldestMessageAge is the age of the oldest message in the queue
	// (maximum, seconds).
	MetricOldestMessageAge(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricErrors is the number of failed invocations of the function
	// (sum). Records reported in batchItemFailures are not errors.
	MetricErrors(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricThrottles is the number of throttled invocations (sum).
	MetricThrottles(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
}

// Alarms are the alarms of an IdempotentConsumer. Each fires on the first
// datapoint that breaches and treats missing data as not breaching.
type Alarms struct {
	// DeadLetterQueue fires when the dead-letter queue holds a message.
	DeadLetterQueue awscloudwatch.Alarm
	// SubscriptionDeadLetterQueue fires when SNS could not deliver a
	// message into the queue.
	SubscriptionDeadLetterQueue awscloudwatch.Alarm
	// OldestMessage fires when the oldest message in the queue is older than
	// OldestMessageAlarmThreshold: the consumer is not keeping up.
	OldestMessage awscloudwatch.Alarm
	// Errors fires when an invocation failed as a whole.
	Errors awscloudwatch.Alarm
	// Throttles fires when an invocation was throttled.
	Throttles awscloudwatch.Alarm
}

// All returns every alarm, in a fixed order.
func (a Alarms) All() []awscloudwatch.Alarm {
	return []awscloudwatch.Alarm{a.DeadLetterQueue, a.SubscriptionDeadLetterQueue, a.OldestMessage, a.Errors, a.Throttles}
}

type idempotentConsumer struct {
	constructs.Construct
	topic     awssns.ITopic
	ownTopic  bool
	queue     awssqs.Queue
	dlq       awssqs.Queue
	subDLQ    awssqs.Queue
	table     awsdynamodb.ITable
	namespace string
	function  awslambda.Function
	role      awsiam.Role
	logGroup  awslogs.LogGroup
	alarms    Alarms
	keySecret awssecretsmanager.ISecret
}

// claims records, per app, which consumer holds each namespace of each
// shared table, so that two consumers of one app cannot share one.
var claims = struct {
	sync.Mutex
	byApp map[string]map[string]string // app address → table and namespace → consumer path
}{byApp: map[string]map[string]string{}}

// claimNamespace claims namespace on table for consumer c, or says which
// consumer of the app holds it. A table is known by its construct, or by
// its name when it is imported by a concrete name.
func claimNamespace(c constructs.Construct, table awsdynamodb.ITable, namespace string) error {
	tableKey := "construct " + *table.Node().Addr()
	if name := table.TableName(); name != nil && !*awscdk.Token_IsUnresolved(name) {
		tableKey = "table " + *name
	}
	app := *c.Node().Root().Node().Addr()
	claims.Lock()
	defer claims.Unlock()
	held := claims.byApp[app]
	if held == nil {
		held = map[string]string{}
		claims.byApp[app] = held
	}
	key := tableKey + "\x00" + namespace
	if other, ok := held[key]; ok {
		return fmt.Errorf("Namespace %q on the table %s is the namespace of the consumer %s already: two consumers with one namespace on one table suppress each other's facts; give each consumer a Namespace of its own", namespace, *table.Node().Path(), other)
	}
	held[key] = *c.Node().Path()
	return nil
}

// NewIdempotentConsumer creates an idempotent consumer in scope.
//
// It panics, as CDK constructs do, when the props are invalid (the message
// lists every problem with the value given and the fix; see
// IdempotentConsumerProps.Validate), when the handler does not build (the
// message includes the compiler's output), or when the handler is not built
// on this library, or on another version of it than the construct (see
// DESIGN.md, "Versions that cannot drift").
func NewIdempotentConsumer(scope constructs.Construct, id *string, props *IdempotentConsumerProps) IdempotentConsumer {
	if props == nil {
		props = &IdempotentConsumerProps{}
	}
	s, err := props.resolve(id)
	if err != nil {
		panic(err)
	}
	entry, err := resolveEntry(*props.Entry, stringOr(props.EntryRoot, ""))
	if err != nil {
		panic(fmt.Errorf("IdempotentConsumer %q: %w", *id, err))
	}
	assetDir, err := bootstrapDir(entry)
	if err != nil {
		panic(fmt.Errorf("IdempotentConsumer %q: %w", *id, err))
	}

	c := &idempotentConsumer{namespace: s.runtime.Namespace}
	// Overriding (rather than wrapping) the jsii Construct makes c itself
	// the construct, so it can be the scope of other constructs.
	constructs.NewConstruct_Override(c, scope, id)
	// The construct's path is unique in the app: the consumer's name in
	// logs and its metrics dimension, where the id alone could repeat in
	// another stack.
	s.runtime.Consumer = *c.Node().Path()
	if props.Table != nil {
		if err := claimNamespace(c, props.Table, s.runtime.Namespace); err != nil {
			panic(fmt.Errorf("IdempotentConsumer %q: %w", *id, err))
		}
	}
	if s.fifo.unknown {
		awscdk.Annotations_Of(c).AddWarningV2(jsii.String("idempotent-consumer:topicKindUnknown"), jsii.String(unknownTopicWarning), nil)
	}
	key := props.EncryptionKey

	// Queues: SSE-SQS or the customer's key, TLS only, and the largest SQS
	// body, so that no queue refuses what the topic delivers (set even
	// though it is SQS's default now: a queue created before keeps 256 KiB
	// unless the template says otherwise).
	//
	// Under a FIFO topic all three are FIFO queues (SNS delivers a FIFO
	// topic's subscription, and its dead letters, only into FIFO queues, and
	// a FIFO queue's dead-letter queue must be FIFO), without content-based
	// deduplication: SNS hands each message's deduplication id on to the
	// queue, and a hash of the body would hash the SNS envelope, which is
	// new on every delivery. CloudFormation names them with ".fifo".
	queueProps := func(extra *awssqs.QueueProps) *awssqs.QueueProps {
		if s.fifo.queue {
			extra.Fifo = jsii.Bool(true)
		}
		extra.EnforceSSL = jsii.Bool(true)
		extra.MaxMessageSizeBytes = jsii.Number(sqsbatch.MaxQueueBodyBytes)
		if key != nil {
			extra.Encryption = awssqs.QueueEncryption_KMS
			extra.EncryptionMasterKey = key
		} else {
			extra.Encryption = awssqs.QueueEncryption_SQS_MANAGED
		}
		return extra
	}
	c.dlq = awssqs.NewQueue(c, jsii.String(IDDeadLetterQueue), queueProps(&awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	}))
	c.queue = awssqs.NewQueue(c, jsii.String(IDQueue), queueProps(&awssqs.QueueProps{
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(s.visibilityTimeout.Seconds())),
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           c.dlq,
			MaxReceiveCount: jsii.Number(s.maxReceiveCount),
		},
	}))
	c.subDLQ = awssqs.NewQueue(c, jsii.String(IDSubscriptionDeadLetterQueue), queueProps(&awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	}))
	// A dead-letter queue has no dead-letter queue of its own.
	suppress(c.dlq, true,
		nagRule{id: "Serverless-SQSRedrivePolicy", reason: "This queue is the dead-letter queue of Queue (its RedrivePolicy target); a dead-letter queue has no dead-letter queue of its own."})
	suppress(c.subDLQ, true,
		nagRule{id: "AwsSolutions-SQS3", reason: "This queue is the dead-letter queue of the SNS subscription (its RedrivePolicy target); a dead-letter queue has no dead-letter queue of its own."},
		nagRule{id: "Serverless-SQSRedrivePolicy", reason: "This queue is the dead-letter queue of the SNS subscription (its RedrivePolicy target); a dead-letter queue has no dead-letter queue of its own."})

	// Topic and subscription.
	c.topic = props.Topic
	if c.topic == nil {
		c.ownTopic = true
		// Not EncryptionKey: the subscription adds the topic's ARN to the
		// key's policy, and a topic encrypted with that key would then
		// depend on the key that depends on it.
		topicProps := &awssns.TopicProps{
			MasterKey:  awskms.Alias_FromAliasName(c, jsii.String(IDTopicKey), jsii.String("alias/aws/sns")),
			EnforceSSL: jsii.Bool(true),
		}
		if s.fifo.topic {
			// CDK names a FIFO topic after its path, with ".fifo".
			topicProps.Fifo = jsii.Bool(true)
			topicProps.ContentBasedDeduplication = props.ContentBasedDeduplication
		}
		topic := awssns.NewTopic(c, jsii.String(IDTopic), topicProps)
		// SNS refuses at Publish what the handler would refuse.
		topic.Node().DefaultChild().(awssns.CfnTopic).SetMaximumMessageSize(jsii.Number(s.runtime.MaxMessageBytes))
		c.topic = topic
	}
	c.topic.AddSubscription(awssnssubscriptions.NewSqsSubscription(c.queue, &awssnssubscriptions.SqsSubscriptionProps{
		DeadLetterQueue:    c.subDLQ,
		FilterPolicy:       props.FilterPolicy,
		RawMessageDelivery: jsii.Bool(props.RawMessageDelivery != nil && *props.RawMessageDelivery),
	}))

	// Table.
	c.table = props.Table
	if c.table == nil {
		removal := props.RemovalPolicy
		if removal == "" {
			removal = awscdk.RemovalPolicy_RETAIN
		}
		c.table = awsdynamodb.NewTable(c, jsii.String(IDTable), &awsdynamodb.TableProps{
			PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String(PartitionKey), Type: awsdynamodb.AttributeType_STRING},
			BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
			TimeToLiveAttribute: jsii.String(TTLAttribute),
			PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
				PointInTimeRecoveryEnabled: jsii.Bool(true),
			},
			Encryption:    awsdynamodb.TableEncryption_AWS_MANAGED,
			RemovalPolicy: removal,
		})
	}

	// Log group and role: the role has no managed policy, only what the
	// function needs, each on its one resource.
	retention := props.LogRetention
	if retention == "" {
		retention = awslogs.RetentionDays_ONE_MONTH
	}
	c.logGroup = awslogs.NewLogGroup(c, jsii.String(IDLogGroup), &awslogs.LogGroupProps{
		Retention: retention,
	})
	c.role = awsiam.NewRole(c, jsii.String(IDRole), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String(fmt.Sprintf("Execution role of the idempotent consumer %s", *id)),
	})
	c.logGroup.GrantWrite(c.role)

	// Function.
	tracing := props.Tracing
	if tracing == "" {
		tracing = awslambda.Tracing_ACTIVE
	}
	environment := map[string]*string{}
	if props.Environment != nil {
		for k, v := range *props.Environment {
			environment[k] = v
		}
	}
	for k, v := range s.runtime.Encode() {
		environment[k] = jsii.String(v)
	}
	environment[contract.TableVar] = c.table.TableName()
	if props.HashKeys != nil && *props.HashKeys {
		// 64 letters and digits: more than the 32 bytes the handler
		// requires. Retained and never rotated: a new secret gives every
		// fact a new record key.
		secret := awssecretsmanager.NewSecret(c, jsii.String(IDKeySecret), &awssecretsmanager.SecretProps{
			Description: jsii.String(fmt.Sprintf("Secret under which the idempotent consumer %s hashes its idempotency keys (HMAC-SHA-256). Never change it while records live.", *id)),
			GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
				PasswordLength:     jsii.Number(64),
				ExcludePunctuation: jsii.Bool(true),
				IncludeSpace:       jsii.Bool(false),
			},
			RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
		})
		suppress(secret, false,
			nagRule{id: "AwsSolutions-SMG4", reason: "The secret keys the HMAC of every idempotency key: rotating it would give every fact a new record key, so duplicates of the business window would run their effects again."})
		// A dynamic reference: CloudFormation resolves it at deployment, so
		// the template holds no secret and the function needs no access to
		// Secrets Manager.
		environment[contract.KeySecretVar] = secret.SecretValue().UnsafeUnwrap()
		c.keySecret = secret
	}

	c.function = awslambda.NewFunction(c, jsii.String(IDFunction), &awslambda.FunctionProps{
		Description:                  jsii.String(fmt.Sprintf("Idempotent consumer %s", *id)),
		Runtime:                      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:                 awslambda.Architecture_ARM_64(),
		Handler:                      jsii.String("bootstrap"),
		Code:                         awslambda.Code_FromAsset(jsii.String(assetDir), nil),
		Role:                         c.role,
		LogGroup:                     c.logGroup,
		MemorySize:                   jsii.Number(s.memorySize),
		Timeout:                      awscdk.Duration_Seconds(jsii.Number(s.runtime.Timeout.Seconds())),
		ReservedConcurrentExecutions: props.ReservedConcurrentExecutions,
		Tracing:                      tracing,
		Environment:                  &environment,
	})

	// Idempotency records: item-level actions on that one table.
	c.table.Grant(c.function, itemActions...)
	if k := c.table.EncryptionKey(); k != nil {
		k.Grant(c.function, tableKeyActions...)
	}

	// Event source: ReceiveMessage, DeleteMessage, ChangeMessageVisibility
	// and GetQueueAttributes on the queue (and kms:Decrypt on its key).
	c.function.AddEventSource(awslambdaeventsources.NewSqsEventSource(c.queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(s.runtime.BatchSize),
		MaxBatchingWindow:       props.MaxBatchingWindow,
		MaxConcurrency:          props.MaxConcurrency,
		ReportBatchItemFailures: jsii.Bool(true),
	}))
	suppress(c.function, false,
		nagRule{id: "Serverless-LambdaDLQ", reason: "The function is only invoked synchronously, by the SQS event-source mapping; a message it fails MaxReceiveCount times moves to the queue's dead-letter queue by the queue's redrive policy."})
	// The event-source mapping is the child of the function that
	// AddEventSource just created.
	for _, child := range *c.function.Node().Children() {
		if esm, ok := child.(awslambda.EventSourceMapping); ok {
			suppress(esm, true,
				nagRule{id: "Serverless-LambdaEventSourceMappingDestination", reason: "An on-failure destination only applies to stream and Kafka event sources; for SQS the queue's redrive policy moves failed messages to the dead-letter queue."})
		}
	}

	// Added last, when the role's default policy holds every statement.
	// CDK grants X-Ray for every mode but DISABLED.
	if tracing != awslambda.Tracing_DISABLED {
		suppress(c.role, true, nagRule{
			id:        "AwsSolutions-IAM5",
			reason:    "X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords do not support resource-level permissions, so X-Ray requires Resource \"*\".",
			appliesTo: []string{"Resource::*"},
		})
	}

	// Alarms.
	alarm := func(id, description string, metric awscloudwatch.IMetric, threshold float64) awscloudwatch.Alarm {
		a := awscloudwatch.NewAlarm(c, jsii.String(id), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String(description),
			Metric:             metric,
			Threshold:          jsii.Number(threshold),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			EvaluationPeriods:  jsii.Number(1),
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		if props.AlarmAction != nil {
			a.AddAlarmAction(props.AlarmAction)
		}
		return a
	}
	c.alarms = Alarms{
		DeadLetterQueue: alarm(IDDeadLetterQueueAlarm,
			fmt.Sprintf("%s: messages the consumer failed to process %d times are in the dead-letter queue.", *id, int(s.maxReceiveCount)),
			c.MetricDeadLetterMessages(nil), 0),
		SubscriptionDeadLetterQueue: alarm(IDSubscriptionDLQAlarm,
			fmt.Sprintf("%s: SNS could not deliver messages into the queue; they are in the subscription dead-letter queue.", *id),
			c.MetricSubscriptionDeadLetterMessages(nil), 0),
		OldestMessage: alarm(IDOldestMessageAlarm,
			fmt.Sprintf("%s: the oldest message in the queue is older than %s; the consumer is not keeping up.", *id, contract.Format(s.oldestMessageAge)),
			c.MetricOldestMessageAge(nil), s.oldestMessageAge.Seconds()),
		Errors: alarm(IDErrorsAlarm,
			fmt.Sprintf("%s: invocations failed as a whole (records reported as batch item failures are not errors).", *id),
			c.MetricErrors(nil), 0),
		Throttles: alarm(IDThrottlesAlarm,
			fmt.Sprintf("%s: invocations were throttled.", *id),
			c.MetricThrottles(nil), 0),
	}
	return c
}

func (c *idempotentConsumer) Topic() awssns.ITopic                      { return c.topic }
func (c *idempotentConsumer) Queue() awssqs.Queue                       { return c.queue }
func (c *idempotentConsumer) DeadLetterQueue() awssqs.Queue             { return c.dlq }
func (c *idempotentConsumer) SubscriptionDeadLetterQueue() awssqs.Queue { return c.subDLQ }
func (c *idempotentConsumer) Table() awsdynamodb.ITable                 { return c.table }
func (c *idempotentConsumer) Namespace() *string                        { return jsii.String(c.namespace) }
func (c *idempotentConsumer) Function() awslambda.Function              { return c.function }
func (c *idempotentConsumer) Role() awsiam.Role                         { return c.role }
func (c *idempotentConsumer) LogGroup() awslogs.LogGroup                { return c.logGroup }
func (c *idempotentConsumer) Alarms() Alarms                            { return c.alarms }
func (c *idempotentConsumer) KeySecret() awssecretsmanager.ISecret      { return c.keySecret }

func (c *idempotentConsumer) GrantPublish(grantee awsiam.IGrantable) awsiam.Grant {
	if !c.ownTopic {
		// A given topic may be encrypted with a customer-managed key:
		// CDK grants that key too.
		return c.topic.GrantPublish(grantee)
	}
	// The topic the construct creates is under alias/aws/sns, whose key
	// policy already lets the account's principals use it through SNS; an
	// IAM grant on the key would only be a wildcard on key/*.
	return awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      grantee,
		Actions:      jsii.Strings("sns:Publish"),
		ResourceArns: jsii.Strings(*c.topic.TopicArn()),
	})
}

func (c *idempotentConsumer) GrantTransactionalWrites(table awsdynamodb.ITable) awsiam.Grant {
	g := table.Grant(c.function, transactionalActions...)
	if k := table.EncryptionKey(); k != nil {
		k.Grant(c.function, tableKeyActions...)
	}
	return g
}

func (c *idempotentConsumer) MetricDeadLetterMessages(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.dlq.MetricApproximateNumberOfMessagesVisible(withStatistic(props, "Maximum"))
}

func (c *idempotentConsumer) MetricSubscriptionDeadLetterMessages(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.subDLQ.MetricApproximateNumberOfMessagesVisible(withStatistic(props, "Maximum"))
}

func (c *idempotentConsumer) MetricOldestMessageAge(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.queue.MetricApproximateAgeOfOldestMessage(withStatistic(props, "Maximum"))
}

func (c *idempotentConsumer) MetricErrors(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.function.MetricErrors(withStatistic(props, "Sum"))
}

func (c *idempotentConsumer) MetricThrottles(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.function.MetricThrottles(withStatistic(props, "Sum"))
}

// withStatistic returns a copy of props with the statistic set when the
// caller did not choose one.
func withStatistic(props *awscloudwatch.MetricOptions, statistic string) *awscloudwatch.MetricOptions {
	var p awscloudwatch.MetricOptions
	if props != nil {
		p = *props
	}
	if p.Statistic == nil {
		p.Statistic = jsii.String(statistic)
	}
	return &p
}
