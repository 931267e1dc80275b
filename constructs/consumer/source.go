package consumer

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/family"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// This file holds the consumer's source (DESIGN.md, "Sources"): which one
// the props declare (compute), and the rules of each (check). The builders
// are topic.go's addTopic (queues.go), eventbridge.go and bucket.go.

// sourceKind is the one source of a consumer's queue.
type sourceKind int

const (
	// sourceTopic: an SNS topic, given or created (the default).
	sourceTopic sourceKind = iota
	// sourceEventBus: an EventBridge rule (EventPattern).
	sourceEventBus
	// sourceBucket: an S3 bucket's notifications (Bucket).
	sourceBucket
	// sourceDirect: producers that send to the queue (DirectProducers).
	sourceDirect
)

func (k sourceKind) String() string {
	switch k {
	case sourceEventBus:
		return "an EventBridge rule (EventPattern)"
	case sourceBucket:
		return "an S3 bucket (Bucket)"
	case sourceDirect:
		return "direct producers (DirectProducers)"
	}
	return "an SNS topic"
}

// Defaults of the EventBridge target's retry policy: EventBridge's own
// (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html:
// 185 attempts, 24 hours), and the bounds of the retry policy
// (AWS::Events::Rule RetryPolicy: MaximumRetryAttempts 0 to 185,
// MaximumEventAgeInSeconds 60 to 86400).
const (
	defaultEventRetryAttempts = 185
	maxEventRetryAttempts     = 185
	defaultEventMaxAge        = 24 * time.Hour
	minEventMaxAge            = time.Minute
	maxEventMaxAge            = 24 * time.Hour
	// maxMessageGroupID is the longest SqsParameters.MessageGroupId.
	maxMessageGroupID = 100
)

// awsManagedSQSKey is the alias of the AWS-managed key of SQS, whose key
// policy cannot be changed: EventBridge and S3 cannot send to a queue
// under it.
const awsManagedSQSKey = "alias/aws/sqs"

// source is the consumer's source as compute resolved it.
type source struct {
	kind sourceKind

	// EventBridge: the pattern, the bus (nil: the default bus), the target's
	// retry policy and a FIFO queue's message group id.
	eventPattern   *awsevents.EventPattern
	eventBus       awsevents.IEventBus
	retryAttempts  int
	maxEventAge    time.Duration
	messageGroupID string

	// S3: the bucket, the event types and the key filters (none: every
	// key).
	bucket        awss3.IBucket
	bucketEvents  []awss3.EventType
	bucketFilters []*awss3.NotificationKeyFilter
}

// declared are the sources the props declare, each with the props that
// declare it, in the order of sourceKind.
func (p *IdempotentConsumerProps) declared() map[sourceKind][]string {
	d := map[sourceKind][]string{}
	add := func(k sourceKind, name string, set bool) {
		if set {
			d[k] = append(d[k], name)
		}
	}
	add(sourceTopic, "Topic", p.Topic != nil)
	add(sourceTopic, "FilterPolicy", p.FilterPolicy != nil)
	add(sourceTopic, "RawMessageDelivery", p.RawMessageDelivery != nil)
	add(sourceTopic, "FifoTopic", p.FifoTopic != nil)
	add(sourceTopic, "ContentBasedDeduplication", p.ContentBasedDeduplication != nil)
	add(sourceTopic, "StandardQueue", p.StandardQueue != nil)
	add(sourceEventBus, "EventPattern", p.EventPattern != nil)
	add(sourceEventBus, "EventBus", p.EventBus != nil)
	add(sourceEventBus, "EventRetryAttempts", p.EventRetryAttempts != nil)
	add(sourceEventBus, "EventMaxAge", p.EventMaxAge != nil)
	add(sourceEventBus, "EventMessageGroupId", p.EventMessageGroupId != nil)
	add(sourceBucket, "Bucket", p.Bucket != nil)
	add(sourceBucket, "BucketEvents", p.BucketEvents != nil)
	add(sourceBucket, "BucketFilters", p.BucketFilters != nil)
	add(sourceDirect, "DirectProducers", p.DirectProducers != nil && *p.DirectProducers)
	return d
}

// sourceKindOf is the source the props declare: the first of sourceKind's
// order that any prop declares, or the topic (sourceProblems refuses two).
func (p *IdempotentConsumerProps) sourceKindOf() sourceKind {
	d := p.declared()
	for _, k := range []sourceKind{sourceEventBus, sourceBucket, sourceDirect} {
		if len(d[k]) > 0 {
			return k
		}
	}
	return sourceTopic
}

