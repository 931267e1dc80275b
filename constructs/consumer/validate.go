package consumer

import (
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// contractProp returns the prop that sets the variable name of the runtime
// contract (contract.Fields), for the message that refuses it in
// Environment, and whether name is one.
func contractProp(name string) (string, bool) {
	if name == contract.VersionVar {
		return "the construct itself", true
	}
	f, ok := contract.FieldOf(name)
	return f.Prop, ok
}

// Validate reports every problem of the props for a consumer with the given
// construct id, in one error, or nil. NewIdempotentConsumer calls it and
// panics with its error (the way CDK constructs fail at synth time); call it
// first to handle the error yourself. It does not build Entry, so what the
// construct reads from the bootstrap (its library's version, whether it
// makes transactional writes without a declared table) is checked by
// NewIdempotentConsumer and at synth, not here.
//
// The handler's runtime settings are checked by the same rules the handler
// applies at init (contract.Settings.Problems), so that what deploys starts.
func (p *IdempotentConsumerProps) Validate(id *string) error {
	_, err := p.resolve(id)
	return err
}

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
	problems = append(problems, p.problems(s)...)
	if len(problems) > 0 {
		return nil, fmt.Errorf("IdempotentConsumer %q: invalid props:\n  - %s", name, strings.Join(problems, "\n  - "))
	}
	return s, nil
}

// problems are every rule the props and their settings break, in the order
// the refusal lists them. Each rule is pure: it reads the props and the
// settings and writes neither.
func (p *IdempotentConsumerProps) problems(s *settings) []string {
	var problems []string
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	r := s.runtime

	problems = append(problems, p.sourceProblems(s)...) // source.go
	problems = append(problems, p.fifoProblems(s)...)
	if p.Entry == nil || strings.TrimSpace(*p.Entry) == "" {
		bad("Entry is required: set it to the directory of the handler's main package, for example jsii.String(\"app/cmd/charge\")")
	}
	problems = append(problems, p.queueProblems(s)...)
	problems = append(problems, p.functionProblems(s)...)
	if !isInt(s.memorySize) || s.memorySize < 128 || s.memorySize > 10240 {
		bad("MemorySize %v is out of range; give a whole number of MiB from 128 to 10240 (default %d)", s.memorySize, defaultMemorySize)
	}
	problems = append(problems, p.eventSourceProblems(s)...)
	if p.Table != nil {
		if p.Namespace == nil {
			bad("Table is given (shared-table mode), so Namespace is required: the default, the construct id in lower case, is the same for a consumer of that id in another stack, and two consumers with one namespace on one table suppress each other's facts; set Namespace to a name that is this consumer's alone")
		}
		problems = append(problems, table.Problems(p.Table, p.AcceptSingleRegionGuarantee != nil && *p.AcceptSingleRegionGuarantee)...)
	}
	problems = append(problems, p.designProblems(s)...) // design.go
	if topicMax := s.topicMaxBytes; s.topicMaxKnown && topicMax > float64(r.MaxMessageBytes) {
		bad("Topic accepts messages of up to %s bytes (its MaximumMessageSize), more than MaxMessageBytes %d: a message in between would be published and then refused by the handler on every delivery, until the dead-letter queue takes it; set MaxMessageBytes to %s, or lower the topic's MaximumMessageSize", formatNumber(topicMax), r.MaxMessageBytes, formatNumber(topicMax))
	}
	if s.oldestMessageAge <= 0 {
		bad("OldestMessageAlarmThreshold %s must be positive (default %s)", contract.Format(s.oldestMessageAge), contract.Format(defaultOldestMessageAge))
	}
	if p.Environment != nil {
		var refused []string
		for k := range *p.Environment {
			if _, ok := contractProp(k); ok {
				refused = append(refused, k)
			}
		}
		sort.Strings(refused)
		for _, k := range refused {
			prop, _ := contractProp(k)
			bad("Environment sets %s, a variable of the runtime contract that the construct sets itself; remove it from Environment and use %s instead", k, prop)
		}
	}
	checked := r
	if p.Namespace == nil && r.Namespace == "" {
		if p.Table == nil { // with a Table, the rule above says to set Namespace
			bad("the construct id %q gives no namespace: the default Namespace is the id in lower case without the characters a namespace cannot hold ('#', '*', '?', control characters), and none is left; set Namespace to a short name (for example \"orders\")", s.id)
		}
		checked.Namespace = "said-above" // the contract's other rules still apply
	}
	problems = append(problems, checked.Problems()...)
	problems = append(problems, p.refusalProblems(s)...) // refusals.go, txtables.go
	return problems
}

// defaultNamespace is the Namespace of a consumer that sets none: its
// construct id in lower case, without the characters the contract refuses
// in a namespace (idempotency.NamespaceAllows), so that an id like
// "Reserve*Stock" gives "reservestock" rather than a refusal of a Namespace
// the user never set. It may be empty (an id of such characters alone).
func defaultNamespace(id string) string {
	return strings.Map(func(r rune) rune {
		if !idempotency.NamespaceAllows(r) {
			return -1
		}
		return r
	}, strings.ToLower(id))
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
	} else if w > maxBatchingWindow {
		bad("MaxBatchingWindow %s is above the SQS event source's maximum of %s; give at most %s", contract.Format(w), contract.Format(maxBatchingWindow), contract.Format(maxBatchingWindow))
	}
	if p.MaxConcurrency != nil {
		if mc := *p.MaxConcurrency; !isInt(mc) || mc < 2 || mc > 1000 {
			bad("MaxConcurrency %v is out of range: the SQS event source accepts a whole number from 2 to 1000; set it in that range, or leave it nil for no limit", mc)
		}
	}
	if p.ReservedConcurrentExecutions != nil {
		rc := *p.ReservedConcurrentExecutions
		if !isInt(rc) || rc < 0 {
			bad("ReservedConcurrentExecutions %v is out of range; give a whole number of at least 0, or leave it nil for none", rc)
		}
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
