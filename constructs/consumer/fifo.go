package consumer

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// maxFIFOBatch is the largest batch the event source of an SQS FIFO queue
// takes (it takes no batching window): ReceiveMessage's 10.
const maxFIFOBatch = maxReceiveBatch

// fifo is what the construct makes of a FIFO topic.
type fifo struct {
	// topic: the topic is a FIFO topic (or FifoTopic says so).
	topic bool
	// queue: the queues are FIFO queues (a FIFO topic without
	// StandardQueue).
	queue bool
	// unknown: Topic is imported from a token ARN and FifoTopic is nil, so
	// nothing says what it is; the construct warns.
	unknown bool
}

// fifoKind computes whether the topic and the queues are FIFO: a given
// topic says it when CDK knows (FifoTopic may only repeat it); otherwise
// FifoTopic does. StandardQueue subscribes standard queues to a FIFO topic.
func (p *IdempotentConsumerProps) fifoKind() fifo {
	var f fifo
	if p.sourceKindOf() != sourceTopic {
		// No topic: the queue says it (a given Queue's kind, or
		// QueueProps.Fifo).
		f.queue = p.queueFifo()
		return f
	}
	given := p.FifoTopic != nil
	switch {
	case p.Topic == nil:
		f.topic = given && *p.FifoTopic
	case topicKindKnown(p.Topic):
		f.topic = p.Topic.Fifo() != nil && *p.Topic.Fifo()
	default:
		f.topic = given && *p.FifoTopic
		f.unknown = !given
	}
	f.queue = f.topic && (p.StandardQueue == nil || !*p.StandardQueue)
	return f
}

// fifoProblems reports the FIFO props that contradict the topic or each
// other.
func (p *IdempotentConsumerProps) fifoProblems(s *settings) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if p.Topic != nil && p.FifoTopic != nil && topicKindKnown(p.Topic) && *p.FifoTopic != s.fifo.topic {
		bad("FifoTopic is %t, but Topic is a %s topic; leave FifoTopic nil, and the consumer follows the topic", *p.FifoTopic, kind(s.fifo.topic))
	}
	if p.ContentBasedDeduplication != nil && *p.ContentBasedDeduplication {
		switch {
		case p.Topic != nil:
			bad("ContentBasedDeduplication is set with a given Topic, but it is a setting of the topic the construct creates; set it on that topic (awssns.TopicProps.ContentBasedDeduplication), and leave ContentBasedDeduplication nil")
		case !s.fifo.topic:
			bad("ContentBasedDeduplication needs a FIFO topic (SNS deduplicates only on FIFO topics); set FifoTopic to true as well, or leave ContentBasedDeduplication nil")
		}
	}
	return problems
}

// fifoEventSourceProblems are the event-source rules of an SQS FIFO queue:
// batches of at most 10 records, no batching window. They replace the
// standard queue's rules about batches and windows.
func (p *IdempotentConsumerProps) fifoEventSourceProblems(batchSize int) []string {
	var problems []string
	if batchSize > maxFIFOBatch {
		problems = append(problems, fmt.Sprintf("BatchSize %d is more than %d, the most the event source of an SQS FIFO queue takes in one batch (the topic is FIFO, so the queue is); give a BatchSize of at most %d (default %d), or set StandardQueue to batch more and give up the order within message groups",
			batchSize, maxFIFOBatch, maxFIFOBatch, defaultBatchSize))
	}
	if p.MaxBatchingWindow != nil {
		given := "a token"
		if w, ok := concreteDuration(p.MaxBatchingWindow); ok {
			given = contract.Format(w)
		}
		problems = append(problems, fmt.Sprintf("MaxBatchingWindow is %s, but the event source of an SQS FIFO queue takes no batching window (the topic is FIFO, so the queue is); leave MaxBatchingWindow nil, or set StandardQueue to batch and give up the order within message groups", given))
	}
	return problems
}

// topicKindKnown says whether CDK knows if topic is a FIFO topic: it is
// defined in the app, or imported from an ARN that is not a token (CDK reads
// the ".fifo" suffix of its name). An ARN that is a token says nothing, and
// CDK calls the topic standard.
func topicKindKnown(topic awssns.ITopic) bool {
	if cfn, ok := topic.Node().DefaultChild().(awssns.CfnTopic); ok && cfn != nil {
		return true
	}
	return !*awscdk.Token_IsUnresolved(topic.TopicArn())
}

func kind(fifo bool) string {
	if fifo {
		return "FIFO"
	}
	return "standard"
}

// unknownTopicWarning is the synth warning for a Topic imported from a
// token ARN without FifoTopic.
const unknownTopicWarning = "Topic is imported from an ARN that is a token, so nothing at synth says whether it is a FIFO topic, and the consumer gets a standard queue. If it is a FIFO topic, set FifoTopic to true (a standard queue would consume its message groups out of order); if it is standard, set FifoTopic to false to say so."
