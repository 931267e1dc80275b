package consumer

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/family"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// This file holds the rules about settings that deploy and then lose
// messages or fail later (DESIGN.md, "What the construct refuses"): each
// rule is a pure function of the values it judges, which returns problems
// (refusals, in the construct's format: the value, the rule, the fix) or
// warnings. compute reads those values once from the props and the
// resources they name (computeReadings, with this file's readers), and
// refusals applies the rules to them; where a value cannot be read at synth
// (an imported queue, layer or table), the rule becomes a warning that
// states it.

// sqsDefaultMaxMessageBytes is the MaximumMessageSize that a queue created
// before SQS's default became 1 MiB keeps when its template does not set
// one.
const sqsDefaultMaxMessageBytes = 262144

// synthWarning is a warning the construct adds to itself at synth.
type synthWarning = family.Warning

// warn adds the warnings to the consumer's annotations.
func (c *idempotentConsumer) warn(warnings []synthWarning) { family.Warn(c, warnings) }

// retention is a queue's message retention period as the construct can
// know it at synth.
type retention struct {
	// what names the value in a message ("QueueProps.RetentionPeriod",
	// "the retention of Queue Stack/Orders").
	what string
	d    time.Duration
	// known is false for an imported queue or a token.
	known bool
	// isDefault: nothing sets it; SQS's (or the construct's) default
	// applies.
	isDefault bool
}

// queueRetentions reads the retention periods of the queue and of its
// dead-letter queue, from the props, the queue and dead-letter queue of the
// app, or the defaults of the queues the construct creates.
func (p *IdempotentConsumerProps) queueRetentions() (queue, dlq retention) {
	switch {
	case p.Queue == nil:
		queue = propRetention("QueueProps.RetentionPeriod", p.QueueProps, limits.DefaultQueueRetention, "SQS's default")
	default:
		queue = queueRetention("Queue", p.Queue)
	}
	switch {
	case p.DeadLetterQueue != nil:
		dlq = queueRetention("DeadLetterQueue", p.DeadLetterQueue)
	case p.Queue != nil:
		if q, ok := p.Queue.(awssqs.Queue); ok && isDefinedInApp(q) && q.DeadLetterQueue() != nil {
			dlq = queueRetention("Queue's dead-letter queue", q.DeadLetterQueue().Queue)
		} else {
			dlq = retention{what: "the dead-letter queue"}
		}
	default:
		dlq = propRetention("DeadLetterQueueProps.RetentionPeriod", p.DeadLetterQueueProps, limits.MaxQueueRetention, "the construct's default")
	}
	return queue, dlq
}

// propRetention is the retention of a queue the construct creates from
// props (QueueProps or DeadLetterQueueProps), or def.
func propRetention(name string, props *awssqs.QueueProps, def time.Duration, defName string) retention {
	if props == nil || props.RetentionPeriod == nil {
		return retention{what: fmt.Sprintf("%s: %s is nil", defName, name), d: def, known: true, isDefault: true}
	}
	d, ok := concreteDuration(props.RetentionPeriod)
	return retention{what: name, d: d, known: ok}
}

// queueRetention is the retention of a queue given to the construct: what
// the app's queue says (SQS's 4 days when it sets none), or unknown for an
// imported queue or a token.
func queueRetention(name string, q awssqs.IQueue) retention {
	r := retention{what: fmt.Sprintf("the retention period of %s %s", name, *q.Node().Path())}
	cfn, ok := q.Node().DefaultChild().(awssqs.CfnQueue)
	if !ok || cfn == nil {
		return r
	}
	switch v := cfn.MessageRetentionPeriod(); {
	case v == nil:
		r.what += " (SQS's default)"
		r.d, r.known, r.isDefault = limits.DefaultQueueRetention, true, true
	case !*awscdk.Token_IsUnresolved(v):
		r.d, r.known = time.Duration(*v)*time.Second, true
	}
	return r
}

// deadLetterRetentionProblems is the rule that a standard queue's
// dead-letter queue keeps messages longer than the queue: SQS keeps a
// message's original enqueue time when it moves it to the dead-letter queue
// of a standard queue (a FIFO queue's move resets it), so a dead-letter
// queue whose retention is not longer deletes old dead letters on arrival.
// AWS advises a longer retention for the dead-letter queue.
func deadLetterRetentionProblems(queue, dlq retention, fifo bool) []string {
	if fifo || !queue.known || !dlq.known || dlq.d > queue.d {
		return nil
	}
	return []string{fmt.Sprintf("the dead-letter queue's retention %s (%s) is not longer than the queue's %s (%s): for a standard queue SQS keeps a message's original enqueue time when it moves it to the dead-letter queue, so a message that waited in the queue for most of its retention is deleted from the dead-letter queue soon after it arrives, or at once; give the dead-letter queue a retention longer than the queue's (up to %s, SQS's longest, the construct's default), or shorten the queue's",
		formatDays(dlq.d), dlq.what, formatDays(queue.d), queue.what, formatDays(limits.MaxQueueRetention))}
}

