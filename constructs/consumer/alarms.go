package consumer

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/monitor"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Alarms are the alarms of an IdempotentConsumer. Each fires on the first
// datapoint that breaches and treats missing data as not breaching.
type Alarms struct {
	// DeadLetterQueue fires when the dead-letter queue holds a message.
	DeadLetterQueue awscloudwatch.Alarm
	// SubscriptionDeadLetterQueue fires when SNS could not deliver a
	// message into the queue.
	SubscriptionDeadLetterQueue awscloudwatch.Alarm
	// OldestMessage fires when the oldest message in the queue is older than
	// OldestMessageAlarmThreshold: the consumer is not keeping up.
	OldestMessage awscloudwatch.Alarm
	// Errors fires when an invocation failed as a whole.
	Errors awscloudwatch.Alarm
	// Throttles fires when an invocation was throttled.
	Throttles awscloudwatch.Alarm
	// PayloadMismatch fires when the handler saw a fact's key with another
	// payload than the one recorded (outcome mismatch): a producer reuses
	// keys, or PayloadIgnore misses a field that changes between retries.
	PayloadMismatch awscloudwatch.Alarm
	// LeaseLost fires when an effect outlived its lease and another worker
	// took the fact over (outcome lease_lost): the effect may have run
	// twice; raise Timeout or LeaseMax, or speed up the effect.
	LeaseLost awscloudwatch.Alarm
	// BadInput fires when the handler refused a message no retry can fix
	// (outcome bad_input: not JSON, no key, too large, refused by the key
	// function); the message ends in the dead-letter queue.
	BadInput awscloudwatch.Alarm
	// Expired fires when the handler refused a message as old as the
	// business window (outcome expired: its fact's record may have left the
	// window, so its effect is not run, since it may have run already); the
	// message ends in the dead-letter queue. A backlog, a long outage or a
	// whole batch redelivered late kept it in the queue that long. A redrive
	// of a raw message runs it (its age starts again), one in an SNS
	// envelope expires again: redrive only a message whose effect is known
	// not to have run, or to be harmless again (DESIGN.md, "A redrive").
	Expired awscloudwatch.Alarm
	// DeadLetteredUnstarted fires when the handler let a message reach the
	// dead-letter queue without ever having started its effect
	// (MetricDeadLetteredUnstarted): not started on its last receive,
	// because the invocation was too close to its deadline or, on a FIFO
	// queue, because an earlier message of its group failed. Redrive it once
	// the cause is fixed.
	DeadLetteredUnstarted awscloudwatch.Alarm

	// The alarms of an EventBridge source (EventPattern), nil for another:
	// EventFailedInvocations fires when the rule failed to deliver events
	// for good (its FailedInvocations), EventSentToDeadLetterQueue when it
	// sent events to its target's dead-letter queue (InvocationsSentToDlq),
	// EventFailedToDeadLetterQueue when it could deliver events to neither
	// queue, so they are lost (InvocationsFailedToBeSentToDlq), and
	// EventDeadLetterQueue when that dead-letter queue holds a message.
	EventFailedInvocations       awscloudwatch.Alarm
	EventSentToDeadLetterQueue   awscloudwatch.Alarm
	EventFailedToDeadLetterQueue awscloudwatch.Alarm
	EventDeadLetterQueue         awscloudwatch.Alarm
}

// All returns every alarm of the consumer (those of its source only), in a
// fixed order.
func (a Alarms) All() []awscloudwatch.Alarm {
	var all []awscloudwatch.Alarm
	for _, alarm := range []awscloudwatch.Alarm{a.DeadLetterQueue, a.SubscriptionDeadLetterQueue, a.OldestMessage, a.Errors, a.Throttles,
		a.PayloadMismatch, a.LeaseLost, a.BadInput, a.Expired, a.DeadLetteredUnstarted,
		a.EventFailedInvocations, a.EventSentToDeadLetterQueue, a.EventFailedToDeadLetterQueue, a.EventDeadLetterQueue} {
		if alarm != nil {
			all = append(all, alarm)
		}
	}
	return all
}

// handler is the consumer's handler as its metrics see it.
func (c *idempotentConsumer) handler() monitor.Handler {
	return monitor.Handler{Namespace: c.metricsNamespace, Consumer: *c.Node().Path(), Function: c.function, Timeout: c.timeout}
}

