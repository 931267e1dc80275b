package consumer

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
)

// IdempotentConsumerProps configures an IdempotentConsumer.
//
// Only Entry is required. Every other field documents its default; a nil
// field means that default. Durations must be concrete values (not tokens),
// because the construct checks them and hands them to the handler as Go
// duration strings.
type IdempotentConsumerProps struct {
	// Entry is the directory of the handler's Go main package, for example
	// "cmd/charge": absolute, or relative to EntryRoot, by default the root
	// of the Go module that holds the working directory (the CDK app's
	// module, under `cdk synth` at its root as under `go test` in one of its
	// packages). It must be a main package (the construct refuses any other
	// at synth).
	//
	// The construct builds it at synth time into a `bootstrap` for Linux on
	// the function's Architecture (GOARCH arm64, or amd64 for x86_64) with
	// `CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -buildvcs=false
	// -ldflags "-s -w"`, so the same source gives the same asset hash (one
	// per architecture). Required.
	Entry *string

	// EntryRoot is the directory a relative Entry is resolved against.
	//
	// Default: the root of the Go module that holds the working directory.
	EntryRoot *string

	// Topic is the SNS topic the consumer subscribes to.
	//
	// Default: unless another source is declared (EventPattern, Bucket,
	// DirectProducers), a new topic encrypted with the AWS-managed key
	// alias/aws/sns (never with EncryptionKey, whose policy names the
	// topic), whose policy denies publishing without TLS. AWS services such as CloudWatch or
	// EventBridge cannot publish to a topic under alias/aws/sns: give a
	// topic encrypted with a customer-managed key for them.
	Topic awssns.ITopic

	// FilterPolicy selects which messages of the topic the subscription
	// delivers, by message attributes.
	//
	// Default: no filter, every message of the topic is delivered.
	FilterPolicy *map[string]awssns.SubscriptionFilter

	// RawMessageDelivery delivers the published message as the SQS body
	// instead of wrapping it in the SNS JSON envelope. The handler is told
	// which form to expect.
	//
	// Default: false (the SNS envelope is delivered).
	RawMessageDelivery *bool

	// FifoTopic says the topic is an SNS FIFO topic, whose messages carry a
	// message group id and are delivered in order within their group.
	//
	// With Topic nil, true makes the construct create a FIFO topic (CDK
	// names it after the construct's path, ending in ".fifo" as SNS
	// requires). A Topic defined in the app, or imported from an ARN that is
	// not a token, says itself whether it is FIFO (awssns.ITopic.Fifo()):
	// leave FifoTopic nil, or give the same value. A Topic imported from an
	// ARN that is a token (a parameter, Fn::ImportValue) cannot be told at
	// synth, and CDK calls it standard: set FifoTopic to true if it is a
	// FIFO topic; left nil, the consumer gets a standard queue and the
	// construct adds a synth warning that says so.
	//
	// A FIFO topic gets a FIFO queue, a FIFO dead-letter queue and a FIFO
	// subscription dead-letter queue (unless StandardQueue), and the
	// handler is told it is FIFO; the event source then takes at most 10
	// records per batch and no MaxBatchingWindow (MaxConcurrency is allowed;
	// a FIFO queue's concurrency is also bounded by its number of active
	// message groups). SQS cannot change a queue's type: switching a running
	// consumer between FIFO and standard replaces its queues, and the
	// messages still in them are deleted with them; drain them first.
	//
	// Default: nil, the kind of the given Topic; a standard topic when the
	// construct creates it.
	FifoTopic *bool

	// ContentBasedDeduplication makes the FIFO topic the construct creates
	// derive each message's deduplication id from a SHA-256 hash of the
	// message, so that publishers may leave MessageDeduplicationId out; SNS
	// hands the id on to the FIFO queue, which drops a repeat within its
	// five-minute deduplication interval. It is a topic setting only, and
	// needs FifoTopic with Topic nil (for a given Topic, set it on that
	// topic). The construct never sets content-based deduplication on a
	// queue: there SQS would hash the SQS body, which is the SNS envelope,
	// whose MessageId, Timestamp and Signature are new on every delivery, so
	// it would deduplicate nothing.
	//
	// Default: false, publishers give each message a MessageDeduplicationId
	// (SNS refuses a Publish to a FIFO topic without one).
	ContentBasedDeduplication *bool

	// StandardQueue subscribes standard queues to a FIFO topic instead of
	// FIFO ones, and says what that gives up. SNS delivers to a standard
	// queue without the message group id, so the messages of one group are
	// consumed concurrently and in any order, and the topic's deduplication
	// ends at the topic: a standard queue may deliver a message twice (the
	// idempotency guard still absorbs such duplicates; the order is what is
	// lost). In exchange the event source may take a MaxBatchingWindow and
	// up to 10,000 records per batch. A standard topic always gets standard
	// queues: there it changes nothing.
	//
	// Default: false, a FIFO topic gets FIFO queues.
	StandardQueue *bool

	// The consumer has one source, which the handler is told of (the
	// contract's MESSAGE_DELIVERY): an SNS topic (Topic, or the topic the
	// construct creates when no other source is declared), an EventBridge
	// rule (EventPattern), an S3 bucket's notifications (Bucket), or the
	// producers that send to the queue themselves (DirectProducers). The
	// props of one source given with another's are refused: give each
	// source a consumer of its own. README.md, "Sources", says which key
	// each source's trap makes right.

	// EventPattern makes an EventBridge rule the consumer's source: a rule
	// on EventBus with this pattern, whose target is the queue (the whole
	// event as the body; the handler hands the business function its
	// detail). The target has a dead-letter queue of its own (a standard
	// queue, EventDeadLetterQueue(), which EventBridge requires even for a
	// FIFO target) and the retry policy EventRetryAttempts and EventMaxAge;
	// the queue's policy lets events.amazonaws.com send from this rule alone
	// (aws:SourceArn), the target dead-letter queue's too, and a
	// customer-managed EncryptionKey lets EventBridge use it from this
	// account's rules. The rule's FailedInvocations, InvocationsSentToDlq,
	// InvocationsFailedToBeSentToDlq and its dead-letter queue's depth are
	// alarmed.
	//
	// EventBridge gives every PutEvents entry a new id: a producer's retry
	// is a new event with the same detail, so the key must come from the
	// detail (the handler's default), never from id. For a FIFO queue
	// (QueueProps.Fifo, or a given FIFO Queue) the rule needs
	// EventMessageGroupId, and the construct sets content-based
	// deduplication on the queue: SQS then hashes the whole event, id
	// included, so it absorbs EventBridge's own redelivery of one event
	// within five minutes, never a producer's retry (the idempotency
	// record does).
	//
	// Default: nil, not an EventBridge source.
	EventPattern *awsevents.EventPattern

	// EventBus is the bus the rule of EventPattern listens on: a bus of the
	// app, or one imported (awsevents.EventBus_FromEventBusArn). Only with
	// EventPattern.
	//
	// Default: the account's default event bus.
	EventBus awsevents.IEventBus

	// EventRetryAttempts is how many times EventBridge retries delivering
	// an event to the queue before it sends it to the target dead-letter
	// queue (0 to 185). Only with EventPattern.
	//
	// Default: 185, EventBridge's own.
	EventRetryAttempts *float64

	// EventMaxAge is how long EventBridge keeps retrying an event before it
	// sends it to the target dead-letter queue (1 minute to 24 hours). Only
	// with EventPattern.
	//
	// Default: 24 hours, EventBridge's own.
	EventMaxAge awscdk.Duration

	// EventMessageGroupId is the message group of each event on a FIFO
	// queue: a JSON path into the event, in EventBridge's dynamic path
	// syntax ("$.detail.customerId": '$', then dot-separated names of
	// letters, digits, '_', '-' or '/', each optionally with array indices
	// such as "[0]"), or a fixed group name (one group: every event in
	// order). Required with a FIFO queue, refused with a standard one. Only
	// with EventPattern.
	//
	// Default: none (a standard queue).
	EventMessageGroupId *string

	// Bucket makes an S3 bucket's event notifications the consumer's source:
	// a notification to the queue for each of BucketEvents and
	// BucketFilters, through CDK's Custom::S3BucketNotifications resource
	// (a bucket of the app, or an imported one, which keeps its other
	// notifications). The queue's policy lets s3.amazonaws.com send from
	// this bucket (aws:SourceArn) of this account (aws:SourceAccount), and
	// a customer-managed EncryptionKey lets S3 use it. The queue must be
	// standard (S3 cannot notify a FIFO queue), and the bucket in the
	// consumer's Region.
	//
	// One SQS message carries a Records array (one fact per record); S3
	// sends an s3:TestEvent when the notifications are configured; keys
	// arrive URL-encoded. The handler's default key is bucket/key@versionId
	// with versioning, bucket/key@sequencer without it: enable versioning on
	// the bucket for a rewrite of a key to be a fact of its own.
	//
	// Default: nil, not an S3 source.
	Bucket awss3.IBucket

	// BucketEvents are the event types notified. Only with Bucket.
	//
	// Default: awss3.EventType_OBJECT_CREATED (every object created: put,
	// post, copy, completed multipart upload).
	BucketEvents *[]awss3.EventType

	// BucketFilters are the key filters of the notifications: each filter
	// (a prefix, a suffix, or both) is one notification per event type, so
	// that an object matching any of them is notified. S3 refuses two
	// notifications of one event type whose prefixes and suffixes overlap;
	// the construct refuses such filters at synth, among its own and those
	// of the app's other consumers of the bucket. Only with Bucket.
	//
	// Default: none, every key of the bucket.
	BucketFilters *[]*awss3.NotificationKeyFilter

	// DirectProducers makes the producers that send to the queue
	// themselves (SendMessage) the consumer's source: no topic, no rule, no
	// notification. Grant them with GrantSendMessages; another account's
	// producers need the app's own statement in the queue's policy
	// (Queue().AddToResourcePolicy). The body is the business message
	// (raw delivery). A retried SendMessage is a new message with a new id:
	// the key must come from the body; a FIFO queue (QueueProps.Fifo)
	// deduplicates a producer's MessageDeduplicationId for five minutes
	// only.
	//
	// Default: false, the queue has another source.
	DirectProducers *bool

	// Queue is an existing queue for the function to consume (bring your
	// own), in place of the one the construct creates; the construct
	// subscribes it to Topic and connects it to the function. It must be of
	// the topic's kind (a FIFO queue under a FIFO topic, unless
	// StandardQueue; a standard queue under a standard topic) and have a
	// dead-letter queue, and its visibility timeout must be at least 6 ×
	// Timeout.
	//
	// A queue defined in the app (awssqs.NewQueue) says all of that itself:
	// the construct reads its visibility timeout (SQS's 30 seconds when it
	// sets none), its dead-letter queue and its maxReceiveCount, and refuses
	// DeadLetterQueue, VisibilityTimeout or MaxReceiveCount props that say
	// otherwise. An imported queue (awssqs.Queue_FromQueueArn) says nothing
	// at synth, so the construct needs its settings as declarations it can
	// check: DeadLetterQueue (its redrive target, for the alarms and the
	// dashboard) and VisibilityTimeout are then required, MaxReceiveCount
	// optional; the construct cannot see whether the deployed queue matches
	// them, nor change an imported queue's policy: it must already let
	// Topic send (sqs:SendMessage from the topic's ARN), and its key, if
	// any, let SNS use it. Those gaps are the price of an imported queue.
	//
	// Its MaximumMessageSize must take the largest body the subscription
	// delivers (the topic's largest message, doubled for the SNS envelope's
	// JSON escaping plus 8 KiB, unless RawMessageDelivery): a queue of the
	// app that sets less is refused, one that sets none gets a warning (a
	// queue created before SQS's default became 1 MiB keeps 256 KiB); its
	// retention must be longer than MaxReceiveCount × its visibility
	// timeout and, for a standard queue, shorter than its dead-letter
	// queue's. An imported queue gets a warning that states these rules.
	//
	// QueueProps and DeadLetterQueueProps configure queues the construct
	// creates, and are refused with Queue.
	//
	// Default: a new queue (see QueueProps), with a new dead-letter queue.
	Queue awssqs.IQueue

	// DeadLetterQueue is an existing queue to receive the messages the
	// function failed to process MaxReceiveCount times: the redrive target
	// of the queue the construct creates, or the declared redrive target of
	// an imported Queue. It must be of the queue's kind (FIFO or standard).
	// The construct marks it for cdk-nag as a dead-letter queue (when the
	// app defines it), and alarms on its depth.
	//
	// For a standard queue its retention must be longer than the queue's
	// (see DeadLetterQueueProps); an imported one cannot be read at synth,
	// and the construct warns.
	//
	// Default: the given Queue's own dead-letter queue, or a new one (see
	// DeadLetterQueueProps).
	DeadLetterQueue awssqs.IQueue

	// QueueProps override the defaults of the queue the construct creates,
	// field by field: a field set here wins, a field left nil keeps the
	// construct's default. The defaults are SSE-SQS (or EncryptionKey),
	// TLS only (EnforceSSL), SQS's retention of 4 days; set RetentionPeriod,
	// Encryption and EncryptionMasterKey (a KMS key), QueueName,
	// DeliveryDelay, ReceiveMessageWaitTime and the others as aws-cdk-lib
	// documents them. Turning a secure default off (Encryption
	// UNENCRYPTED, EnforceSSL false) is an explicit choice the construct
	// leaves to you. RetentionPeriod must be longer than MaxReceiveCount ×
	// VisibilityTimeout (else a poison message expires before it reaches
	// the dead-letter queue), and shorter than the dead-letter queue's (SQS
	// keeps a standard queue's enqueue time when it moves a message);
	// a Window shorter than it is warned about (see Window).
	//
	// What the construct must decide itself is refused here, with the prop
	// to use instead: VisibilityTimeout (the prop, checked against Timeout),
	// DeadLetterQueue (the props DeadLetterQueue and MaxReceiveCount),
	// MaxMessageSizeBytes (every queue takes SQS's largest body, so none
	// refuses what the topic delivers; see MaxMessageBytes), Fifo against
	// the topic's kind, an EncryptionMasterKey beside EncryptionKey, and
	// content-based deduplication with the SNS envelope (it would hash the
	// envelope, new on every delivery). Refused with Queue.
	//
	// Default: nil, the construct's defaults.
	QueueProps *awssqs.QueueProps

	// DeadLetterQueueProps override the defaults of the dead-letter queue
	// the construct creates, as QueueProps do the queue's (the defaults are
	// the same, with a retention of 14 days, SQS's longest). For a standard
	// queue its RetentionPeriod must be longer than the queue's: SQS keeps a
	// message's original enqueue time when it moves it to the dead-letter
	// queue (a FIFO queue's move resets it), so a dead-letter queue that
	// keeps messages no longer than the queue deletes old dead letters on
	// arrival. A dead-letter queue has no
	// DeadLetterQueue of its own. Refused with Queue or DeadLetterQueue.
	// The subscription's dead-letter queue keeps the construct's defaults.
	//
	// Default: nil, the construct's defaults.
	DeadLetterQueueProps *awssqs.QueueProps

	// EncryptionKey is a customer-managed KMS key for the queue, the
	// dead-letter queue and the subscription dead-letter queue that the
	// construct creates (with a given Queue, only for the queues it still
	// creates). The key
	// policy is extended so that SNS can deliver into the queues (from Topic
	// only); the function is allowed to decrypt what it receives.
	// An imported key (awskms.Key_FromKeyArn) cannot be changed by CDK: its
	// policy must already let sns.amazonaws.com use kms:GenerateDataKey* and
	// kms:Decrypt.
	//
	// EventBridge and S3 cannot send to a queue under the AWS-managed key
	// alias/aws/sqs (its key policy cannot be changed to let them): with
	// EventPattern or Bucket, that key (as EncryptionKey, or
	// QueueProps.Encryption KMS_MANAGED, or a given queue of the app under
	// it) is refused; SSE-SQS, the default, or a customer-managed key work.
	//
	// Default: SQS-managed encryption (SSE-SQS).
	EncryptionKey awskms.IKey

	// MaxReceiveCount is how many times a message is received before SQS
	// moves it to the dead-letter queue. Every delivery that finds its fact
	// in progress elsewhere, or lands in a batch whose invocation failed,
	// counts as a receive: AWS recommends at least 5 for Lambda event
	// sources. With a given Queue it is the queue's own: a queue of the app
	// says it (a different value here is refused); for an imported queue,
	// it declares the queue's value, for the dead-letter alarm's description
	// and for the handler, which counts the records it lets reach the
	// dead-letter queue unstarted (MetricDeadLetteredUnstarted) only when it
	// knows the value.
	//
	// Default: 5; the given Queue's.
	MaxReceiveCount *float64

	// BackoffBase starts the backoff of failed records: a record whose
	// effect (or the store) failed comes back after its receive n at
	// c/2 + jitter·c/2, c = min(BackoffCap, BackoffBase·2^(n−1)), in whole
	// seconds (capped exponential with equal jitter; the handler calls
	// ChangeMessageVisibility), instead of after VisibilityTimeout; an effect
	// error made with sqsbatch.RetryAfter comes back when it says, within
	// the cap. Bad input, mismatches and expired records go to the
	// dead-letter queue as before; nothing changes on the last receive.
	// The retry horizon (the longest delays after receives 1 to
	// MaxReceiveCount − 1) must be shorter than Window, and, with the
	// visibility timeout of the last receive, than the queue's retention:
	// the construct refuses it otherwise. awscdk.Duration_Seconds(0) turns
	// the backoff off.
	//
	// Default: 10 minutes (with BackoffCap 1h and MaxReceiveCount 5: back
	// after 5–10m, 10–20m, 20–40m and 30–60m, at least 65m in all, so that a
	// one-hour outage is ridden out before the dead-letter queue; 130m at
	// most).
	BackoffBase awscdk.Duration

	// BackoffCap bounds each delay of the backoff: at least BackoffBase, at
	// most 12 hours (SQS's longest visibility timeout).
	//
	// Default: 1 hour.
	BackoffCap awscdk.Duration

	// BackoffFIFOCap bounds each delay of the backoff on a FIFO queue, where
	// a message that is not visible holds its whole message group: the
	// group waits with its failed message.
	//
	// Default: 15 minutes.
	BackoffFIFOCap awscdk.Duration

	// VisibilityTimeout of the queue. It must be at least 6 × Timeout (AWS
	// guidance for Lambda event sources, which leaves room for retries of a
	// throttled batch); the construct refuses less. With a given Queue it
	// is the queue's own: a queue of the app says it (a different value here
	// is refused); for an imported queue it is required, and declares the
	// queue's value so that the construct can check it.
	//
	// Default: 6 × Timeout; the given Queue's.
	VisibilityTimeout awscdk.Duration

	// Table is an existing table to hold the idempotency records
	// (shared-table mode), of the construct's design or of the app's own (a
	// single-table design: its own key names, a sort key, its own TTL
	// attribute; see TablePartitionKey, TableSortKey, TableKeyInSortKey,
	// TableFixedKeyValue and TableTTLAttribute). Its keys must be strings.
	// The construct reads the key schema and the TTL attribute of a table
	// defined in the app, and passes them to the handler; for an imported
	// table, which it cannot read, the props declare them (a partition key
	// "pk", no sort key and TTL on "ttl" when they say nothing). A table
	// without TTL, or an imported one, gets a synth warning. Records are
	// keyed "<Namespace>#<business key>", so the table can also hold
	// business data under other prefixes. A table encrypted with a
	// customer-managed key must be imported with that key
	// (awsdynamodb.Table_FromTableAttributes) so that the function is
	// allowed to use it.
	//
	// Default: a new table owned by the construct: on-demand capacity,
	// string partition key "pk", TTL attribute "ttl", point-in-time recovery
	// on, encrypted with the AWS-managed key.
	Table awsdynamodb.ITable

	// TablePartitionKey is the name of the given Table's partition key
	// attribute (a string). For a table the app defines it is read from the
	// table (a different value here is refused); for an imported table it
	// declares the table's. Only with Table.
	//
	// Default: the table's partition key; "pk" for an imported table.
	TablePartitionKey *string

	// TableSortKey is the name of the given Table's sort key attribute (a
	// string), for a table that has one. Read from a table the app
	// defines, as TablePartitionKey is. The record key stays in the
	// partition key, and the sort key holds TableFixedKeyValue, unless
	// TableKeyInSortKey. Only with Table.
	//
	// Default: the table's sort key; none for an imported table.
	TableSortKey *string

	// TableKeyInSortKey puts the record key "<Namespace>#<business key>" in
	// the sort key, under the partition key value TableFixedKeyValue: the
	// layout of the most used peer library. IAM's dynamodb:LeadingKeys
	// condition sees the partition key only, so the consumer's role is then
	// scoped to its partition value (StringEquals), not to its namespace:
	// consumers that share a partition value can write each other's
	// records (a synth warning says so; DESIGN.md, "A shared table of the
	// app's own design"). Needs a sort key.
	//
	// Default: false, the record key is the partition key's value and the
	// role is scoped to "<Namespace>#*".
	TableKeyInSortKey *bool

	// TableFixedKeyValue is the value of the table's other key on every
	// record of this consumer: the sort key's (the record key in the
	// partition key), or the partition key's (TableKeyInSortKey). Only with
	// a sort key.
	//
	// Default: the Namespace as the sort key's value; "idempotency#" and
	// the Namespace as the partition key's, a partition per consumer.
	TableFixedKeyValue *string

	// TableTTLAttribute is the attribute the given Table's TTL is enabled
	// on (epoch seconds), which the records carry. Read from a table the
	// app defines (a different value here is refused: a table has one TTL
	// attribute, so the records would never be deleted); for an imported
	// table it declares the table's. Only with Table.
	//
	// Default: the table's TTL attribute; "ttl" for an imported table, or
	// one without TTL.
	TableTTLAttribute *string

	// AcceptSingleRegionGuarantee allows a Table replicated to other regions
	// (a global table). DynamoDB settles concurrent writes to a global table
	// by last writer wins, so the conditional write and the fencing of
	// complete and release hold only among deliveries handled in one region:
	// set it only when every delivery of a fact is handled in one region
	// (the consumers of other regions keep other namespaces, or none exist).
	//
	// Default: false, a replicated Table is refused.
	AcceptSingleRegionGuarantee *bool

	// RemovalPolicy applies to the table the construct creates (ignored in
	// shared-table mode).
	//
	// Default: awscdk.RemovalPolicy_RETAIN, the table and its records
	// outlive the stack.
	RemovalPolicy awscdk.RemovalPolicy

	// Namespace prefixes every idempotency key ("<Namespace>#<key>"). It must
	// not be empty nor contain '#', '*', '?' or control characters.
	//
	// Default: the construct id in lower case, without those characters (an
	// id of them alone is refused: set Namespace); required with a
	// given Table, where two consumers with one namespace (in two stacks, say)
	// would suppress each other's facts. Two consumers of one app with one
	// namespace on one table are refused.
	Namespace *string

	// MemorySize of the function in MiB.
	//
	// Default: 256.
	MemorySize *float64

	// Timeout of the function.
	//
	// Default: 30 seconds.
	Timeout awscdk.Duration

	// ReservedConcurrentExecutions reserves (and caps) concurrency for the
	// function. With MaxConcurrency it must be at least MaxConcurrency.
	//
	// Default: none, the function uses the account's unreserved
	// concurrency.
	ReservedConcurrentExecutions *float64

	// LogRetention of the function's log group, which the construct creates
	// and owns (so that the function's role can be limited to it). The log
	// group is retained when the stack is deleted, as CDK does by default.
	//
	// Default: awslogs.RetentionDays_ONE_MONTH.
	LogRetention awslogs.RetentionDays

	// Architecture of the function: awslambda.Architecture_ARM_64() or
	// awslambda.Architecture_X86_64(). The bootstrap is built for it (GOARCH
	// arm64 or amd64); each architecture has its own asset. Others are
	// refused.
	//
	// Default: arm64 (Graviton: cheaper per GB-second).
	Architecture awslambda.Architecture

	// Role is an existing execution role for the function. The construct
	// grants it what the function needs (its log group, the table, the
	// queue, X-Ray, the VPC's network interfaces), as it does its own role;
	// a role imported with Mutable false takes no grant, and must already
	// hold them. The consumer (an awsiam.IGrantable) grants through it.
	//
	// Default: a new role with no managed policy, assumed by Lambda.
	Role awsiam.IRole

	// Vpc attaches the function to a VPC, to reach private resources. The
	// role is allowed to manage the function's network interfaces (the
	// actions of AWSLambdaVPCAccessExecutionRole, on "*": network
	// interfaces have no ARN before they exist). The subnets must reach
	// DynamoDB and SQS (a NAT gateway, or VPC endpoints), or every record
	// fails.
	//
	// Default: none, the function runs outside any VPC.
	Vpc awsec2.IVpc

	// VpcSubnets selects the subnets of Vpc for the function; needs Vpc.
	//
	// Default: the VPC's private subnets (CDK's default).
	VpcSubnets *awsec2.SubnetSelection

	// SecurityGroups for the function in Vpc; needs Vpc.
	//
	// Default: with Vpc, a new security group that allows all outbound
	// traffic and no inbound (CDK's default).
	SecurityGroups *[]awsec2.ISecurityGroup

	// Layers are Lambda layers for the function (extensions, such as a
	// telemetry agent). They must be built for its Architecture: a layer of
	// the app whose compatibleArchitectures leave it out is refused; the
	// architectures of an imported layer cannot be read at synth, and the
	// construct warns.
	//
	// Default: none.
	Layers *[]awslambda.ILayerVersion

	// Tracing mode of the function.
	//
	// Default: awslambda.Tracing_ACTIVE, invocations are sampled and traced
	// with X-Ray. For every mode but awslambda.Tracing_DISABLED the role is
	// allowed xray:PutTraceSegments and xray:PutTelemetryRecords, on "*"
	// since X-Ray has no resource-level permissions.
	Tracing awslambda.Tracing

	// LogLevel is the function's application log level under Lambda's
	// advanced logging controls; its logs are JSON. The handler writes a
	// line per record at INFO (processed, duplicate) or above (WARN: in
	// progress, not started, lease lost; ERROR: failures, bad input,
	// mismatches), so awslambda.ApplicationLogLevel_WARN keeps every line that
	// says why a record is retried or dead-lettered and drops the rest. The
	// metrics line is written at this level, so it is never dropped. A value
	// that is not one of those levels (TRACE, DEBUG, INFO, WARN, ERROR,
	// FATAL) is refused.
	//
	// Default: awslambda.ApplicationLogLevel_INFO.
	LogLevel awslambda.ApplicationLogLevel

	// Environment holds extra environment variables for the function. It
	// must not set a variable of the configuration contract (package
	// lambda/contract, contract.Names): use the matching prop instead.
	//
	// Default: none.
	Environment *map[string]*string

	// Window is the business window: how long a completed fact suppresses
	// duplicates, counted from its completion. At least LeaseMax.
	//
	// The handler judges each record by its age (SQS's SentTimestamp): a
	// message older than Window is not run, since its fact's record may
	// have ended its window, but ends as expired in the dead-letter queue.
	// So a message that waits in a backlog longer than Window is
	// dead-lettered, not run: the construct warns when Window is shorter
	// than the queue's retention period (except for the defaults together,
	// 24 hours and SQS's 4 days). To run any backlog, give a Window of at
	// least the queue's retention; a shorter retention is no fix (SQS
	// would delete those messages, with no dead letter). A redrive from the
	// dead-letter queue sends a new message (new id, new enqueue time),
	// which runs unless its fact is still within its window.
	//
	// Default: 24 hours.
	Window awscdk.Duration

	// TTLAfterWindow is how long after the end of the business window a
	// record becomes eligible for DynamoDB TTL deletion (clean-up only).
	//
	// Default: 24 hours.
	TTLAfterWindow awscdk.Duration

	// LeaseMax caps the lease of an IN_PROGRESS reservation; the lease is
	// otherwise the invocation's deadline. Window must be at least LeaseMax.
	//
	// Default: Timeout.
	LeaseMax awscdk.Duration

	// FinishBudget is the time kept at the end of a lease for the write that
	// completes or releases a reservation: the effect's context ends this
	// long before the invocation's deadline (or the lease). MinRemaining must
	// exceed it.
	//
	// Default: 2 seconds.
	FinishBudget awscdk.Duration

	// CacheSize is how many completed keys each execution environment keeps
	// in memory so that repeats skip the table.
	//
	// Default: 0, no cache.
	CacheSize *float64

	// HashKeys makes the handler store and log a keyed hash
	// (HMAC-SHA-256) of each business key instead of the key, for keys that
	// are personal data (an e-mail address, an account number). The
	// construct generates the secret in AWS Secrets Manager (64 letters and
	// digits, retained with the stack, never rotated) and hands it to the
	// handler through a CloudFormation dynamic reference: the template holds
	// no secret, the function's configuration does, so whoever may call
	// lambda:GetFunctionConfiguration on the function can read it and test
	// guesses against the table: keep that right from the table's and the
	// logs' readers (DESIGN.md, "Hashed keys").
	//
	// It costs reading keys back from the table and the logs; duplicates
	// are found as before and the key the effect passes downstream
	// (Reservation.Key, now the hashed key) is stable across deliveries.
	// Turning it on or off on a running consumer gives every fact a new
	// record key: do it only when no fact of the last business window can
	// be delivered again (see idempotency.Config.KeySecret). A secret
	// changed in Secrets Manager reaches the function only at the next
	// stack update that updates the function: CloudFormation resolves the
	// dynamic reference then, and does not notice the change by itself.
	//
	// Default: false, keys are stored and logged as they are.
	HashKeys *bool

	// PayloadIgnore lists JSON fields (dotted paths such as "meta.sentAt")
	// left out of the payload hash.
	//
	// Default: none, the whole payload is hashed.
	PayloadIgnore *[]*string

	// BatchConcurrency bounds how many records of one batch are processed at
	// once.
	//
	// Default: BatchSize, every record of a batch at once, up to 32
	// (contract.DefaultMaxConcurrency).
	BatchConcurrency *float64

	// MinRemaining is the least time left before the invocation's deadline
	// for a record to be started; records not started are reported failed
	// and redelivered. It must exceed FinishBudget and be less than Timeout.
	//
	// Default: FinishBudget plus 1 second (3 seconds).
	MinRemaining awscdk.Duration

	// MaxMessageBytes is the largest business message the handler accepts,
	// in bytes: the message as published to the topic, without the SNS
	// envelope that may carry it. Larger messages are bad input.
	//
	// The three sizes on the way agree: the topic the construct creates has
	// this MaximumMessageSize, so that SNS refuses a larger message at
	// Publish (above 262144 such a topic takes at most 100 subscriptions, all
	// SQS, Lambda or Firehose); every queue of the construct takes 1 MiB, the
	// largest SQS body, so that no delivery is refused on the way. With the
	// SNS envelope (RawMessageDelivery false) JSON escaping can double a
	// message, so at most 520192 bytes (contract.MaxEnvelopedMessageBytes)
	// always fit an SQS body; with raw delivery, up to 1048576. A given Topic
	// whose MaximumMessageSize the app sets (or leaves at SNS's 262144) must
	// not accept more than this; an imported topic cannot be checked: keep
	// its MaximumMessageSize at most this value.
	//
	// Default: 262144 (256 KiB, what an SNS topic accepts by default).
	MaxMessageBytes *float64

	// MetricsNamespace is the CloudWatch namespace of the handler's
	// embedded-metric-format lines.
	//
	// Default: "IdempotentConsumer".
	MetricsNamespace *string

	// BatchSize is the largest number of records in one invocation (1 to
	// 10, or up to 10000 with a MaxBatchingWindow).
	//
	// Default: 10.
	BatchSize *float64

	// MaxBatchingWindow is how long the event source gathers records before
	// invoking the function.
	//
	// Default: none, the function is invoked as soon as records are
	// available.
	MaxBatchingWindow awscdk.Duration

	// MaxConcurrency caps the concurrent invocations the event source
	// starts (2 to 1000).
	//
	// Default: none, the event source scales up to the account limits.
	MaxConcurrency *float64

	// OldestMessageAlarmThreshold is the age of the oldest message in the
	// queue above which the backlog alarm fires.
	//
	// Default: 15 minutes.
	OldestMessageAlarmThreshold awscdk.Duration

	// AlarmAction is added to every alarm of the construct (for example an
	// awscloudwatchactions.SnsAction).
	//
	// Default: none, the alarms only change state.
	AlarmAction awscloudwatch.IAlarmAction

	// Dashboard creates a CloudWatch dashboard for the consumer
	// (IdempotentConsumer.Widgets): effects run against duplicates absorbed,
	// the outcomes retried or dead-lettered, the dead-letter queues' depth,
	// the oldest message's age, errors and throttles, durations and the
	// alarms. CloudFormation names it.
	//
	// Default: false, no dashboard (Widgets() still gives its widgets, for
	// a dashboard of the app's own).
	Dashboard *bool

	// TransactionalTables are the tables a transactional effect
	// (sqsbatch.StartTx, sqsbatch.FromEnvTx) writes in the same TransactWriteItems
	// as its idempotency record. Each is granted as GrantTransactionalWrites
	// grants it (PutItem, UpdateItem, DeleteItem and ConditionCheckItem, and
	// its customer-managed key), the consumer's own shared Table too: the
	// records' grant covers only the items of Namespace
	// (dynamodb:LeadingKeys), and the effect writes the table's other items;
	// on a table that is an idempotency table of the app, the effect's grant
	// excludes the records of every other namespace claimed on it in the
	// app (so the function may write the business items and its own
	// records, never another consumer's). Their names reach the handler
	// (IDEMPOTENCY_TX_TABLES), which refuses, before any request, a
	// transactional write to a table not declared. A table can also be
	// declared after the consumer is created, with
	// GrantTransactionalWrites(table, consumer).
	//
	// A handler whose bootstrap links a transactional effect
	// (sqsbatch.NewTx, which StartTx and NewTx call) with no table declared
	// is refused at synth: in AWS every one of its writes would be denied.
	// The construct sees it in the bootstrap's function table; a handler
	// that calls idempotency.Guard.RunTx itself is not seen, and must
	// declare its tables all the same.
	//
	// Default: none; a transactional handler is refused without them.
	TransactionalTables *[]awsdynamodb.ITable
}
