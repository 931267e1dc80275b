package consumer

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/family"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// The construct computes, then checks, then builds (DESIGN.md, "Compute,
// check, build"):
//
//   - compute (this file) applies every default to the props, once, into
//     settings: the handler's runtime settings and the construct's own (the
//     queue's visibility timeout and redrive count, read from a given queue;
//     the removal policy, log retention and level; the props of each queue
//     it creates). It checks no rule: it reports only the props it cannot
//     read (tokens, fractions where whole numbers are needed).
//   - problems (validate.go, with byo.go and fifo.go) are pure rules over
//     the props and the settings: they return problems and never write.
//   - the builders (queues.go, function.go, alarms.go, dashboard.go) read
//     the settings alone, never the props.

// Defaults of the props that are the construct's own, as documented on
// IdempotentConsumerProps; the runtime settings' are package contract's.
const (
	defaultMaxReceiveCount  = contract.DefaultMaxReceiveCount
	defaultOldestMessageAge = 15 * time.Minute
	visibilityTimeoutFactor = 6
	maxVisibilityTimeout    = 12 * time.Hour
	// sqsDefaultVisibility is the visibility timeout of a queue that sets
	// none.
	sqsDefaultVisibility = 30 * time.Second
	// maxReceiveBatch is the most messages one ReceiveMessage returns: 10,
	// the one home of the limit that the SQS event source's batch without
	// a batching window (maxBatchWithoutWindow), a FIFO queue's batch
	// (maxFIFOBatch) and the default BatchSize follow.
	maxReceiveBatch = 10
	// maxBatchWithoutWindow is the largest batch the SQS event source takes
	// without a batching window.
	maxBatchWithoutWindow = maxReceiveBatch
	// defaultBatchSize is the event source's default batch size.
	defaultBatchSize = maxReceiveBatch
	// maxBatchSize is the largest batch the SQS event source takes with a
	// batching window.
	maxBatchSize = 10_000
)

// dlqRetention is how long the construct's dead-letter queues keep a
// message by default: the SQS maximum, time for a human to look.
var dlqRetention = awscdk.Duration_Days(jsii.Number(limits.MaxQueueRetention.Hours() / 24))

// settings are the props with their defaults applied, computed once by
// compute: everything the builders build from, and the rules check.
type settings struct {
	// Settings are the shared props resolved by the family's core: the
	// runtime settings (whose MaxReceiveCount is maxReceiveCount, 0 when
	// unknown), the table, the function.
	*family.Settings

	// The topic: given, or nil for one the construct creates (a FIFO topic
	// with fifo.topic, with contentBasedDeduplication).
	topic                     awssns.ITopic
	fifo                      fifo
	contentBasedDeduplication *bool
	filterPolicy              *map[string]awssns.SubscriptionFilter
	rawDelivery               bool
	// source is the consumer's one source (source.go): the topic above,
	// an EventBridge rule, an S3 bucket, or direct producers.
	source source

	// The queues: a given queue (nil: the construct creates one with
	// queueProps), the given dead-letter queue or the given queue's own
	// (nil: the construct creates one with dlqProps), and the props of the
	// subscription's dead-letter queue. queueProps lacks only the
	// dead-letter queue, a construct the builder creates.
	queue, dlq                     awssqs.IQueue
	queueProps, dlqProps, subProps *awssqs.QueueProps
	// eventDLQProps are the props of the EventBridge target's dead-letter
	// queue (a standard queue, even for a FIFO queue), with an EventBridge
	// source only; subProps are used with a topic only.
	eventDLQProps *awssqs.QueueProps
	// keyImported: EncryptionKey is given and not a key of the app, so
	// its policy cannot be changed (sourceWarnings).
	keyImported bool
	// visibilityTimeout is the queue's (the default 6 × Timeout, the
	// declared VisibilityTimeout, or what a given queue of the app says),
	// declaredVisibilityTimeout the VisibilityTimeout prop (0 when nil).
	visibilityTimeout, declaredVisibilityTimeout time.Duration
	// maxReceiveCount is the queue's redrive count (0 when unknown: an
	// imported queue without MaxReceiveCount), declaredMaxReceiveCount the
	// MaxReceiveCount prop or its default.
	maxReceiveCount, declaredMaxReceiveCount float64

	// The event source.
	batchSize      int
	batchingWindow awscdk.Duration // nil: none
	maxConcurrency *float64

	// Alarms.
	oldestMessageAge time.Duration

	// What the rules of refusals.go judge, read once from the props and
	// the resources they name; the builders do not use them.
	//
	// topicMaxBytes is the MaximumMessageSize of a given topic of the app
	// (SNS's default when it sets none), when topicMaxKnown.
	topicMaxBytes float64
	topicMaxKnown bool
	// queueRetention and dlqRetention are the retention periods of the
	// queue and of its dead-letter queue (given, or the construct's).
	queueRetention, dlqRetention retention
	// queueSize is the given Queue's MaximumMessageSize (the zero value
	// without a given Queue, or for an imported one).
	queueSize queueSize
}

