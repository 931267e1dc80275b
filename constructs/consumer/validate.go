package consumer

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
)

// Defaults of the props that are the construct's own, as documented on
// IdempotentConsumerProps; the runtime settings' are package contract's.
const (
	defaultMaxReceiveCount  = 5
	defaultMemorySize       = 256
	defaultTimeout          = 30 * time.Second
	defaultOldestMessageAge = 15 * time.Minute
	visibilityTimeoutFactor = 6
	maxVisibilityTimeout    = 12 * time.Hour
	// maxBatchingWindow is the SQS event source's longest batching window.
	maxBatchingWindow = 5 * time.Minute
	// maxBatchWithoutWindow is the largest batch the SQS event source takes
	// without a batching window.
	maxBatchWithoutWindow = 10
)

// tablePlaceholder stands for the table's name while the props are checked:
// the name is a token, known once the table exists.
const tablePlaceholder = "(the idempotency table)"

// contractProps maps each variable of the runtime contract to the prop that
// sets it, for the message that refuses it in Environment.
var contractProps = map[string]string{
	contract.VersionVar:          "the construct itself",
	contract.TableVar:            "Table",
	contract.NamespaceVar:        "Namespace",
	contract.WindowVar:           "Window",
	contract.TTLAfterWindowVar:   "TTLAfterWindow",
	contract.TimeoutVar:          "Timeout",
	contract.LeaseMaxVar:         "LeaseMax",
	contract.FinishBudgetVar:     "FinishBudget",
	contract.CacheSizeVar:        "CacheSize",
	contract.PayloadIgnoreVar:    "PayloadIgnore",
	contract.KeySecretVar:        "HashKeys",
	contract.BatchSizeVar:        "BatchSize",
	contract.BatchConcurrencyVar: "BatchConcurrency",
	contract.MinRemainingVar:     "MinRemaining",
	contract.MaxMessageBytesVar:  "MaxMessageBytes",
	contract.DeliveryVar:         "RawMessageDelivery",
	contract.FIFOVar:             "FifoTopic (or StandardQueue)",
	contract.ConsumerVar:         "the construct id",
	contract.MetricsNamespaceVar: "MetricsNamespace",
}

// settings are the props with their defaults applied, computed once by
// resolve: the handler's runtime settings, and the construct's own.
type settings struct {
	// runtime is written into the function's environment; its Table is
	// tablePlaceholder until the construct sets the table's name.
	runtime           contract.Settings
	visibilityTimeout time.Duration
	maxReceiveCount   float64
	memorySize        float64
	oldestMessageAge  time.Duration
	fifo              fifo
	// architecture is the function's, and goarch the GOARCH its bootstrap
	// is built for ("" for an architecture the construct does not build).
	architecture awslambda.Architecture
	goarch       string
	tracing      awslambda.Tracing
}

// Validate reports every problem of the props for a consumer with the given
// construct id, in one error, or nil. NewIdempotentConsumer calls it and
// panics with its error (the way CDK constructs fail at synth time); call it
// first to handle the error yourself. It does not build Entry.
//
// The handler's runtime settings are checked by the same rules the handler
// applies at init (contract.Settings.Problems), so that what deploys starts.
func (p *IdempotentConsumerProps) Validate(id *string) error {
	_, err := p.resolve(id)
	return err
}

