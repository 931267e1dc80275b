package consumer

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
)

// IdempotentConsumerProps configures an IdempotentConsumer.
//
// Only Entry (in the embedded core.Props) is required. Every other field documents its default; a nil
// field means that default. Durations must be concrete values (not tokens),
// because the construct checks them and hands them to the handler as Go
// duration strings.
type IdempotentConsumerProps struct {
	// Props are the settings every construct of the family shares: Entry
	// (its main calls sqsbatch.Start or StartTx, eventbridge.Start or s3event.Start),
	// the table and its design, Namespace, Window, the function, its logs
	// and alarms (see core.Props).
	core.Props

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
	// source a consumer of its own. docs/queues.md says which key
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
	// its receive's c, so that the retry horizon holds. Bad input,
	// mismatches and expired records go to the dead-letter queue as before;
	// nothing changes on the last receive.
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

	// PayloadIgnore lists JSON fields (dotted paths such as "meta.sentAt")
	// left out of the payload hash.
	//
	// Default: none, the whole payload is hashed.
	PayloadIgnore *[]*string

	// BatchConcurrency bounds how many records of one batch are processed at
	// once.
	//
	// Default: BatchSize, every record of a batch at once, up to 32.
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
	// message, so at most 520192 bytes ((1 MiB − 8 KiB) / 2) always fit an SQS body; with raw delivery, up to 1048576. A given Topic
	// whose MaximumMessageSize the app sets (or leaves at SNS's 262144) must
	// not accept more than this; an imported topic cannot be checked: keep
	// its MaximumMessageSize at most this value.
	//
	// Default: 262144 (256 KiB, what an SNS topic accepts by default).
	MaxMessageBytes *float64

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
}