// compute applies the defaults to the props of the consumer with the
// construct id name, without checking any rule: the settings as the
// construct would build them, and the props it could not read (tokens,
// fractions where whole numbers are needed).
func (p *IdempotentConsumerProps) compute(name string) (*settings, []string) {
	var rd propReader
	s := &settings{fifo: p.fifoKind()}
	s.rawDelivery = p.RawMessageDelivery != nil && *p.RawMessageDelivery
	s.source = p.computeSource(&rd)
	p.computeRuntime(name, s, &rd)

	s.topic = p.Topic
	s.contentBasedDeduplication = p.ContentBasedDeduplication
	s.filterPolicy = p.FilterPolicy
	p.computeQueues(s, &rd)
	if isInt(s.maxReceiveCount) && s.maxReceiveCount > 0 {
		// The queue's redrive count, to the handler (0, left out: unknown).
		s.Runtime.MaxReceiveCount = int(s.maxReceiveCount)
	}
	s.batchingWindow = p.MaxBatchingWindow
	s.maxConcurrency = p.MaxConcurrency
	s.oldestMessageAge = rd.Duration("OldestMessageAlarmThreshold", p.OldestMessageAlarmThreshold, defaultOldestMessageAge)
	p.computeReadings(s)
	return s, rd.Problems
}

// computeReadings reads, from the props and the resources they name, what
// the rules of refusals.go judge: the topic's largest message, the queues'
// retention periods and a given queue's size. What the construct cannot
// read at synth (an imported queue) is read as unknown, which the rules
// turn into a warning.
func (p *IdempotentConsumerProps) computeReadings(s *settings) {
	if p.Topic != nil {
		s.topicMaxBytes, s.topicMaxKnown = topicMaxMessageBytes(p.Topic)
	}
	s.queueRetention, s.dlqRetention = p.queueRetentions()
	if p.Queue != nil {
		s.queueSize = sizeOf(p.Queue)
	}
}

// computeRuntime resolves the shared props by the family's core, with the
// handler's runtime settings the consumer's own props set (runtime.go:
// every setting whose prop is its own, by one code path), and the settings
// the construct sets itself (explicitSettings).
func (p *IdempotentConsumerProps) computeRuntime(name string, s *settings, rd *propReader) {
	s.batchSize = rd.Count("BatchSize", p.BatchSize, defaultBatchSize)
	s.Settings = family.Resolve(familyKind, name, &p.Props, func(f contract.Field) (any, bool) { return p.runtimeValue(f, s, rd) })
	s.Runtime.Delivery = s.delivery()
	s.Runtime.FIFO = s.fifo.queue
}