// resolve applies the defaults and checks the props.
func (p *IdempotentConsumerProps) resolve(id *string) (*settings, error) {
	var name string
	if id != nil {
		name = *id
	}
	if p == nil {
		p = &IdempotentConsumerProps{}
	}
	s, problems := p.settings(name)
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	r := s.runtime

	if p.Entry == nil || strings.TrimSpace(*p.Entry) == "" {
		bad("Entry is required: set it to the directory of the handler's main package, for example jsii.String(\"lambda/cmd/charge\")")
	}
	problems = append(problems, p.queueProblems(s)...)
	problems = append(problems, p.functionProblems(s)...)
	if !isInt(s.memorySize) || s.memorySize < 128 || s.memorySize > 10240 {
		bad("MemorySize %v is out of range; give a whole number of MiB from 128 to 10240 (default %d)", s.memorySize, defaultMemorySize)
	}
	if s.fifo.queue {
		problems = append(problems, p.fifoEventSourceProblems(r.BatchSize)...)
	} else if p.MaxBatchingWindow == nil {
		if r.BatchSize > maxBatchWithoutWindow {
			bad("BatchSize %d needs a MaxBatchingWindow: the SQS event source takes at most %d records per batch without one; set MaxBatchingWindow (for example awscdk.Duration_Seconds(jsii.Number(5))), or give a BatchSize of at most %d",
				r.BatchSize, maxBatchWithoutWindow, maxBatchWithoutWindow)
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
	if p.Table != nil {
		if p.Namespace == nil {
			bad("Table is given (shared-table mode), so Namespace is required: the default, the construct id in lower case, is the same for a consumer of that id in another stack, and two consumers with one namespace on one table suppress each other's facts; set Namespace to a name that is this consumer's alone")
		}
		problems = append(problems, table.Problems(p.Table, p.AcceptSingleRegionGuarantee != nil && *p.AcceptSingleRegionGuarantee)...)
	}
	if p.Topic != nil {
		if topicMax, known := topicMaxMessageBytes(p.Topic); known && topicMax > float64(r.MaxMessageBytes) {
			bad("Topic accepts messages of up to %s bytes (its MaximumMessageSize), more than MaxMessageBytes %d: a message in between would be published and then refused by the handler on every delivery, until the dead-letter queue takes it; set MaxMessageBytes to %s, or lower the topic's MaximumMessageSize", formatNumber(topicMax), r.MaxMessageBytes, formatNumber(topicMax))
		}
	}
	if s.oldestMessageAge <= 0 {
		bad("OldestMessageAlarmThreshold %s must be positive (default %s)", contract.Format(s.oldestMessageAge), contract.Format(defaultOldestMessageAge))
	}
	if p.Environment != nil {
		var refused []string
		for k := range *p.Environment {
			if _, ok := contractProps[k]; ok {
				refused = append(refused, k)
			}
		}
		sort.Strings(refused)
		for _, k := range refused {
			bad("Environment sets %s, a variable of the runtime contract that the construct sets itself; remove it from Environment and use %s instead", k, contractProps[k])
		}
	}
	problems = append(problems, r.Problems()...)

	if len(problems) > 0 {
		return nil, fmt.Errorf("IdempotentConsumer %q: invalid props:\n  - %s", name, strings.Join(problems, "\n  - "))
	}
	return s, nil
}

// settings applies the defaults to the props, without checking the rules:
// the settings as the construct would deploy them, and the props it could
// not read (tokens, fractions where whole numbers are needed).
func (p *IdempotentConsumerProps) settings(name string) (*settings, []string) {
	var rd propReader
	timeout := rd.duration("Timeout", p.Timeout, defaultTimeout)
	batchSize := rd.count("BatchSize", p.BatchSize, contract.DefaultBatchSize)
	r := contract.Defaults(timeout, batchSize)
	r.Table = tablePlaceholder
	r.Namespace = strings.ToLower(strings.ReplaceAll(name, "#", ""))
	if p.Namespace != nil {
		r.Namespace = *p.Namespace
	}
	r.Window = rd.duration("Window", p.Window, r.Window)
	r.TTLAfterWindow = rd.duration("TTLAfterWindow", p.TTLAfterWindow, r.TTLAfterWindow)
	r.LeaseMax = rd.duration("LeaseMax", p.LeaseMax, r.LeaseMax)
	r.FinishBudget = rd.duration("FinishBudget", p.FinishBudget, r.FinishBudget)
	r.MinRemaining = rd.duration("MinRemaining", p.MinRemaining, contract.DefaultMinRemaining(r.FinishBudget))
	r.CacheSize = rd.count("CacheSize", p.CacheSize, r.CacheSize)
	r.BatchConcurrency = rd.count("BatchConcurrency", p.BatchConcurrency, r.BatchConcurrency)
	r.MaxMessageBytes = rd.count("MaxMessageBytes", p.MaxMessageBytes, r.MaxMessageBytes)
	if p.RawMessageDelivery != nil && *p.RawMessageDelivery {
		r.Delivery = contract.Raw
	}
	fifo, fifoProblems := p.fifoKind()
	rd.problems = append(rd.problems, fifoProblems...)
	r.FIFO = fifo.queue
	if p.PayloadIgnore != nil {
		for _, f := range *p.PayloadIgnore {
			if f == nil {
				r.PayloadIgnore = append(r.PayloadIgnore, "")
			} else {
				r.PayloadIgnore = append(r.PayloadIgnore, *f)
			}
		}
	}
	r.Consumer = name
	r.MetricsNamespace = stringOr(p.MetricsNamespace, r.MetricsNamespace)
	s := &settings{
		runtime:          r,
		maxReceiveCount:  numberOr(p.MaxReceiveCount, defaultMaxReceiveCount),
		memorySize:       numberOr(p.MemorySize, defaultMemorySize),
		oldestMessageAge: rd.duration("OldestMessageAlarmThreshold", p.OldestMessageAlarmThreshold, defaultOldestMessageAge),
		fifo:             fifo,
	}
	s.visibilityTimeout = rd.duration("VisibilityTimeout", p.VisibilityTimeout, 0)
	s.architecture = p.Architecture
	if s.architecture == nil {
		s.architecture = awslambda.Architecture_ARM_64()
	}
	s.goarch, _ = goarchOf(*s.architecture.Name())
	s.tracing = p.Tracing
	if s.tracing == "" {
		s.tracing = awslambda.Tracing_ACTIVE
	}
	return s, rd.problems
}

// propReader reads props that must be concrete numbers and durations,
// collecting the ones it cannot read.
type propReader struct{ problems []string }

// duration returns d, or def when d is nil or cannot be read.
func (rd *propReader) duration(name string, d awscdk.Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	v, ok := concreteDuration(d)
	if !ok {
		rd.problems = append(rd.problems, fmt.Sprintf("%s is a token that CDK resolves only at deployment, but the construct needs its value to check it against the other settings and write it into the handler's environment; give a concrete duration such as awscdk.Duration_Seconds(jsii.Number(30))", name))
		return def
	}
	return v
}

// count returns n as a whole number, or def when n is nil or cannot be
// read.
func (rd *propReader) count(name string, n *float64, def int) int {
	switch {
	case n == nil:
		return def
	case *awscdk.Token_IsUnresolved(n):
		rd.problems = append(rd.problems, fmt.Sprintf("%s is a token that CDK resolves only at deployment, but the construct needs its value; give a number", name))
		return def
	case !isInt(*n) || math.Abs(*n) > math.MaxInt32:
		rd.problems = append(rd.problems, fmt.Sprintf("%s %s is not a whole number in range; give a whole number", name, formatNumber(*n)))
		return def
	}
	return int(*n)
}

// concreteDuration converts a duration that is not a token to a
// time.Duration.
func concreteDuration(d awscdk.Duration) (time.Duration, bool) {
	if *d.IsUnresolved() {
		return 0, false
	}
	return time.Duration(*d.ToMilliseconds(nil)) * time.Millisecond, true
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

func numberOr(n *float64, def float64) float64 {
	if n == nil {
		return def
	}
	return *n
}

func stringOr(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}

// formatNumber writes f in plain decimal ("1048576", not "1.048576e+06").
func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func isInt(f float64) bool { return f == math.Trunc(f) && !math.IsInf(f, 0) }
