package consumer

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// queueProblems checks the props about the queues: a given Queue (and what
// it says of itself, or what the props declare of an imported one), a given
// DeadLetterQueue, and the overrides of the queues the construct creates.
// It compares the queue's visibility timeout and redrive count, as compute
// read them, with the rules and the declarations.
func (p *IdempotentConsumerProps) queueProblems(s *settings) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	want := kind(s.fifo.queue)
	wantWhy := "the topic is " + kind(s.fifo.topic)
	if s.fifo.topic && !s.fifo.queue {
		wantWhy += " and StandardQueue is set"
	}
	if s.source.kind != sourceTopic {
		wantWhy = "the source is " + s.source.kind.String() + " and QueueProps.Fifo is not set"
		if s.fifo.queue {
			wantWhy = "the source is " + s.source.kind.String() + " and the queue is FIFO"
		}
	}

	if p.Queue != nil {
		problems = append(problems, p.givenQueueProblems(s, want, wantWhy)...)
	} else {
		problems = append(problems, p.createdQueueProblems(s, want, wantWhy)...)
	}
	if p.DeadLetterQueue != nil {
		if p.Queue == nil && p.DeadLetterQueueProps != nil {
			bad("DeadLetterQueue and DeadLetterQueueProps are both given, but DeadLetterQueueProps configures the dead-letter queue the construct creates, which a given DeadLetterQueue replaces; leave DeadLetterQueueProps nil")
		}
		if known, fifo := queueKind(p.DeadLetterQueue); known && fifo != s.fifo.queue {
			bad("DeadLetterQueue is a %s queue, but the queue is %s (%s), and SQS requires a dead-letter queue of its queue's kind; give a %s dead-letter queue", kind(fifo), want, wantWhy, want)
		}
	}
	if (p.Queue == nil || p.MaxReceiveCount != nil) && (!isInt(s.maxReceiveCount) || s.maxReceiveCount < 1 || s.maxReceiveCount > 1000) {
		bad("MaxReceiveCount %v is out of range; give a whole number from 1 to 1000 (default %d)", s.maxReceiveCount, defaultMaxReceiveCount)
	}
	return problems
}

// givenQueueProblems checks a given Queue: the props it replaces, its kind,
// what it says of itself (appQueueProblems) or what the props must declare
// of an imported one, and its visibility timeout.
func (p *IdempotentConsumerProps) givenQueueProblems(s *settings, want, wantWhy string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	minVisibility := visibilityTimeoutFactor * s.Runtime.Timeout
	if p.QueueProps != nil {
		bad("Queue and QueueProps are both given, but QueueProps configures the queue the construct creates, which a given Queue replaces; configure your queue where you define it and leave QueueProps nil, or leave Queue nil")
	}
	if p.DeadLetterQueueProps != nil {
		bad("Queue and DeadLetterQueueProps are both given, but DeadLetterQueueProps configures the dead-letter queue the construct creates, and a given Queue brings its own; configure your dead-letter queue where you define it and leave DeadLetterQueueProps nil")
	}
	if known, fifo := queueKind(p.Queue); known && fifo != s.fifo.queue {
		bad("Queue is a %s queue, but %s, so the consumer needs a %s queue (SNS delivers a standard topic only into standard queues, and a FIFO topic's order only into FIFO queues); give a %s queue%s", kind(fifo), wantWhy, want, want, standardQueueFix(s.fifo, fifo))
	}
	if q, ok := p.Queue.(awssqs.Queue); ok && isDefinedInApp(q) {
		problems = append(problems, p.appQueueProblems(q, s)...)
	} else {
		if p.DeadLetterQueue == nil {
			bad("Queue is imported, and the construct cannot read an imported queue's redrive policy at synth; declare its dead-letter queue with DeadLetterQueue (the alarms and the dashboard watch it), or define the queue in the app")
		}
		if p.VisibilityTimeout == nil {
			bad("Queue is imported, and the construct cannot read an imported queue's visibility timeout at synth; declare it with VisibilityTimeout (at least %d × Timeout = %s), or define the queue in the app", visibilityTimeoutFactor, contract.Format(minVisibility))
		}
	}
	if s.visibilityTimeout != 0 && s.visibilityTimeout < minVisibility {
		bad("Queue's visibility timeout %s is less than %d × Timeout (%s) = %s, so SQS would hand a batch to a second invocation while the first is still working on it; set the queue's visibility timeout to at least %s, or lower Timeout",
			contract.Format(s.visibilityTimeout), visibilityTimeoutFactor, contract.Format(s.Runtime.Timeout), contract.Format(minVisibility), contract.Format(minVisibility))
	}
	return problems
}