// retentionRangeProblems is the rule that a retention the props give is
// one SQS keeps (60 seconds to 14 days): CDK refuses another at the
// queue's construction, without naming the consumer or the prop. A queue
// of the app was refused at its own construction.
func retentionRangeProblems(r retention) []string {
	if !r.known || r.isDefault || r.d >= limits.MinQueueRetention && r.d <= limits.MaxQueueRetention {
		return nil
	}
	return []string{fmt.Sprintf("%s %s is out of range: SQS keeps a message from %s to %s; give a retention in that range",
		r.what, formatDays(r.d), contract.Format(limits.MinQueueRetention), formatDays(limits.MaxQueueRetention))}
}

// redriveRetentionProblems is the rule that a message can fail every
// receive before it expires: maxReceiveCount receives, each a visibility
// timeout apart, must end before the queue's retention does, or a poison
// message expires in the queue, never reaching the dead-letter queue or
// its alarm. maxReceive 0 is unknown.
func redriveRetentionProblems(queue retention, maxReceive float64, visibility time.Duration) []string {
	if !queue.known || maxReceive <= 0 || visibility <= 0 {
		return nil
	}
	need := time.Duration(maxReceive) * visibility
	if queue.d > need {
		return nil
	}
	return []string{fmt.Sprintf("the queue's retention %s (%s) is not longer than MaxReceiveCount × the visibility timeout (%s × %s = %s): a message that fails every receive expires in the queue before SQS moves it to the dead-letter queue, lost without an alarm; give the queue a retention longer than %s, or lower MaxReceiveCount or VisibilityTimeout",
		formatDays(queue.d), queue.what, formatNumber(maxReceive), contract.Format(visibility), contract.Format(need), contract.Format(need))}
}

// backoffRetentionProblems is the rule that a message that fails every
// receive under the backoff of failed records reaches the dead-letter queue
// before its retention ends: the retry horizon (the longest delays after
// receives 1 to MaxReceiveCount − 1, contract.Settings.Backoff) and the
// visibility timeout of its last receive must be shorter than the queue's
// retention, or it expires in the queue, lost without an alarm. The
// horizon against the business window is the contract's rule.
func backoffRetentionProblems(queue retention, rt contract.Settings, visibility time.Duration) []string {
	b, capName := rt.Backoff()
	if !queue.known || b.Base <= 0 || rt.MaxReceiveCount <= 1 || visibility <= 0 {
		return nil
	}
	h := b.Horizon(rt.MaxReceiveCount)
	if need := h + visibility; queue.d <= need {
		return []string{fmt.Sprintf("the queue's retention %s (%s) is not longer than the retry horizon of the backoff and the last receive's visibility timeout (%s + %s = %s; the horizon: the longest delays after receives 1 to %d of MaxReceiveCount %d, BackoffBase %s doubled up to %s %s): a message that fails every receive expires in the queue before SQS moves it to the dead-letter queue, lost without an alarm; give the queue a retention longer than %s, or a smaller BackoffCap, BackoffBase or MaxReceiveCount",
			formatDays(queue.d), queue.what, contract.Format(h), contract.Format(visibility), contract.Format(need), rt.MaxReceiveCount-1, rt.MaxReceiveCount, contract.Format(b.Base), capName, contract.Format(b.Cap), contract.Format(need))}
	}
	return nil
}

// deliveredBodyBytes is the largest SQS body the subscription delivers for
// a topic that accepts messages of up to topicMax bytes: the message itself
// with raw delivery, else its SNS envelope, which JSON escaping can double
// (contract.EnvelopeOverheadBytes for the envelope's own fields), at most
// SQS's largest body.
func deliveredBodyBytes(topicMax int, raw bool) int {
	if raw {
		return min(topicMax, contract.MaxQueueBodyBytes)
	}
	return min(2*topicMax+contract.EnvelopeOverheadBytes, contract.MaxQueueBodyBytes)
}

// queueSize is a given Queue's MaximumMessageSize as the construct can
// know it at synth.
type queueSize struct {
	bytes int
	// set: the app's queue sets a concrete value; unset: it sets none
	// (what it has then depends on when SQS created it); neither: imported
	// or a token.
	set, unset bool
}

