package consumer

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawsevents"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/monitor"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/nag"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// queueTarget is the rule's target: the consumer's queue, with the
// target's dead-letter queue, retry policy and (FIFO) message group. It is
// written here rather than with aws-cdk-lib's targets.SqsQueue, which
// writes the queue's policy itself and drops its aws:SourceArn condition
// when the queue has a customer-managed key (aws-cdk issue #11158): the
// consumer writes both policies (addRule), conditioned on the rule.
type queueTarget struct {
	queue, dlq awssqs.IQueue
	src        source
}

// Bind implements awsevents.IRuleTarget.
func (t *queueTarget) Bind(_ interfacesawsevents.IRuleRef, _ *string) *awsevents.RuleTargetConfig {
	cfg := &awsevents.RuleTargetConfig{
		Arn:              t.queue.QueueArn(),
		DeadLetterConfig: &awsevents.CfnRule_DeadLetterConfigProperty{Arn: t.dlq.QueueArn()},
		RetryPolicy: &awsevents.CfnRule_RetryPolicyProperty{
			MaximumRetryAttempts:     jsii.Number(float64(t.src.retryAttempts)),
			MaximumEventAgeInSeconds: jsii.Number(t.src.maxEventAge.Seconds()),
		},
		TargetResource: t.queue,
	}
	if t.src.messageGroupID != "" {
		cfg.SqsParameters = &awsevents.CfnRule_SqsParametersProperty{MessageGroupId: jsii.String(t.src.messageGroupID)}
	}
	return cfg
}

// addRule creates the rule on the bus (the default bus when none is
// given), its target dead-letter queue, the queue policies that let
// EventBridge send from this rule alone, and the key policy statement of a
// customer-managed key.
func (c *idempotentConsumer) addRule(s *settings) {
	src := s.source
	c.eventDLQ = awssqs.NewQueue(c, jsii.String(ids.EventDeadLetterQueue), s.eventDLQProps)
	nag.Suppress(c.eventDLQ, true,
		nag.Rule{ID: "AwsSolutions-SQS3", Reason: "This queue is the dead-letter queue of the EventBridge rule's target (DeadLetterConfig); a dead-letter queue has no dead-letter queue of its own."},
		nag.Rule{ID: "Serverless-SQSRedrivePolicy", Reason: "This queue is the dead-letter queue of the EventBridge rule's target (DeadLetterConfig); a dead-letter queue has no dead-letter queue of its own."})

	props := &awsevents.RuleProps{
		EventPattern: src.eventPattern,
		Description:  jsii.String(fmt.Sprintf("Delivers the events of idempotent consumer %s to its queue.", *c.Node().Path())),
	}
	if src.eventBus != nil {
		props.EventBus = src.eventBus
	}
	c.rule = awsevents.NewRule(c, jsii.String(ids.Rule), props)
	c.rule.AddTarget(&queueTarget{queue: c.queue, dlq: c.eventDLQ, src: src})

	// EventBridge may send to the queue and to the target's dead-letter
	// queue from this rule only (aws:SourceArn): the queue policy depends
	// on the rule, the rule on the queues, and nothing on the policy, so
	// there is no cycle, with or without a customer-managed key.
	for _, q := range []awssqs.IQueue{c.queue, c.eventDLQ} {
		q.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("EventBridgeRuleSends"),
			Effect:     awsiam.Effect_ALLOW,
			Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("events.amazonaws.com"), nil)},
			Actions:    jsii.Strings("sqs:SendMessage"),
			Resources:  jsii.Strings(*q.QueueArn()),
			Conditions: &map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": c.rule.RuleArn()}},
		}))
	}
	// A customer-managed key lets EventBridge encrypt what it sends, from
	// this account's rules (aws:SourceAccount, as EventBridge's key policy
	// guidance advises: eb-encryption-key-policy). The rule's ARN is not
	// named: the key would then depend on the rule, which depends on the
	// queue, which depends on the key (aws-cdk issue #11158).
	for _, key := range queueKeys(c.queue, c.eventDLQ) {
		key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("EventBridgeRulesOfTheAccountEncrypt"),
			Effect:     awsiam.Effect_ALLOW,
			Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("events.amazonaws.com"), nil)},
			Actions:    jsii.Strings("kms:GenerateDataKey*", "kms:Decrypt"),
			Resources:  jsii.Strings("*"),
			Conditions: &map[string]any{"StringEquals": map[string]any{"aws:SourceAccount": awscdk.Stack_Of(c).Account()}},
		}), jsii.Bool(true))
	}
}