// createdQueueProblems checks the queues the construct creates: the
// visibility timeout, and what QueueProps and DeadLetterQueueProps may not
// decide.
func (p *IdempotentConsumerProps) createdQueueProblems(s *settings, want, wantWhy string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	minVisibility := visibilityTimeoutFactor * s.Runtime.Timeout
	switch {
	case p.VisibilityTimeout == nil: // the default, 6 × Timeout
	case s.visibilityTimeout < minVisibility:
		bad("VisibilityTimeout %s is less than %d × Timeout (%s) = %s, so SQS would hand a batch to a second invocation while the first is still working on it; set VisibilityTimeout to at least %s, or leave it nil for the default (%d × Timeout)",
			contract.Format(s.visibilityTimeout), visibilityTimeoutFactor, contract.Format(s.Runtime.Timeout), contract.Format(minVisibility), contract.Format(minVisibility), visibilityTimeoutFactor)
	case s.visibilityTimeout > maxVisibilityTimeout:
		bad("VisibilityTimeout %s is above the SQS maximum of %s; give at most %s", contract.Format(s.visibilityTimeout), contract.Format(maxVisibilityTimeout), contract.Format(maxVisibilityTimeout))
	}
	problems = append(problems, p.overrideProblems("QueueProps", p.QueueProps, s, want, wantWhy)...)
	problems = append(problems, p.overrideProblems("DeadLetterQueueProps", p.DeadLetterQueueProps, s, want, wantWhy)...)
	if p.QueueProps != nil && p.QueueProps.VisibilityTimeout != nil {
		bad("QueueProps.VisibilityTimeout is set, but the construct checks the visibility timeout against Timeout; set VisibilityTimeout instead, and leave QueueProps.VisibilityTimeout nil")
	}
	if p.QueueProps != nil && p.QueueProps.DeadLetterQueue != nil {
		bad("QueueProps.DeadLetterQueue is set, but the construct sets the queue's redrive policy; give the dead-letter queue as DeadLetterQueue and the count as MaxReceiveCount, and leave QueueProps.DeadLetterQueue nil")
	}
	if p.DeadLetterQueueProps != nil && p.DeadLetterQueueProps.DeadLetterQueue != nil {
		bad("DeadLetterQueueProps.DeadLetterQueue is set, but a dead-letter queue has no dead-letter queue of its own (a message would move on once more, out of the alarms' sight); leave it nil")
	}
	return problems
}

// appQueueProblems compares what a Queue the app defines says of itself
// (its dead-letter queue, maxReceiveCount and visibility timeout, which
// compute took as the queue's) with the props, which may repeat it but not
// contradict it.
func (p *IdempotentConsumerProps) appQueueProblems(q awssqs.Queue, s *settings) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if dlq := q.DeadLetterQueue(); dlq == nil {
		bad("Queue %s has no dead-letter queue, so a message no retry can fix (bad input, a payload mismatch) would come back until the queue's retention ends, with no alarm; give the queue a DeadLetterQueue (awssqs.DeadLetterQueue{Queue, MaxReceiveCount: 5}), or leave Queue nil", *q.Node().Path())
	} else {
		if p.DeadLetterQueue != nil && *p.DeadLetterQueue.Node().Path() != *dlq.Queue.Node().Path() {
			bad("DeadLetterQueue is %s, but Queue's dead-letter queue is %s; leave DeadLetterQueue nil (the construct takes the queue's)", *p.DeadLetterQueue.Node().Path(), *dlq.Queue.Node().Path())
		}
		if p.MaxReceiveCount != nil && s.declaredMaxReceiveCount != s.maxReceiveCount {
			bad("MaxReceiveCount %v differs from Queue's maxReceiveCount %v; leave MaxReceiveCount nil (the construct takes the queue's)", s.declaredMaxReceiveCount, s.maxReceiveCount)
		}
	}
	if _, token := appQueueVisibility(q); token {
		if p.VisibilityTimeout == nil {
			bad("Queue's visibility timeout is a token that CDK resolves only at deployment; declare its value with VisibilityTimeout so that the construct can check it against Timeout")
		}
		return problems // the declared value stands
	}
	if p.VisibilityTimeout != nil && s.declaredVisibilityTimeout != s.visibilityTimeout {
		bad("VisibilityTimeout %s differs from Queue's visibility timeout %s; leave VisibilityTimeout nil (the construct takes the queue's)", contract.Format(s.declaredVisibilityTimeout), contract.Format(s.visibilityTimeout))
	}
	return problems
}

// overrideProblems checks what QueueProps or DeadLetterQueueProps may not
// decide: the queue's kind, its size, a second key, content-based
// deduplication of the SNS envelope.
func (p *IdempotentConsumerProps) overrideProblems(name string, o *awssqs.QueueProps, s *settings, want, wantWhy string) []string {
	if o == nil {
		return nil
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if o.Fifo != nil && *o.Fifo != s.fifo.queue {
		bad("%s.Fifo is %t, but %s, so the construct creates %s queues; leave %s.Fifo nil%s", name, *o.Fifo, wantWhy, want, name, standardQueueFix(s.fifo, *o.Fifo))
	}
	if o.MaxMessageSizeBytes != nil {
		bad("%s.MaxMessageSizeBytes is set, but every queue of the construct takes SQS's largest body, so that none refuses what the topic delivers (the handler's limit is MaxMessageBytes); leave %s.MaxMessageSizeBytes nil", name, name)
	}
	if o.EncryptionMasterKey != nil && p.EncryptionKey != nil {
		bad("%s.EncryptionMasterKey and EncryptionKey are both given: two keys for one queue; give the key once, as EncryptionKey for every queue of the construct or as %s.EncryptionMasterKey for this one", name, name)
	}
	if o.ContentBasedDeduplication != nil && *o.ContentBasedDeduplication && s.Runtime.Delivery == contract.Envelope {
		bad("%s.ContentBasedDeduplication is set, but the queue receives the SNS envelope, whose MessageId, Timestamp and Signature are new on every delivery, so a hash of the body would deduplicate nothing; leave it nil (SNS hands a FIFO topic's deduplication id on to the queue)", name)
	}
	return problems
}

// queueKind says whether CDK knows if q is a FIFO queue (it is defined in
// the app, or imported from an ARN that is not a token), and whether it is.
func queueKind(q awssqs.IQueue) (known, fifo bool) {
	if _, ok := q.Node().DefaultChild().(awssqs.CfnQueue); !ok && *awscdk.Token_IsUnresolved(q.QueueArn()) {
		return false, false
	}
	return true, q.Fifo() != nil && *q.Fifo()
}

// isDefinedInApp says whether q is a queue of the app, not an imported one.
func isDefinedInApp(q awssqs.Queue) bool {
	_, ok := q.Node().DefaultChild().(awssqs.CfnQueue)
	return ok
}