// computeQueues resolves the queues: the given ones, the props of those the
// construct creates, and the queue's visibility timeout and redrive count,
// read from a given queue of the app (an imported queue says nothing: its
// declarations stand).
func (p *IdempotentConsumerProps) computeQueues(s *settings, rd *propReader) {
	s.declaredVisibilityTimeout = rd.Duration("VisibilityTimeout", p.VisibilityTimeout, 0)
	s.declaredMaxReceiveCount = family.Num(p.MaxReceiveCount, defaultMaxReceiveCount)
	s.queue, s.dlq = p.Queue, p.DeadLetterQueue
	s.visibilityTimeout, s.maxReceiveCount = s.declaredVisibilityTimeout, s.declaredMaxReceiveCount
	key := p.EncryptionKey
	if key != nil {
		_, ofApp := key.Node().DefaultChild().(awskms.CfnKey)
		s.keyImported = !ofApp
	}
	switch q, ok := p.Queue.(awssqs.Queue); {
	case p.Queue == nil:
		if p.VisibilityTimeout == nil {
			s.visibilityTimeout = visibilityTimeoutFactor * s.Runtime.Timeout
		}
		if s.dlq == nil {
			dlq := queueDefaults(key)
			dlq.RetentionPeriod = dlqRetention
			s.dlqProps = s.fixed(overlay(dlq, p.DeadLetterQueueProps))
		}
		s.queueProps = s.fixed(overlay(queueDefaults(key), p.QueueProps))
		s.queueProps.VisibilityTimeout = awscdk.Duration_Seconds(jsii.Number(s.visibilityTimeout.Seconds()))
	case ok && isDefinedInApp(q):
		if dlq := q.DeadLetterQueue(); dlq != nil {
			s.maxReceiveCount = *dlq.MaxReceiveCount
			if s.dlq == nil {
				s.dlq = dlq.Queue
			}
		}
		if v, token := appQueueVisibility(q); !token {
			s.visibilityTimeout = v
		}
	default: // imported: the declarations stand
		if p.MaxReceiveCount == nil {
			s.maxReceiveCount = 0 // unknown: the alarm says "MaxReceiveCount times"
		}
	}
	sub := queueDefaults(key)
	sub.RetentionPeriod = dlqRetention
	s.subProps = s.fixed(sub)
	if s.source.kind == sourceEventBus {
		if s.queueProps != nil && s.fifo.queue {
			// EventBridge sends a FIFO queue no deduplication id: the
			// queue derives one from the whole event, id included, which
			// absorbs EventBridge's own redelivery of one event and never
			// a producer's retry (a new id).
			s.queueProps.ContentBasedDeduplication = jsii.Bool(true)
		}
		// EventBridge's dead-letter queue is a standard queue, even for a
		// FIFO target (eb-rule-dlq).
		edlq := queueDefaults(key)
		edlq.RetentionPeriod = dlqRetention
		edlq.MaxMessageSizeBytes = jsii.Number(contract.MaxQueueBodyBytes)
		s.eventDLQProps = edlq
	}
}

// appQueueVisibility is the visibility timeout a queue of the app sets
// (SQS's default when it sets none), or token when it is a token.
func appQueueVisibility(q awssqs.Queue) (v time.Duration, token bool) {
	switch v := q.Node().DefaultChild().(awssqs.CfnQueue).VisibilityTimeout(); {
	case v == nil:
		return sqsDefaultVisibility, false
	case *awscdk.Token_IsUnresolved(v):
		return 0, true
	default:
		return time.Duration(*v) * time.Second, false
	}
}

// queueDefaults are the construct's secure defaults for a queue it creates:
// SSE-SQS or the customer's key, TLS only. The user's QueueProps (or
// DeadLetterQueueProps) are laid over them, field by field.
func queueDefaults(key awskms.IKey) *awssqs.QueueProps {
	p := &awssqs.QueueProps{EnforceSSL: jsii.Bool(true)}
	if key != nil {
		p.Encryption = awssqs.QueueEncryption_KMS
		p.EncryptionMasterKey = key
	} else {
		p.Encryption = awssqs.QueueEncryption_SQS_MANAGED
	}
	return p
}

// fixed sets what the construct decides for every queue it creates, after
// the user's overrides (which the rules keep from contradicting it): FIFO
// under a FIFO topic, and the largest SQS body, so that no queue refuses
// what the topic delivers (set even though it is SQS's default now: a queue
// created before keeps 256 KiB unless the template says otherwise).
//
// Under a FIFO topic all three queues are FIFO (SNS delivers a FIFO topic's
// subscription, and its dead letters, only into FIFO queues, and a FIFO
// queue's dead-letter queue must be FIFO), without content-based
// deduplication: SNS hands each message's deduplication id on to the queue,
// and a hash of the body would hash the SNS envelope, which is new on every
// delivery. CloudFormation names them with ".fifo".
func (s *settings) fixed(p *awssqs.QueueProps) *awssqs.QueueProps {
	if s.fifo.queue {
		p.Fifo = jsii.Bool(true)
	}
	p.MaxMessageSizeBytes = jsii.Number(contract.MaxQueueBodyBytes)
	return p
}

// propReader reads props that must be concrete numbers and durations
// (the family's reader).
type propReader = family.Reader

// concreteDuration converts a duration that is not a token.
func concreteDuration(d awscdk.Duration) (time.Duration, bool) { return family.Concrete(d) }

func formatNumber(f float64) string { return family.FormatNumber(f) }

func isInt(f float64) bool { return family.IsInt(f) }