// addAlarms creates the alarms, each with AlarmAction.
func (c *idempotentConsumer) addAlarms(s *settings) {
	id := s.ID
	alarm := func(alarmID, description string, metric awscloudwatch.IMetric, threshold float64) awscloudwatch.Alarm {
		return monitor.NewAlarm(c, alarmID, description, metric, threshold, s.AlarmAction)
	}
	receives := "MaxReceiveCount"
	if s.maxReceiveCount > 0 {
		receives = fmt.Sprintf("%d", int(s.maxReceiveCount))
	}
	c.alarms = Alarms{
		DeadLetterQueue: alarm(ids.DeadLetterQueueAlarm,
			fmt.Sprintf("%s: messages the consumer failed to process %s times are in the dead-letter queue.", id, receives),
			c.MetricDeadLetterMessages(nil), 0),
		OldestMessage: alarm(ids.OldestMessageAlarm,
			fmt.Sprintf("%s: the oldest message in the queue is older than %s; the consumer is not keeping up.", id, contract.Format(s.oldestMessageAge)),
			c.MetricOldestMessageAge(nil), s.oldestMessageAge.Seconds()),
		Errors: alarm(ids.ErrorsAlarm,
			fmt.Sprintf("%s: invocations failed as a whole (records reported as batch item failures are not errors).", id),
			c.MetricErrors(nil), 0),
		Throttles: alarm(ids.ThrottlesAlarm,
			fmt.Sprintf("%s: invocations were throttled.", id),
			c.MetricThrottles(nil), 0),
		PayloadMismatch: alarm(ids.PayloadMismatchAlarm,
			fmt.Sprintf("%s: a fact's key arrived with another payload than the one recorded; the effect did not run and the message goes to the dead-letter queue. A producer reuses keys for other facts, or PayloadIgnore misses a field that changes between retries.", id),
			c.MetricOutcome(outcome.Mismatch, nil), 0),
		LeaseLost: alarm(ids.LeaseLostAlarm,
			fmt.Sprintf("%s: an effect outlived its lease and another worker took the fact over, so the effect may have run twice. Raise Timeout (and LeaseMax), or make the effect faster.", id),
			c.MetricOutcome(outcome.LeaseLost, nil), 0),
		BadInput: alarm(ids.BadInputAlarm,
			fmt.Sprintf("%s: the handler refused messages no retry can fix (not JSON, no key, too large, refused by the key function); they go to the dead-letter queue.", id),
			c.MetricOutcome(outcome.BadInput, nil), 0),
		Expired: alarm(ids.ExpiredAlarm,
			fmt.Sprintf("%s: the handler refused messages as old as the business window (Window %s, less the clock-skew margin): their facts' records may have left the window, so their effects did not run, since they may have run already; they go to the dead-letter queue. A backlog, an outage or a late redelivery kept them in the queue that long. Redrive one only once its effect is known not to have run (a raw message then runs; one in an SNS envelope expires again).", id, contract.Format(s.Runtime.Window)),
			c.MetricOutcome(outcome.Expired, nil), 0),
		DeadLetteredUnstarted: alarm(ids.DeadLetteredUnstartedAlarm,
			fmt.Sprintf("%s: messages reached the dead-letter queue without their effect ever having run: not started on their last receive, too close to the invocation's deadline or, on a FIFO queue, behind a failing message of their group. Fix the cause, then redrive them.%s", id, unknownReceives(s)),
			c.MetricDeadLetteredUnstarted(nil), 0),
	}
	if c.subDLQ != nil {
		c.alarms.SubscriptionDeadLetterQueue = alarm(ids.SubscriptionDLQAlarm,
			fmt.Sprintf("%s: SNS could not deliver messages into the queue; they are in the subscription dead-letter queue.", id),
			c.MetricSubscriptionDeadLetterMessages(nil), 0)
	}
}

// unknownReceives is what the dead-lettered-unstarted alarm's description
// adds when the handler cannot count: an imported queue given without
// MaxReceiveCount.
func unknownReceives(s *settings) string {
	if s.maxReceiveCount > 0 {
		return ""
	}
	return " The queue's maxReceiveCount is unknown (an imported queue without MaxReceiveCount), so the handler does not count these and this alarm cannot fire: declare MaxReceiveCount."
}

// MetricOutcome is the number of records of the handler's batches that
// ended with outcome (sum), from the Embedded Metric Format line the handler
// writes per batch, in MetricsNamespace with the dimensions Consumer, the
// consumer's construct path, and Region, the stack's. It panics for a value that is not an outcome.
func (c *idempotentConsumer) MetricOutcome(outcome outcome.Outcome, props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	m := c.handler().Outcome(outcome, props)
	if m == nil {
		panic(fmt.Sprintf("IdempotentConsumer %s: MetricOutcome(%d): not an outcome; give one of outcome.Outcomes()", *c.Node().Path(), int(outcome)))
	}
	return m
}

// MetricDeadLetteredUnstarted is the number of records the handler did not
// start on their message's last receive (sum), from its Embedded Metric
// Format line, in MetricsNamespace with the dimensions Consumer and Region.
func (c *idempotentConsumer) MetricDeadLetteredUnstarted(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.handler().DeadLetteredUnstarted(props)
}

// MetricBatchDuration is the time the handler took over a batch, in
// milliseconds (maximum), from its Embedded Metric Format line.
func (c *idempotentConsumer) MetricBatchDuration(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.handler().BatchDuration(props)
}

func (c *idempotentConsumer) MetricDeadLetterMessages(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.dlq.MetricApproximateNumberOfMessagesVisible(monitor.WithStatistic(props, "Maximum"))
}

func (c *idempotentConsumer) MetricSubscriptionDeadLetterMessages(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	if c.subDLQ == nil {
		return nil
	}
	return c.subDLQ.MetricApproximateNumberOfMessagesVisible(monitor.WithStatistic(props, "Maximum"))
}

func (c *idempotentConsumer) MetricOldestMessageAge(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.queue.MetricApproximateAgeOfOldestMessage(monitor.WithStatistic(props, "Maximum"))
}

func (c *idempotentConsumer) MetricErrors(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.handler().Errors(props)
}

func (c *idempotentConsumer) MetricThrottles(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.handler().Throttles(props)
}

func (c *idempotentConsumer) MetricDuration(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.handler().Duration(props)
}