// computeSource resolves the source's settings with their defaults.
func (p *IdempotentConsumerProps) computeSource(rd *propReader) source {
	src := source{kind: p.sourceKindOf()}
	switch src.kind {
	case sourceEventBus:
		src.eventPattern, src.eventBus = p.EventPattern, p.EventBus
		src.retryAttempts = rd.Count("EventRetryAttempts", p.EventRetryAttempts, defaultEventRetryAttempts)
		src.maxEventAge = rd.Duration("EventMaxAge", p.EventMaxAge, defaultEventMaxAge)
		src.messageGroupID = family.Str(p.EventMessageGroupId, "")
	case sourceBucket:
		src.bucket = p.Bucket
		src.bucketEvents = []awss3.EventType{awss3.EventType_OBJECT_CREATED}
		if p.BucketEvents != nil {
			src.bucketEvents = *p.BucketEvents
		}
		if p.BucketFilters != nil {
			for _, f := range *p.BucketFilters {
				if f != nil {
					src.bucketFilters = append(src.bucketFilters, f)
				}
			}
		}
	}
	return src
}

// delivery is the contract's MESSAGE_DELIVERY for the source: what the
// handler reads the body as.
func (s *settings) delivery() contract.Delivery {
	switch s.source.kind {
	case sourceEventBus:
		return contract.EventBridge
	case sourceBucket:
		return contract.S3
	case sourceDirect:
		return contract.Raw
	}
	if s.rawDelivery {
		return contract.Raw
	}
	return contract.Envelope
}

// queueFifo is whether the queue of a source other than a topic is FIFO:
// a given Queue says it (when CDK knows), else QueueProps.Fifo.
func (p *IdempotentConsumerProps) queueFifo() bool {
	if p.Queue != nil {
		_, fifo := queueKind(p.Queue)
		return fifo
	}
	return p.QueueProps != nil && p.QueueProps.Fifo != nil && *p.QueueProps.Fifo
}

// sourceProblems are the rules of the source: one source, and each
// source's own.
func (p *IdempotentConsumerProps) sourceProblems(s *settings) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	d := p.declared()
	var kinds []string
	for _, k := range []sourceKind{sourceTopic, sourceEventBus, sourceBucket, sourceDirect} {
		if len(d[k]) > 0 {
			kinds = append(kinds, fmt.Sprintf("%s (%s)", strings.SplitN(k.String(), " (", 2)[0], strings.Join(d[k], ", ")))
		}
	}
	if len(kinds) > 1 {
		bad("the props declare %d sources: %s; a consumer has one source, which its handler is told of; keep the props of one, and give each other source an IdempotentConsumer of its own", len(kinds), strings.Join(kinds, " and "))
		return problems
	}
	switch s.source.kind {
	case sourceEventBus:
		problems = append(problems, p.eventBusProblems(s)...)
	case sourceBucket:
		problems = append(problems, p.bucketProblems(s)...)
	}
	if s.source.kind == sourceEventBus || s.source.kind == sourceBucket {
		if what, ok := p.awsManagedKey(); ok {
			bad("%s encrypts the queue with the AWS-managed key %s, whose key policy cannot be changed to let %s use it, so every delivery would fail; leave the queue under SSE-SQS (the default), or give a customer-managed key as EncryptionKey", what, awsManagedSQSKey, servicePrincipal(s.source.kind))
		}
	}
	return problems
}

// servicePrincipal is the service that sends to the queue for kind.
func servicePrincipal(kind sourceKind) string {
	if kind == sourceBucket {
		return "s3.amazonaws.com"
	}
	return "events.amazonaws.com"
}

// dynamicPath is EventBridge's dynamic JSON path syntax for a target
// parameter: '$', then dot-separated names of letters, digits, '_', '-' or
// '/', each with optional array indices
// (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-targets.html#dynamic-path-parameters;
// the whole value is a path, never a part of it). A wildcard would give no
// one group.
var dynamicPath = regexp.MustCompile(`^\$(\.[A-Za-z0-9_/-]+(\[[0-9]+\])*)+$`)

