package consumer

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/family"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// resolve computes the settings and checks them: the settings, or an error
// that lists every problem.
func (p *IdempotentConsumerProps) resolve(id *string) (*settings, error) {
	var name string
	if id != nil {
		name = *id
	}
	if p == nil {
		p = &IdempotentConsumerProps{}
	}
	s, problems := p.compute(name)
	if err := family.Fail(familyKind, name, append(problems, p.problems(s)...)); err != nil {
		return nil, err
	}
	return s, nil
}

// problems are every rule the props and their settings break: the
// family's shared rules (family.Rules: the table and its design, the
// function, the runtime contract), then the consumer's own, in the order
// the refusal lists them. Each rule is pure: it reads the props and the
// settings and writes neither.
func (p *IdempotentConsumerProps) problems(s *settings) []string {
	problems := s.Problems()
	problems = append(problems, p.sourceProblems(s)...) // source.go
	problems = append(problems, p.fifoProblems(s)...)
	problems = append(problems, p.queueProblems(s)...)
	problems = append(problems, p.eventSourceProblems(s)...)
	r := s.Runtime
	if topicMax := s.topicMaxBytes; s.topicMaxKnown && topicMax > float64(r.MaxMessageBytes) {
		problems = append(problems, fmt.Sprintf("Topic accepts messages of up to %s bytes (its MaximumMessageSize), more than MaxMessageBytes %d: a message in between would be published and then refused by the handler on every delivery, until the dead-letter queue takes it; set MaxMessageBytes to %s, or lower the topic's MaximumMessageSize", formatNumber(topicMax), r.MaxMessageBytes, formatNumber(topicMax)))
	}
	if s.oldestMessageAge <= 0 {
		problems = append(problems, fmt.Sprintf("OldestMessageAlarmThreshold %s must be positive (default %s)", contract.Format(s.oldestMessageAge), contract.Format(defaultOldestMessageAge)))
	}
	return append(problems, p.refusalProblems(s)...) // refusals.go
}

// eventSourceProblems checks the event source's batches, window and
// concurrency (a FIFO queue's rules replace the standard queue's).
func (p *IdempotentConsumerProps) eventSourceProblems(s *settings) []string {
	var problems []string
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	if s.batchSize < 1 || s.batchSize > maxBatchSize {
		bad("BatchSize %d is out of range; give a whole number from 1 to %d", s.batchSize, maxBatchSize)
	}
	if s.fifo.queue {
		problems = append(problems, p.fifoEventSourceProblems(s.batchSize)...)
	} else if p.MaxBatchingWindow == nil {
		if s.batchSize > maxBatchWithoutWindow {
			bad("BatchSize %d needs a MaxBatchingWindow: the SQS event source takes at most %d records per batch without one; set MaxBatchingWindow (for example awscdk.Duration_Seconds(jsii.Number(5))), or give a BatchSize of at most %d",
				s.batchSize, maxBatchWithoutWindow, maxBatchWithoutWindow)
		}
	} else if w, ok := concreteDuration(p.MaxBatchingWindow); !ok {
		bad("MaxBatchingWindow is a token that CDK resolves only at deployment; give a concrete duration such as awscdk.Duration_Seconds(jsii.Number(5))")
	} else if w > family.MaxBatchingWindow {
		bad("MaxBatchingWindow %s is above the SQS event source's maximum of %s; give at most %s", contract.Format(w), contract.Format(family.MaxBatchingWindow), contract.Format(family.MaxBatchingWindow))
	}
	if p.MaxConcurrency != nil {
		if mc := *p.MaxConcurrency; !isInt(mc) || mc < 2 || mc > 1000 {
			bad("MaxConcurrency %v is out of range: the SQS event source accepts a whole number from 2 to 1000; set it in that range, or leave it nil for no limit", mc)
		}
	}
	if p.ReservedConcurrentExecutions != nil {
		rc := *p.ReservedConcurrentExecutions
		if p.MaxConcurrency != nil && rc < *p.MaxConcurrency {
			bad("ReservedConcurrentExecutions %v is below MaxConcurrency %v, so the event source would start invocations that are throttled (and their messages would count receives towards the dead-letter queue); give ReservedConcurrentExecutions at least %v, or lower MaxConcurrency", rc, *p.MaxConcurrency, *p.MaxConcurrency)
		}
	}
	return problems
}

// snsDefaultMaxMessageBytes is the MaximumMessageSize of a topic that does
// not set it.
const snsDefaultMaxMessageBytes = 262144

// topicMaxMessageBytes returns the MaximumMessageSize of topic when the app
// defines the topic (an awssns.Topic, not an imported one) with a concrete
// value or none (SNS's default). known is false when it cannot be told.
func topicMaxMessageBytes(topic awssns.ITopic) (size float64, known bool) {
	cfn, ok := topic.Node().DefaultChild().(awssns.CfnTopic)
	if !ok || cfn == nil {
		return 0, false
	}
	n := cfn.MaximumMessageSize()
	switch {
	case n == nil:
		return snsDefaultMaxMessageBytes, true
	case *awscdk.Token_IsUnresolved(n):
		return 0, false
	}
	return *n, true
}