// queueKeys are the distinct customer-managed keys of the queues the app
// defines (an imported key's policy cannot be changed).
func queueKeys(queues ...awssqs.IQueue) []awskms.IKey {
	var keys []awskms.IKey
	seen := map[string]bool{}
	for _, q := range queues {
		key := q.EncryptionMasterKey()
		if key == nil {
			continue
		}
		if _, ok := key.Node().DefaultChild().(awskms.CfnKey); !ok {
			continue
		}
		if p := *key.Node().Path(); !seen[p] {
			seen[p] = true
			keys = append(keys, key)
		}
	}
	return keys
}

// ruleMetric is one of the rule's metrics in AWS/Events: with the
// dimension RuleName alone on the default bus, with EventBusName too on a
// custom bus (eb-monitoring).
func (c *idempotentConsumer) ruleMetric(name string, props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	if c.rule == nil {
		return nil
	}
	dims := map[string]*string{"RuleName": c.rule.RuleName()}
	if c.eventBusName != nil {
		// A custom bus's rule's Ref (CDK's RuleName) is "<bus>|<rule>", not
		// the name the metrics carry
		// (cloudformation-coverage-roadmap#1131).
		dims["RuleName"] = awscdk.Fn_Select(jsii.Number(1), awscdk.Fn_Split(jsii.String("|"), c.rule.RuleName(), nil))
		dims["EventBusName"] = c.eventBusName
	}
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace:     jsii.String("AWS/Events"),
		MetricName:    jsii.String(name),
		DimensionsMap: &dims,
	}).With(monitor.WithStatistic(props, "Sum"))
}

// MetricEventFailedInvocations is the number of events the rule failed to
// deliver to the queue for good (sum; nil without an EventBridge source).
func (c *idempotentConsumer) MetricEventFailedInvocations(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.ruleMetric("FailedInvocations", props)
}

// MetricEventsSentToDeadLetterQueue is the number of events the rule sent
// to its target's dead-letter queue (sum; nil without an EventBridge
// source).
func (c *idempotentConsumer) MetricEventsSentToDeadLetterQueue(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.ruleMetric("InvocationsSentToDlq", props)
}

// MetricEventsFailedToBeSentToDeadLetterQueue is the number of events the
// rule could deliver neither to the queue nor to the dead-letter queue:
// lost (sum; nil without an EventBridge source).
func (c *idempotentConsumer) MetricEventsFailedToBeSentToDeadLetterQueue(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.ruleMetric("InvocationsFailedToBeSentToDlq", props)
}

// MetricEventDeadLetterMessages is the number of messages visible in the
// rule target's dead-letter queue (maximum; nil without an EventBridge
// source).
func (c *idempotentConsumer) MetricEventDeadLetterMessages(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	if c.eventDLQ == nil {
		return nil
	}
	return c.eventDLQ.MetricApproximateNumberOfMessagesVisible(monitor.WithStatistic(props, "Maximum"))
}

// addRuleAlarms adds the alarms of an EventBridge source.
func (c *idempotentConsumer) addRuleAlarms(s *settings) {
	alarm := func(alarmID, description string, metric awscloudwatch.IMetric) awscloudwatch.Alarm {
		return monitor.NewAlarm(c, alarmID, description, metric, 0, s.AlarmAction)
	}
	id := s.ID
	c.alarms.EventFailedInvocations = alarm(ids.EventFailedInvocationsAlarm,
		fmt.Sprintf("%s: the EventBridge rule failed to deliver events to the queue for good (after its retry policy: %d attempts, %s); they went to the target's dead-letter queue if it could take them.", id, s.source.retryAttempts, contract.Format(s.source.maxEventAge)),
		c.MetricEventFailedInvocations(nil))
	c.alarms.EventSentToDeadLetterQueue = alarm(ids.EventSentToDeadLetterQueueAlarm,
		fmt.Sprintf("%s: the EventBridge rule sent events to its target's dead-letter queue: the queue refused them (its policy, its key, its size) or was unavailable past the retry policy. Fix the cause, then send them to the queue again.", id),
		c.MetricEventsSentToDeadLetterQueue(nil))
	c.alarms.EventFailedToDeadLetterQueue = alarm(ids.EventFailedToDeadLetterQueueAlarm,
		fmt.Sprintf("%s: the EventBridge rule could deliver events neither to the queue nor to its target's dead-letter queue: those events are lost. Check both queues' policies and keys.", id),
		c.MetricEventsFailedToBeSentToDeadLetterQueue(nil))
	c.alarms.EventDeadLetterQueue = alarm(ids.EventDeadLetterQueueAlarm,
		fmt.Sprintf("%s: events EventBridge could not deliver into the queue are in the rule target's dead-letter queue.", id),
		c.MetricEventDeadLetterMessages(nil))
}