// eventBusProblems are the rules of an EventBridge source.
func (p *IdempotentConsumerProps) eventBusProblems(s *settings) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	src := s.source
	if p.EventPattern == nil {
		bad("EventBus is given without EventPattern, but a rule on the bus needs a pattern to match the consumer's events; set EventPattern (for example &awsevents.EventPattern{Source: jsii.Strings(\"orders\")}), or leave EventBus nil")
	}
	if p.EventRetryAttempts != nil && (src.retryAttempts < 0 || src.retryAttempts > maxEventRetryAttempts) {
		bad("EventRetryAttempts %d is out of range: EventBridge retries a target 0 to %d times; give a whole number in that range, or leave it nil for EventBridge's %d", src.retryAttempts, maxEventRetryAttempts, defaultEventRetryAttempts)
	}
	if p.EventMaxAge != nil && (src.maxEventAge < minEventMaxAge || src.maxEventAge > maxEventMaxAge) {
		bad("EventMaxAge %s is out of range: EventBridge keeps retrying an event from %s to %s; give a duration in that range, or leave it nil for EventBridge's %s", contract.Format(src.maxEventAge), contract.Format(minEventMaxAge), contract.Format(maxEventMaxAge), contract.Format(defaultEventMaxAge))
	}
	group := src.messageGroupID
	switch {
	case s.fifo.queue && p.EventMessageGroupId == nil:
		bad("the queue is FIFO, and EventBridge sends to a FIFO queue only with a message group id; set EventMessageGroupId to a JSON path into the event (for example \"$.detail.customerId\": the events of one customer in order) or to a fixed group name (every event in one order)")
	case !s.fifo.queue && p.EventMessageGroupId != nil:
		bad("EventMessageGroupId %q is given, but the queue is standard, which takes no message group; leave EventMessageGroupId nil, or make the queue FIFO (QueueProps.Fifo)", group)
	case p.EventMessageGroupId == nil:
	case group == "" || len(group) > maxMessageGroupID:
		bad("EventMessageGroupId %q must be 1 to %d characters (SqsParameters.MessageGroupId); give a JSON path such as \"$.detail.customerId\" or a short group name", group, maxMessageGroupID)
	case strings.HasPrefix(group, "$") && !dynamicPath.MatchString(group):
		bad("EventMessageGroupId %q is not a JSON path EventBridge evaluates: give '$' then dot-separated names of letters, digits, '_', '-' or '/', with array indices such as [0] and no wildcard (for example \"$.detail.customerId\"), the whole value a path", group)
	}
	if s.fifo.queue {
		if q, ok := p.Queue.(awssqs.Queue); ok && isDefinedInApp(q) {
			if cbd, _ := q.Node().DefaultChild().(awssqs.CfnQueue).ContentBasedDeduplication().(*bool); cbd == nil || !*cbd {
				bad("Queue %s is a FIFO queue without content-based deduplication, and EventBridge sends to a FIFO queue no deduplication id of its own; set ContentBasedDeduplication on the queue (it absorbs EventBridge's redelivery of one event; the idempotency record absorbs a producer's retry, a new event id)", *q.Node().Path())
			}
		}
		if p.QueueProps != nil && p.QueueProps.ContentBasedDeduplication != nil && !*p.QueueProps.ContentBasedDeduplication {
			bad("QueueProps.ContentBasedDeduplication is false, but EventBridge sends to a FIFO queue no deduplication id of its own, so the queue must derive one from the event; leave it nil (the construct sets it)")
		}
	}
	return problems
}

// bucketProblems are the rules of an S3 source.
func (p *IdempotentConsumerProps) bucketProblems(s *settings) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if p.Bucket == nil {
		bad("%s is given without Bucket; set Bucket to the bucket whose notifications the consumer receives, or leave them nil", strings.Join(p.declared()[sourceBucket], " and "))
		return problems
	}
	if s.fifo.queue {
		bad("the queue is FIFO, but S3 cannot send event notifications to a FIFO queue; give a standard queue (leave QueueProps.Fifo nil): the handler's key (bucket/key@versionId, or @sequencer) absorbs repeated notifications without the queue's deduplication")
	}
	if p.BucketEvents != nil && len(*p.BucketEvents) == 0 {
		bad("BucketEvents is empty, so no event would be notified; give at least one (for example awss3.EventType_OBJECT_CREATED), or leave it nil for every object created")
	}
	for i, f := range s.source.bucketFilters {
		if f.Prefix == nil && f.Suffix == nil {
			bad("BucketFilters[%d] has neither Prefix nor Suffix, so it filters nothing; give one, or leave BucketFilters nil for every key", i)
		}
	}
	problems = append(problems, overlapProblems(s.source.bucketEvents, s.source.bucketFilters)...)
	return problems
}

