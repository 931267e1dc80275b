package consumer

import (
	"reflect"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/nag"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// dlqRetention is how long the construct's dead-letter queues keep a
// message by default: the SQS maximum, time for a human to look.
var dlqRetention = awscdk.Duration_Days(jsii.Number(14))

// queueDefaults are the construct's secure defaults for a queue it creates:
// SSE-SQS or the customer's key, TLS only. The user's QueueProps (or
// DeadLetterQueueProps) are laid over them, field by field.
func (s *settings) queueDefaults(key awskms.IKey) *awssqs.QueueProps {
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
// the user's overrides (which validation keeps from contradicting it): FIFO
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
	p.MaxMessageSizeBytes = jsii.Number(sqsbatch.MaxQueueBodyBytes)
	return p
}

// overlay sets every field of dst that src sets (is not its zero value) and
// returns dst: the user's props over the construct's defaults.
func overlay[T any](dst, src *T) *T {
	if src == nil {
		return dst
	}
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := range s.NumField() {
		if f := s.Field(i); !f.IsZero() {
			d.Field(i).Set(f)
		}
	}
	return dst
}

// addQueues creates, or takes, the queue the function consumes and its
// dead-letter queue, and creates the subscription's dead-letter queue.
func (c *idempotentConsumer) addQueues(props *IdempotentConsumerProps, s *settings) {
	key := props.EncryptionKey
	c.dlq = props.DeadLetterQueue
	if props.Queue != nil {
		c.queue = props.Queue
		if c.dlq == nil { // validation: an app's queue with a dead-letter queue
			c.dlq = props.Queue.(awssqs.Queue).DeadLetterQueue().Queue
		}
	} else {
		if c.dlq == nil {
			dlqProps := s.queueDefaults(key)
			dlqProps.RetentionPeriod = dlqRetention
			c.dlq = awssqs.NewQueue(c, jsii.String(IDDeadLetterQueue), s.fixed(overlay(dlqProps, props.DeadLetterQueueProps)))
		}
		queueProps := s.fixed(overlay(s.queueDefaults(key), props.QueueProps))
		queueProps.VisibilityTimeout = awscdk.Duration_Seconds(jsii.Number(s.visibilityTimeout.Seconds()))
		queueProps.DeadLetterQueue = &awssqs.DeadLetterQueue{
			Queue:           c.dlq,
			MaxReceiveCount: jsii.Number(s.maxReceiveCount),
		}
		c.queue = awssqs.NewQueue(c, jsii.String(IDQueue), queueProps)
	}
	subDLQProps := s.queueDefaults(key)
	subDLQProps.RetentionPeriod = dlqRetention
	c.subDLQ = awssqs.NewQueue(c, jsii.String(IDSubscriptionDeadLetterQueue), s.fixed(subDLQProps))

	// A dead-letter queue has no dead-letter queue of its own. A given
	// dead-letter queue defined in the app is marked as well: the consumer
	// knows what it is for (an imported one has no resource to mark).
	nag.Suppress(c.dlq, true,
		nag.Rule{ID: "Serverless-SQSRedrivePolicy", Reason: "This queue is the dead-letter queue of Queue (its RedrivePolicy target); a dead-letter queue has no dead-letter queue of its own."})
	nag.Suppress(c.subDLQ, true,
		nag.Rule{ID: "AwsSolutions-SQS3", Reason: "This queue is the dead-letter queue of the SNS subscription (its RedrivePolicy target); a dead-letter queue has no dead-letter queue of its own."},
		nag.Rule{ID: "Serverless-SQSRedrivePolicy", Reason: "This queue is the dead-letter queue of the SNS subscription (its RedrivePolicy target); a dead-letter queue has no dead-letter queue of its own."})
}

// addTopic creates the topic unless one is given, and subscribes the queue
// to it, with the subscription's dead-letter queue.
func (c *idempotentConsumer) addTopic(props *IdempotentConsumerProps, s *settings) {
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
}