// sizeOf reads the MaximumMessageSize of a queue of the app.
func sizeOf(q awssqs.IQueue) queueSize {
	cfn, ok := q.Node().DefaultChild().(awssqs.CfnQueue)
	if !ok || cfn == nil {
		return queueSize{}
	}
	switch v := cfn.MaximumMessageSize(); {
	case v == nil:
		return queueSize{unset: true}
	case *awscdk.Token_IsUnresolved(v):
		return queueSize{}
	default:
		return queueSize{bytes: int(*v), set: true}
	}
}

// queueSizeProblems is the rule that a given queue takes the largest body
// the subscription delivers (need, from deliveredBodyBytes): SNS cannot
// deliver a larger one, and moves it to the subscription's dead-letter
// queue. A queue that sets no size takes SQS's default, 1 MiB since 2025
// but 262,144 bytes for a queue created before: the warning says so when
// need is above that.
func queueSizeProblems(path string, size queueSize, need int) (problems []string, warnings []synthWarning) {
	switch {
	case size.set && size.bytes < need:
		problems = append(problems, fmt.Sprintf("Queue %s takes messages of up to %d bytes (its MaximumMessageSize), less than the largest body the subscription delivers, %d bytes (the topic's largest message, in its SNS envelope unless RawMessageDelivery): SNS cannot deliver a larger one into the queue and moves it to the subscription's dead-letter queue; set the queue's MaxMessageSizeBytes to %d (SQS's largest), or at least %d",
			path, size.bytes, need, contract.MaxQueueBodyBytes, need))
	case size.unset && need > sqsDefaultMaxMessageBytes:
		warnings = append(warnings, synthWarning{ID: core.WarnQueueSizeUnset, Message: fmt.Sprintf("Queue %s sets no MaximumMessageSize: a queue SQS creates now takes 1 MiB, but a queue created before SQS's default became 1 MiB keeps %d bytes, less than the largest body the subscription delivers (%d bytes), and SNS would move larger ones to the subscription's dead-letter queue; set the queue's MaxMessageSizeBytes to %d to say it.",
			path, sqsDefaultMaxMessageBytes, need, contract.MaxQueueBodyBytes)})
	}
	return problems, warnings
}

// importedQueueWarning states the rules about queues that the construct
// cannot check for an imported Queue (or DeadLetterQueue).
func importedQueueWarning(name, path string, need int, maxReceive float64, visibility time.Duration, fifo bool) synthWarning {
	rules := []string{}
	if name == "Queue" {
		rules = append(rules, fmt.Sprintf("its MaximumMessageSize must be at least %d bytes (the largest body the subscription delivers)", need))
		switch {
		case maxReceive > 0 && visibility > 0:
			rules = append(rules, fmt.Sprintf("its retention must be longer than its maxReceiveCount × its visibility timeout (%s × %s = %s)", formatNumber(maxReceive), contract.Format(visibility), contract.Format(time.Duration(maxReceive)*visibility)))
		case visibility > 0:
			rules = append(rules, fmt.Sprintf("its retention must be longer than its maxReceiveCount × its visibility timeout (%s)", contract.Format(visibility)))
		}
	}
	if !fifo {
		rules = append(rules, "the dead-letter queue's retention must be longer than the queue's (SQS keeps a standard queue's enqueue time when it moves a message)")
	}
	return synthWarning{ID: core.WarnQueueUnreadable, Message: fmt.Sprintf("%s %s is imported, so the construct cannot check at synth what it checks for a queue of the app: %s. Check them where the queue is defined (DESIGN.md, \"What the construct refuses\").",
		name, path, strings.Join(rules, "; "))}
}

// windowRetentionWarnings is the warning that Window is shorter than the
// queue's retention: the handler judges each record by its age, and a
// message older than Window is not run but dead-lettered as expired (its
// fact's record may have ended its window, so running it could repeat its
// effect). A backlog that waits longer than Window, in an outage, is
// therefore dead-lettered rather than run. No warning for the defaults
// together (Window 24h, SQS's 4 days): that pairing is the documented
// behaviour; none either when the retention is not known.
func windowRetentionWarnings(window time.Duration, windowIsDefault bool, queue retention) []synthWarning {
	if !queue.known || window >= queue.d || windowIsDefault && queue.isDefault {
		return nil
	}
	return []synthWarning{{ID: core.WarnWindowShorterThanRetention, Message: fmt.Sprintf("Window %s is shorter than the queue's retention %s (%s): the handler dead-letters a message older than Window as expired instead of running it (its record may have ended its window, so running it could repeat its effect), so a backlog that waits longer than %s is dead-lettered, not run. To run such a backlog, give a Window of at least %s (records then live that long); to accept it, acknowledge this warning. A shorter retention is no fix: SQS would delete those messages instead, with no dead letter.",
		contract.Format(window), formatDays(queue.d), queue.what, contract.Format(window), formatDays(queue.d))}}
}