// awsManagedKey says whether the queue the consumer reads is under
// alias/aws/sqs, and which prop says so.
func (p *IdempotentConsumerProps) awsManagedKey() (string, bool) {
	if p.EncryptionKey != nil && isAWSManagedSQSKey(p.EncryptionKey) {
		return "EncryptionKey", true
	}
	if p.Queue == nil && p.QueueProps != nil {
		if p.QueueProps.Encryption == awssqs.QueueEncryption_KMS_MANAGED {
			return "QueueProps.Encryption KMS_MANAGED", true
		}
		if k := p.QueueProps.EncryptionMasterKey; k != nil && isAWSManagedSQSKey(k) {
			return "QueueProps.EncryptionMasterKey", true
		}
	}
	if q, ok := p.Queue.(awssqs.Queue); ok && isDefinedInApp(q) {
		if id := q.Node().DefaultChild().(awssqs.CfnQueue).KmsMasterKeyId(); id != nil && !*awscdk.Token_IsUnresolved(id) && strings.HasSuffix(*id, awsManagedSQSKey) {
			return "Queue " + *q.Node().Path(), true
		}
	}
	return "", false
}

// isAWSManagedSQSKey says whether key is alias/aws/sqs (imported by its
// alias name or ARN).
func isAWSManagedSQSKey(key awskms.IKey) bool {
	if a, ok := key.(awskms.IAlias); ok {
		if n := a.AliasName(); n != nil && !*awscdk.Token_IsUnresolved(n) && *n == awsManagedSQSKey {
			return true
		}
	}
	arn := key.KeyArn()
	return arn != nil && !*awscdk.Token_IsUnresolved(arn) && strings.HasSuffix(*arn, ":"+awsManagedSQSKey)
}

// eventBusName is the EventBusName dimension of the rule's metrics: nil
// for the default bus (nil, or a bus named "default"), the bus's name for
// a custom one.
func eventBusName(bus awsevents.IEventBus) *string {
	if bus == nil {
		return nil
	}
	name := bus.EventBusName()
	if name != nil && !*awscdk.Token_IsUnresolved(name) && *name == "default" {
		return nil
	}
	return name
}

func (c *idempotentConsumer) GrantSendMessages(grantee awsiam.IGrantable) awsiam.Grant {
	return c.queue.GrantSendMessages(grantee)
}

func (c *idempotentConsumer) GrantPutEvents(grantee awsiam.IGrantable) awsiam.Grant {
	if c.rule == nil {
		panic(fmt.Sprintf("IdempotentConsumer %s: GrantPutEvents: the consumer's source is not an EventBridge rule (EventPattern); grant the producers what its source needs (GrantPublish for a topic, GrantSendMessages for direct producers)", *c.Node().Path()))
	}
	if c.eventBus != nil {
		return c.eventBus.GrantPutEventsTo(grantee, nil)
	}
	// The default bus of the consumer's account and Region.
	stack := awscdk.Stack_Of(c)
	return awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee,
		Actions: jsii.Strings("events:PutEvents"),
		ResourceArns: jsii.Strings(*stack.FormatArn(&awscdk.ArnComponents{
			Service: jsii.String("events"), Resource: jsii.String("event-bus"), ResourceName: jsii.String("default"),
		})),
	})
}

// sourceWarnings are the warnings of the source: what the construct cannot
// write for it.
func sourceWarnings(s *settings) []synthWarning {
	kind := s.source.kind
	if kind != sourceEventBus && kind != sourceBucket {
		return nil
	}
	var what string
	switch {
	case s.queue != nil && !isAppQueue(s.queue):
		what = "Queue is imported, so the construct cannot add to its policy"
	case s.keyImported:
		what = "EncryptionKey is imported, so the construct cannot add to its key policy"
	default:
		return nil
	}
	from := "the rule (aws:SourceArn of the consumer's Rule())"
	if kind == sourceBucket {
		from = "the bucket (aws:SourceArn) of its account (aws:SourceAccount)"
	}
	return []synthWarning{{ID: core.WarnSourcePolicyUnwritable, Message: fmt.Sprintf("%s: it must already let %s send (sqs:SendMessage from %s) and, for a customer-managed key, use the key (kms:GenerateDataKey*, kms:Decrypt); otherwise every delivery fails.", what, servicePrincipal(kind), from)}}
}

// isAppQueue says whether q is a queue of the app.
func isAppQueue(q awssqs.IQueue) bool {
	aq, ok := q.(awssqs.Queue)
	return ok && isDefinedInApp(aq)
}
