package consumer

import (
	"reflect"

	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/nag"
)

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
func (c *idempotentConsumer) addQueues(s *settings) {
	c.queue, c.dlq = s.queue, s.dlq
	if c.queue == nil {
		if c.dlq == nil {
			c.dlq = awssqs.NewQueue(c, jsii.String(ids.DeadLetterQueue), s.dlqProps)
		}
		props := *s.queueProps
		props.DeadLetterQueue = &awssqs.DeadLetterQueue{
			Queue:           c.dlq,
			MaxReceiveCount: jsii.Number(s.maxReceiveCount),
		}
		c.queue = awssqs.NewQueue(c, jsii.String(ids.Queue), &props)
	}
	// A dead-letter queue has no dead-letter queue of its own. A given
	// dead-letter queue defined in the app is marked as well: the consumer
	// knows what it is for (an imported one has no resource to mark).
	nag.Suppress(c.dlq, true,
		nag.Rule{ID: "Serverless-SQSRedrivePolicy", Reason: "This queue is the dead-letter queue of Queue (its RedrivePolicy target); a dead-letter queue has no dead-letter queue of its own."})
	if s.source.kind != sourceTopic {
		return // the subscription's dead-letter queue is a topic's
	}
	c.subDLQ = awssqs.NewQueue(c, jsii.String(ids.SubscriptionDeadLetterQueue), s.subProps)
	nag.Suppress(c.subDLQ, true,
		nag.Rule{ID: "AwsSolutions-SQS3", Reason: "This queue is the dead-letter queue of the SNS subscription (its RedrivePolicy target); a dead-letter queue has no dead-letter queue of its own."},
		nag.Rule{ID: "Serverless-SQSRedrivePolicy", Reason: "This queue is the dead-letter queue of the SNS subscription (its RedrivePolicy target); a dead-letter queue has no dead-letter queue of its own."})
}

// addTopic creates the topic unless one is given, and subscribes the queue
// to it, with the subscription's dead-letter queue.
func (c *idempotentConsumer) addTopic(s *settings) {
	c.topic = s.topic
	if c.topic == nil {
		c.ownTopic = true
		// Not EncryptionKey: the subscription adds the topic's ARN to the
		// key's policy, and a topic encrypted with that key would then
		// depend on the key that depends on it.
		topicProps := &awssns.TopicProps{
			MasterKey:  awskms.Alias_FromAliasName(c, jsii.String(ids.TopicKey), jsii.String("alias/aws/sns")),
			EnforceSSL: jsii.Bool(true),
		}
		if s.fifo.topic {
			// CDK names a FIFO topic after its path, with ".fifo".
			topicProps.Fifo = jsii.Bool(true)
			topicProps.ContentBasedDeduplication = s.contentBasedDeduplication
		}
		topic := awssns.NewTopic(c, jsii.String(ids.Topic), topicProps)
		// SNS refuses at Publish what the handler would refuse.
		topic.Node().DefaultChild().(awssns.CfnTopic).SetMaximumMessageSize(jsii.Number(s.Runtime.MaxMessageBytes))
		c.topic = topic
	}
	c.topic.AddSubscription(awssnssubscriptions.NewSqsSubscription(c.queue, &awssnssubscriptions.SqsSubscriptionProps{
		DeadLetterQueue:    c.subDLQ,
		FilterPolicy:       s.filterPolicy,
		RawMessageDelivery: jsii.Bool(s.rawDelivery),
	}))
}