// formatDays writes d as contract.Format does, with its days when it is a
// whole number of them ("96h (4 days)").
func formatDays(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == day:
		return "24h (1 day)"
	case d > 0 && d%day == 0:
		return fmt.Sprintf("%s (%d days)", contract.Format(d), d/day)
	}
	return contract.Format(d)
}

// refusalProblems applies this file's rules to the settings: the
// problems, for problems.
func (p *IdempotentConsumerProps) refusalProblems(s *settings) []string {
	problems, _ := refusals(s)
	return problems
}

// refusalWarnings are the warnings of the family's shared rules and of this
// file's for the settings, which NewIdempotentConsumer adds to the
// consumer.
func refusalWarnings(s *settings) []synthWarning {
	_, warnings := refusals(s)
	return append(s.Warnings(), warnings...)
}

// refusals applies the rules to the values compute read (computeReadings).
// It reads the settings and writes nothing.
func refusals(s *settings) (problems []string, warnings []synthWarning) {
	add := func(ps []string, ws []synthWarning) {
		problems = append(problems, ps...)
		warnings = append(warnings, ws...)
	}
	queue, dlq := s.queueRetention, s.dlqRetention
	add(retentionRangeProblems(queue), nil)
	add(retentionRangeProblems(dlq), nil)
	add(deadLetterRetentionProblems(queue, dlq, s.fifo.queue), nil)
	add(redriveRetentionProblems(queue, s.maxReceiveCount, s.visibilityTimeout), nil)
	add(backoffRetentionProblems(queue, s.Runtime, s.visibilityTimeout), nil)
	add(nil, windowRetentionWarnings(s.Runtime.Window, s.WindowIsDefault, queue))

	need := deliveredBodyBytes(deliveredTopicMax(s), s.Runtime.Delivery != contract.Envelope)
	if s.Runtime.Delivery == contract.EventBridge {
		// The event around the detail (contract.EventOverheadBytes).
		need = min(s.Runtime.MaxMessageBytes+contract.EventOverheadBytes, contract.MaxQueueBodyBytes)
	}
	if s.queue != nil {
		if size := s.queueSize; size.set || size.unset {
			add(queueSizeProblems(*s.queue.Node().Path(), size, need))
		} else {
			add(nil, []synthWarning{importedQueueWarning("Queue", *s.queue.Node().Path(), need, s.maxReceiveCount, s.visibilityTimeout, s.fifo.queue)})
		}
	}
	// s.dlq is the dead-letter queue the construct is given:
	// DeadLetterQueue, or the redrive target of a Queue of the app.
	if s.dlq != nil && !dlq.known && queue.known && !s.fifo.queue {
		add(nil, []synthWarning{importedQueueWarning("DeadLetterQueue", *s.dlq.Node().Path(), need, 0, 0, false)})
	}

	add(nil, sourceWarnings(s)) // source.go
	return problems, warnings
}

// deliveredTopicMax is the largest message the topic accepts: the topic the
// construct creates takes MaxMessageBytes, a topic of the app says its own
// (validate.go refuses one above MaxMessageBytes), an imported one is taken
// at MaxMessageBytes (its documented bound).
func deliveredTopicMax(s *settings) int {
	if s.topicMaxKnown {
		return int(s.topicMaxBytes)
	}
	return s.Runtime.MaxMessageBytes
}

// standardQueueFix is the other fix of a refused queue kind under a FIFO
// topic, which names the explicit choice: StandardQueue, for a standard
// queue (given) where the topic would make FIFO ones, or leaving it nil for
// a FIFO queue where StandardQueue makes standard ones. "" under a standard
// topic.
func standardQueueFix(f fifo, givenFIFO bool) string {
	switch {
	case f.topic && f.queue && !givenFIFO:
		return "; or, to consume the FIFO topic with standard queues, set StandardQueue to true, which gives up the order within message groups and the topic's deduplication past the topic (DESIGN.md, \"FIFO topics\")"
	case f.topic && !f.queue && givenFIFO:
		return "; or leave StandardQueue nil, and the FIFO topic gets FIFO queues"
	}
	return ""
}
