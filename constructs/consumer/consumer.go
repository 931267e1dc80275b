// Package consumer provides IdempotentConsumer, an AWS CDK construct for an
// idempotent SNS → SQS → Lambda consumer written in Go.
//
// One construct provisions the subscription of a queue to a topic (with a
// dead-letter queue for what SNS cannot deliver), the queue and its
// dead-letter queue with redrive, the DynamoDB table of idempotency records
// (or a namespace in an existing table), the function built from the
// handler's Go main package for provided.al2023 on arm64 (or x86_64), its own
// least-privilege role and log group, the SQS event source with partial
// batch responses, and alarms. The handler is configured only through the
// runtime contract of package internal/contract.
//
// The queue has one source: the SNS topic (given, or created when no other
// source is declared), an EventBridge rule (EventPattern, with the rule
// target's own dead-letter queue and retry policy), an S3 bucket's
// notifications (Bucket), or producers that send to it (DirectProducers).
// The handler is told which (the contract's MESSAGE_DELIVERY).
//
// Bring your own: a topic, a queue with its dead-letter queue, a table, a
// role, a VPC; or override the defaults of the queues the construct creates.
// What cannot be combined is refused at synth (DESIGN.md, "What the
// construct refuses").
//
// The construct is secure by default: the topic, the queues and the table
// are encrypted, the topic and the queues refuse requests without TLS, and
// cdk-nag's AwsSolutions and Serverless packs find nothing that is not
// suppressed with its reason.
package consumer

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/function"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// IdempotentConsumer is an idempotent SNS → SQS → Lambda consumer: a queue
// subscribed to a topic, a Go handler consuming it in batches, and a
// DynamoDB table of idempotency records. Create one with
// NewIdempotentConsumer.
//
// It is an awsiam.IGrantable: its principal is the function's role, so that
// aws-cdk-lib's grants work on it (bucket.GrantRead(consumer)).
type IdempotentConsumer interface {
	constructs.Construct
	awsiam.IGrantable

	// Topic is the topic the queue is subscribed to (given or created);
	// nil for another source.
	Topic() awssns.ITopic
	// Rule is the EventBridge rule whose target is the queue (EventPattern);
	// nil for another source.
	Rule() awsevents.Rule
	// EventDeadLetterQueue receives the events the rule could not deliver
	// into the queue (EventPattern); nil for another source.
	EventDeadLetterQueue() awssqs.Queue
	// Bucket is the bucket whose notifications the queue receives
	// (Bucket); nil for another source.
	Bucket() awss3.IBucket
	// Queue is the queue the function consumes (given or created).
	Queue() awssqs.IQueue
	// DeadLetterQueue receives the messages the function failed to process
	// MaxReceiveCount times (given, the given Queue's, or created).
	DeadLetterQueue() awssqs.IQueue
	// SubscriptionDeadLetterQueue receives the messages SNS could not
	// deliver into Queue; nil for a source other than a topic.
	SubscriptionDeadLetterQueue() awssqs.Queue
	// Table holds the idempotency records (given or created).
	Table() awsdynamodb.ITable
	// Namespace is the key prefix of this consumer's records in Table.
	Namespace() *string
	// Function is the handler.
	Function() awslambda.Function
	// Role is the function's execution role (given or created).
	Role() awsiam.IRole
	// LogGroup is the function's log group.
	LogGroup() awslogs.LogGroup
	// Alarms are the construct's alarms.
	Alarms() Alarms
	// Dashboard is the consumer's dashboard with Dashboard; nil otherwise.
	Dashboard() awscloudwatch.Dashboard
	// Widgets are the widgets of the consumer's dashboard, row by row: its
	// outcomes (effects run against duplicates absorbed, and what is
	// retried or dead-lettered), the dead-letter queues' depth, the oldest
	// message's age, errors and throttles, durations and the alarms. Put
	// them on a dashboard of your own (Dashboard.AddWidgets(row...)) to see
	// several consumers on one.
	Widgets() [][]awscloudwatch.IWidget
	// KeySecret is the secret under which the handler hashes keys, when
	// HashKeys is on; nil otherwise.
	KeySecret() awssecretsmanager.ISecret

	// GrantPublish lets grantee publish to Topic (and, for a given topic
	// encrypted with a customer-managed key, use that key). It panics for a
	// consumer whose source is not a topic.
	GrantPublish(grantee awsiam.IGrantable) awsiam.Grant
	// GrantSendMessages lets grantee send to Queue (sqs:SendMessage,
	// sqs:GetQueueAttributes, sqs:GetQueueUrl, and the use of a
	// customer-managed key): the producers of a consumer with
	// DirectProducers. A producer of another account needs a statement of
	// the app in the queue's policy (Queue().AddToResourcePolicy) and, for
	// a customer-managed key, in the key's.
	GrantSendMessages(grantee awsiam.IGrantable) awsiam.Grant
	// GrantPutEvents lets grantee put events on the rule's bus
	// (events:PutEvents; EventPattern). It panics for a consumer whose
	// source is not an EventBridge rule.
	GrantPutEvents(grantee awsiam.IGrantable) awsiam.Grant

	// MetricOutcome is the number of records that ended with outcome (sum),
	// one of the handler's Embedded Metric Format counts (Processed,
	// Duplicate, InProgress, Mismatch, BadInput, Failed, LeaseLost,
	// NotStarted, Expired), in MetricsNamespace with the dimensions Consumer (the
	// consumer's construct path) and Region (the stack's). Duplicate is the number of deliveries
	// absorbed: their effect did not run again. It panics for a value that
	// is not an outcome.
	MetricOutcome(outcome outcome.Outcome, props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricDeadLetteredUnstarted is the number of records the handler did
	// not start on their message's last receive (sum; the handler's
	// DeadLetteredUnstarted, outcome.MetricDeadLetteredUnstarted, a count
	// beside the outcomes): SQS moves them to the dead-letter queue without
	// their effect ever having run. On a FIFO queue these are the messages
	// behind a failing message of their group. The handler counts them only
	// when it knows the queue's maxReceiveCount (always, but for an imported
	// queue given without MaxReceiveCount).
	MetricDeadLetteredUnstarted(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricBatchDuration is the time the handler took over a batch (the
	// handler's BatchDuration, milliseconds, maximum).
	MetricBatchDuration(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricDeadLetterMessages is the number of messages visible in the
	// dead-letter queue (maximum).
	MetricDeadLetterMessages(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricSubscriptionDeadLetterMessages is the number of messages visible
	// in the subscription dead-letter queue (maximum); nil for a source
	// other than a topic.
	MetricSubscriptionDeadLetterMessages(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricEventFailedInvocations is the rule's FailedInvocations: events
	// it failed to deliver for good (sum; nil for another source than an
	// EventBridge rule).
	MetricEventFailedInvocations(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricEventsSentToDeadLetterQueue is the rule's InvocationsSentToDlq
	// (sum; nil for another source).
	MetricEventsSentToDeadLetterQueue(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricEventsFailedToBeSentToDeadLetterQueue is the rule's
	// InvocationsFailedToBeSentToDlq: events lost (sum; nil for another
	// source).
	MetricEventsFailedToBeSentToDeadLetterQueue(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricEventDeadLetterMessages is the number of messages visible in the
	// rule target's dead-letter queue (maximum; nil for another source).
	MetricEventDeadLetterMessages(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricOldestMessageAge is the age of the oldest message in the queue
	// (maximum, seconds).
	MetricOldestMessageAge(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricErrors is the number of failed invocations of the function
	// (sum). Records reported in batchItemFailures are not errors.
	MetricErrors(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricThrottles is the number of throttled invocations (sum).
	MetricThrottles(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricDuration is the function's invocation duration (Lambda's
	// Duration, milliseconds, p99).
	MetricDuration(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
}

type idempotentConsumer struct {
	constructs.Construct
	topic    awssns.ITopic
	ownTopic bool
	// The other sources' resources (nil for a topic): the rule, its
	// target's dead-letter queue and its bus's name for the metrics (nil:
	// the default bus), the bucket.
	rule         awsevents.Rule
	eventDLQ     awssqs.Queue
	eventBusName *string
	eventBus     awsevents.IEventBus
	bucket       awss3.IBucket
	queue        awssqs.IQueue
	dlq          awssqs.IQueue
	subDLQ       awssqs.Queue
	table        awsdynamodb.ITable
	namespace    string
	function     awslambda.Function
	role         awsiam.IRole
	logGroup     awslogs.LogGroup
	alarms       Alarms
	dashboard    awscloudwatch.Dashboard
	keySecret    awssecretsmanager.ISecret
	// tx are the tables declared for the transactional effect
	// (family.TxValidation).
	tx *function.TxTables

	// What the metrics, alarms and dashboard need of the settings.
	metricsNamespace string
	oldestMessageAge time.Duration
	timeout          time.Duration
}

// NewIdempotentConsumer creates an idempotent consumer in scope.
//
// It panics, as CDK constructs do, when the props are invalid (the message
// lists every problem with the value given and the fix; the handler's
// runtime settings are checked by the rules the handler applies at init,
// so that what deploys starts), when the
// handler does not build (the message includes the compiler's output), or
// when the handler is not built on this library, or on another version of
// it than the construct (see DESIGN.md, "Versions that cannot drift").
//
// It computes the settings, checks them, bundles the handler, and only then
// builds, from the settings alone (settings.go).
func NewIdempotentConsumer(scope constructs.Construct, id *string, props *IdempotentConsumerProps) IdempotentConsumer {
	if props == nil {
		props = &IdempotentConsumerProps{}
	}
	s, err := props.resolve(id)
	if err != nil {
		panic(err)
	}
	assetDir := s.Bundle()

	c := &idempotentConsumer{
		namespace:        s.Runtime.Namespace,
		metricsNamespace: s.Runtime.MetricsNamespace,
		oldestMessageAge: s.oldestMessageAge,
		timeout:          s.Runtime.Timeout,
	}
	// Overriding (rather than wrapping) the jsii Construct makes c itself
	// the construct, so it can be the scope of other constructs.
	constructs.NewConstruct_Override(c, scope, id)
	// The construct's path is unique in the app: the consumer's name in
	// logs and its metrics dimension, where the id alone could repeat in
	// another stack. It is known once the construct exists.
	s.Runtime.Consumer = *c.Node().Path()
	if s.Table != nil {
		c.table = s.NewTable(c)
	}
	if s.fifo.unknown {
		awscdk.Annotations_Of(c).AddWarningV2(jsii.String("idempotent-consumer:topicKindUnknown"), jsii.String(unknownTopicWarning), nil)
	}

	c.warn(refusalWarnings(s))

	c.addQueues(s)
	switch s.source.kind { // source.go
	case sourceTopic:
		c.addTopic(s)
	case sourceEventBus:
		c.eventBus, c.eventBusName = s.source.eventBus, eventBusName(s.source.eventBus)
		c.addRule(s)
	case sourceBucket:
		c.bucket = s.source.bucket
		c.addNotifications(s)
	}
	c.addTable(s)
	c.addFunction(s, assetDir)
	c.addEventSource(s)
	s.SuppressWildcards(function.Function{Role: c.role}) // last: the role's policy holds every statement
	c.addAlarms(s)
	if c.rule != nil {
		c.addRuleAlarms(s)
	}
	if s.Dashboard {
		c.addDashboard()
	}
	return c
}

func (c *idempotentConsumer) Topic() awssns.ITopic                      { return c.topic }
func (c *idempotentConsumer) Rule() awsevents.Rule                      { return c.rule }
func (c *idempotentConsumer) EventDeadLetterQueue() awssqs.Queue        { return c.eventDLQ }
func (c *idempotentConsumer) Bucket() awss3.IBucket                     { return c.bucket }
func (c *idempotentConsumer) Queue() awssqs.IQueue                      { return c.queue }
func (c *idempotentConsumer) DeadLetterQueue() awssqs.IQueue            { return c.dlq }
func (c *idempotentConsumer) SubscriptionDeadLetterQueue() awssqs.Queue { return c.subDLQ }
func (c *idempotentConsumer) Table() awsdynamodb.ITable                 { return c.table }
func (c *idempotentConsumer) Namespace() *string                        { return jsii.String(c.namespace) }
func (c *idempotentConsumer) Function() awslambda.Function              { return c.function }
func (c *idempotentConsumer) Role() awsiam.IRole                        { return c.role }
func (c *idempotentConsumer) LogGroup() awslogs.LogGroup                { return c.logGroup }
func (c *idempotentConsumer) Alarms() Alarms                            { return c.alarms }
func (c *idempotentConsumer) Dashboard() awscloudwatch.Dashboard        { return c.dashboard }
func (c *idempotentConsumer) KeySecret() awssecretsmanager.ISecret      { return c.keySecret }
